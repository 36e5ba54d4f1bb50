"""An action's whole life over the HTTP API (``/api/v1/worlds/{world}/actions/{id}/<verb>``)
on the real bridge served in the test's process over real TCP, beside real Socket.IO
clients: each verb is the socket intent of the same name, acting as the GM, with the path
naming the action."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
from pydantic import TypeAdapter

from bridge.service import protocol
from bridge.service.protocol import (
    ActionCard,
    ActionData,
    ActionOddsData,
    HistoryPage,
    WorldStateData,
)
from bridge.transport.http_api import ROUTES, openapi_document
from tests.bridge_process import Bridge, BridgeProcess, add_world
from tests.conftest import API, bearer, world_api
from tests.in_process import InProcessBridge, serving_in_thread
from tests.seats import Seat, queue
from tests.test_http_api import overcome

# Every socket intent on a started action; action.start and action.odds name none.
ACTION_VERBS = [
    event
    for event, model in protocol.INTENTS.items()
    if event.startswith("action.") and issubclass(model, protocol.ActionRef)
]


def verb_url(bridge: Bridge, world_id: str, action_id: str, event: str) -> str:
    verb = event.removeprefix("action.").replace("_", "-")
    return f"{bridge.url}{API}/{world_id}/actions/{action_id}/{verb}"


async def started(gm: Seat, request_id: str) -> str:
    """The id of an open action the GM started over the socket: Brousseau's overcome
    against Average (+1), rolled with all dice blank (a provisional succeed)."""
    await queue(gm, [0, 0, 0, 0])
    return str((await gm.card("action.start", **overcome(request_id, 1)))["action_id"])


async def test_a_passive_overcome_runs_to_its_end_over_http_alone(
    bridge: BridgeProcess, world: tuple[str, str], table: dict[str, Seat]
) -> None:
    # R1.2 R3.1 R4.1 R4.2 R4.4: start, invoke for +2 with a fate point, pass, resolved.
    gm, paul = table["gm"], table["paul"]
    await queue(gm, [0, 0, 0, 0])
    async with world_api(bridge, world) as http:
        # R1.1 R1.2: the odds before the roll are the socket's, and commit nothing.
        ask = {"request_id": "life-0", "actor_id": "brousseau", "skill": "Athletics"}
        odds = await http.post("/actions/odds", json={**ask, "opposition": 4})
        assert odds.status_code == 200, odds.text
        assert odds.json() == await gm.ok("action.odds", **{**ask, "opposition": 4})
        assert ActionOddsData.model_validate(odds.json()).modifier == 3
        opened = await http.post("/actions", json=overcome("life-1", 4))
        assert opened.status_code == 200, opened.text
        action_id = TypeAdapter(ActionData).validate_python(opened.json())["action_id"]
        invoke = {
            "request_id": "life-2",
            "invoker": "brousseau",
            "aspect_id": "brousseau.hc",
            "payment": "fate_point",
        }
        invoked = await http.post(
            verb_url(bridge, world[0], action_id, "action.invoke"), json=invoke
        )
        assert invoked.status_code == 200, invoked.text
        card = TypeAdapter(ActionCard).validate_python(invoked.json()["card"])
        total = card["actor"]["total"]
        assert total is not None and total["value"] == 5  # 3 + 0 + 2
        assert card["shifts"] == 1 and card["state"] == "invoking"
        # DESIGN: a repeated request_id answers as the first time and changes nothing.
        again = await http.post(verb_url(bridge, world[0], action_id, "action.invoke"), json=invoke)
        assert again.status_code == 200 and again.json() == invoked.json()
        passed = await http.post(
            verb_url(bridge, world[0], action_id, "action.pass"),
            json={"request_id": "life-3", "side": "actor"},
        )
        assert passed.status_code == 200, passed.text
        final = TypeAdapter(ActionData).validate_python(passed.json())
        assert final["action_id"] == action_id
        # The HTTP answer carries its card (only a socket ack leaves it to the card's emit).
        final_card = final["card"]
        assert final_card is not None
        assert final_card["state"] == "resolved" and final_card["outcome"] == "succeed"
        state = TypeAdapter(WorldStateData).validate_python((await http.get("/state")).json())
        assert state["open_actions"] == []
        people = {c["id"]: c for c in state["characters"]}
        assert people["brousseau"]["fate_points"] == 1  # one fate point, not two: paid once
        history = HistoryPage.model_validate((await http.get("/history")).json())
        (entry,) = history.entries
        assert entry.action_id == action_id and entry.outcome == "succeed"
        assert [i["aspect_name"] for i in entry.invokes] == ["Skeptical Ghost Hunter"]
    # Foundry hears every step like a socket intent's: the active GM's client writes it.
    for seat in (gm, paul):
        (emit,) = await seat.wait_for(
            "card", lambda e: e["card_id"] == final["card_id"] and e["card"]["state"] == "resolved"
        )
        assert emit["writer"] == "gm" and emit["card"] == passed.json()["card"]


async def test_a_players_proposal_is_confirmed_and_costed_over_http(
    bridge: BridgeProcess, world: tuple[str, str], strict_table: dict[str, Seat]
) -> None:
    # R2.1 Decision: the HTTP API is the GM, so it confirms (and changes) a player's rating;
    # R5.1 tie, R6.1: the tie turned into a success at a minor cost, the GM's cost.
    gm, paul = strict_table["gm"], strict_table["paul"]
    proposed = await paul.card("action.start", **overcome("p-1", -10))
    assert proposed["state"] == "confirming"
    action_id = proposed["action_id"]
    await queue(gm, [-1, 0, 0, 0])
    steps: list[tuple[str, dict[str, Any]]] = [
        ("action.confirm", {"passive_rating": 2}),
        ("action.pass", {"side": "actor"}),
        ("action.choose", {"choice": "succeed_at_cost"}),
        ("action.cost", {"kind": "npc_boost", "target_id": "ghoul", "aspect_name": "Smells Blood"}),
    ]
    cards = []
    async with world_api(bridge, world) as http:
        for n, (event, body) in enumerate(steps):
            url = verb_url(bridge, world[0], action_id, event)
            answer = await http.post(url, json={"request_id": f"gm-{n}", **body})
            assert answer.status_code == 200, (event, answer.text)
            cards.append(TypeAdapter(ActionCard).validate_python(answer.json()["card"]))
    confirmed, passed, chosen, costed = cards
    opposed = confirmed["opposition"]["total"]
    assert confirmed["proposal"] is None and opposed is not None
    assert opposed["value"] == 2  # the GM's number, not the player's -10
    assert passed["outcome"] == "tie" and passed["state"] == "choosing"
    assert chosen["state"] == "costing" and chosen["cost_severity"] == "minor"
    assert costed["state"] == "resolved" and costed["succeeded"] is True
    (emit,) = await paul.wait_for(
        "card", lambda e: e["card"]["action_id"] == action_id and e["card"]["state"] == "resolved"
    )
    assert emit["card"] == TypeAdapter(protocol.ActionCard).dump_python(costed, mode="json")


async def test_a_rule_refusal_is_409_and_changes_nothing(
    bridge: BridgeProcess, world: tuple[str, str], table: dict[str, Seat]
) -> None:
    # R4.4 R3.2: a resolved action is final; passing or confirming it again is refused.
    gm = table["gm"]
    action_id = await started(gm, "r-1")
    await gm.card("action.pass", action_id=action_id, side="actor")
    async with world_api(bridge, world) as http:
        before = (await http.get("/history")).json()
        for event, body in (
            ("action.pass", {"side": "actor"}),
            ("action.confirm", {}),
            ("action.roll", {}),
        ):
            url = verb_url(bridge, world[0], action_id, event)
            refused = await http.post(url, json={"request_id": f"again-{event}", **body})
            assert refused.status_code == 409, (event, refused.text)
            assert refused.json()["ok"] is False
            assert refused.json()["error"]["code"] == "wrong_state", refused.text
        assert (await http.get("/history")).json() == before


async def test_a_body_naming_another_action_is_422_and_changes_nothing(
    bridge: BridgeProcess, world: tuple[str, str], table: dict[str, Seat]
) -> None:
    first, second = [await started(table["gm"], f"m-{n}") for n in (1, 2)]
    url = verb_url(bridge, world[0], first, "action.pass")
    async with world_api(bridge, world) as http:
        for other in (second, "a999", "", None, 7):
            body = {"request_id": "m-3", "side": "actor", "action_id": other}
            refused = await http.post(url, json=body)
            assert refused.status_code == 422, (other, refused.text)
            assert refused.json()["error"]["code"] == "invalid"
            assert refused.json()["error"]["field"] == "action_id"
        state = (await http.get("/state")).json()
        assert state["open_actions"] == [first, second]
        # Naming the path's own action is fine; and the refused request_id was not used up.
        same = await http.post(url, json={"request_id": "m-3", "side": "actor", "action_id": first})
        assert same.status_code == 200 and same.json()["card"]["state"] == "resolved"
        assert same.json()["action_id"] == first


async def test_an_unknown_or_malformed_action_gets_what_the_socket_gets(
    bridge: BridgeProcess, world: tuple[str, str], table: dict[str, Seat]
) -> None:
    # The path's id is the intent's action_id: not_found is 404, a malformed id 422, with
    # the socket's own ack error for the same message.
    gm = table["gm"]
    cases: list[tuple[str, str, dict[str, Any], int]] = [
        ("a404", "action.pass", {"side": "actor"}, 404),
        ("a404", "action.hint_give", {"text": "The cellar door"}, 404),
        ("a404", "action.invoke", {"invoker": "gm", "aspect_id": "x", "payment": "free"}, 404),
        ("bad%20id", "action.pass", {"side": "actor"}, 422),
        ("a404", "action.pass", {"side": "both"}, 422),
        ("a404", "action.pass", {"side": "actor", "dice": [4, 4, 4, 4]}, 422),  # R1.1
        ("a404", "action.confirm", {"passive_rating": "4"}, 422),  # strict types
    ]
    async with world_api(bridge, world) as http:
        for n, (path_id, event, body, status) in enumerate(cases):
            message = {"request_id": f"u-{n}", **body}
            answer = await http.post(verb_url(bridge, world[0], path_id, event), json=message)
            assert answer.status_code == status, (path_id, event, answer.text)
            socket_id = path_id.replace("%20", " ")
            ack = await gm.client.call(
                event, {**message, "action_id": socket_id}, namespace="/fate"
            )
            assert answer.json() == ack, (path_id, event)
        not_an_object = await http.post(
            verb_url(bridge, world[0], "a404", "action.pass"), json=[{"side": "actor"}]
        )
        assert not_an_object.status_code == 422
        assert not_an_object.json()["error"]["code"] == "invalid"


async def test_the_gm_key_is_the_only_way_onto_an_action(
    bridge: BridgeProcess, world: tuple[str, str], table: dict[str, Seat]
) -> None:
    # DESIGN Trust: the HTTP API acts as the GM, so only the world's GM key opens it.
    gm = table["gm"]
    action_id = await started(gm, "k-1")
    other_key = add_world(bridge, "other")
    wrong = [{}, {"Authorization": world[1]}, bearer("not-the-key"), bearer(other_key)]
    body = {"request_id": "k-2", "side": "actor"}
    async with httpx.AsyncClient() as http:
        # Each verb with one kind of wrong key (all of them would overrun the bucket of
        # failed attempts, which answers 429 beyond 30).
        for n, event in enumerate(ACTION_VERBS):
            headers = wrong[n % len(wrong)]
            url = verb_url(bridge, world[0], action_id, event)
            answer = await http.post(url, json=body, headers=headers)
            assert answer.status_code == 401, (event, headers)
            assert answer.json()["error"]["code"] == "unauthorized"
            assert answer.headers["WWW-Authenticate"].startswith("Bearer")
        # The other world's key opens the other world only: this action is not there.
        elsewhere = verb_url(bridge, "other", action_id, "action.pass")
        answer = await http.post(elsewhere, json=body, headers=bearer(other_key))
        assert answer.status_code == 404 and answer.json()["error"]["code"] == "not_found"
    state = await gm.ok("world.state")
    assert state["open_actions"] == [action_id]


def test_the_action_routes_share_the_worlds_rate_limit(tmp_path: Path) -> None:
    with serving_in_thread(InProcessBridge(tmp_path), "--api-rate", "0.001") as process:
        key = add_world(process, "t")
        steps = [("action.pass", {"side": "actor"}), ("action.cancel", {}), ("action.hint", {})]
        answers = [
            httpx.post(
                verb_url(process, "t", "a1", event),
                json={"request_id": f"f{n}", **body},
                headers=bearer(key),
            )
            for n, (event, body) in enumerate([*steps, steps[0]])
        ]
        # The burst of three is the world's, whichever verbs spend it (no such action: 404).
        assert [a.status_code for a in answers] == [404, 404, 404, 429]
        assert answers[3].headers["Retry-After"] == "1"
        assert answers[3].json()["error"]["code"] == "rate_limited"


def test_the_openapi_document_lists_every_action_verb() -> None:
    document = openapi_document()
    schemas = document["components"]["schemas"]
    for event in ACTION_VERBS:
        verb = event.removeprefix("action.").replace("_", "-")
        operation = document["paths"][f"/api/v1/worlds/{{world_id}}/actions/{{action_id}}/{verb}"]
        post = operation["post"]
        assert event in post["summary"]
        assert [p["name"] for p in post["parameters"]] == ["world_id", "action_id"]
        assert set(post["responses"]) >= {"200", "401", "404", "409", "413", "422", "429"}
        answer = post["responses"]["200"]["content"]["application/json"]["schema"]
        assert answer == {"$ref": "#/components/schemas/ActionData"}
        ref = post["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        body = schemas[ref.rsplit("/", 1)[1]]
        intent = protocol.INTENTS[event].model_json_schema()
        # The intent's own message, but the action comes from the path.
        assert set(body["properties"]) == set(intent["properties"])
        assert "action_id" in intent["required"] and "action_id" not in body["required"]
        assert set(body["required"]) == set(intent["required"]) - {"action_id"}
        assert body["additionalProperties"] is False
    odds = document["paths"]["/api/v1/worlds/{world_id}/actions/odds"]["post"]
    assert odds["requestBody"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/ActionOdds"
    }
    served = {(route.method, route.path) for route in ROUTES}
    assert len(served) == len(ROUTES)  # no verb shadows another
    assert len(ACTION_VERBS) == 15  # with R13.11's interpose
