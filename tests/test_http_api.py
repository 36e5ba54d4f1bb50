"""The HTTP API (``/api/v1``) on the real bridge served in the test's process over real TCP,
beside real Socket.IO clients, and the webhooks it configures delivered by the real outbox
to a real local endpoint; the command line's ``world webhooks`` through its entry function."""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import TypeAdapter

from bridge.service.protocol import (
    ActionData,
    CharacterSummary,
    HistoryPage,
    SceneState,
    WorldStateData,
)
from bridge.service.protocol.http import WebhookCardEvent, WebhookList
from bridge.service.webhooks.signing import SIGNATURE_HEADER, TIMESTAMP_HEADER, verify
from tests.bridge_process import PROJECT_ROOT, BridgeProcess, add_world
from tests.conftest import API, bearer, world_api
from tests.in_process import InProcessBridge, run_cli, serving_in_thread
from tests.receiver import Receiver
from tests.seats import Seat, action_start, queue


def overcome(request_id: str, rating: int = 2) -> dict[str, Any]:
    """Brousseau's overcome against a passive ``rating``, under ``request_id``: an HTTP
    request carries its own id."""
    return action_start(rating=rating, request_id=request_id)


def test_the_served_openapi_document_is_the_committed_one(bridge: BridgeProcess) -> None:
    served = httpx.get(f"{bridge.url}/api/v1/openapi.json")
    assert served.status_code == 200
    committed = json.loads((PROJECT_ROOT / "schemas" / "openapi.json").read_text("utf-8"))
    assert served.json() == committed
    assert served.json()["openapi"] == "3.1.0"


async def test_an_action_started_over_http_is_the_socket_intent(
    bridge: BridgeProcess, world: tuple[str, str], table: dict[str, Seat]
) -> None:
    # R1.2 R3.1: the same rules path; DESIGN: a repeated request id changes nothing.
    gm, paul = table["gm"], table["paul"]
    await queue(gm, [1, 0, 0, 0])
    url = "/actions"
    async with world_api(bridge, world) as http:
        first = await http.post(url, json=overcome("http-1"))
        assert first.status_code == 200, first.text
        data = TypeAdapter(ActionData).validate_python(first.json())
        card = data["card"]
        assert card is not None  # an HTTP answer carries its card
        total = card["actor"]["total"]
        assert total is not None and total["value"] == 4
        assert card["state"] == "invoking"
        again = await http.post(url, json=overcome("http-1"))
        assert again.status_code == 200 and again.json() == first.json()
        state = TypeAdapter(WorldStateData).validate_python((await http.get("/state")).json())
        assert state["open_actions"] == [data["action_id"]]
    # Foundry hears it like any intent: the active GM's client writes the card.
    for seat in (gm, paul):
        (emit,) = await seat.wait_for("card", lambda e: e["card_id"] == data["card_id"])
        assert emit["writer"] == "gm" and emit["card"] == first.json()["card"]
    # And the action goes on from Foundry.
    resolved = await gm.card("action.pass", action_id=data["action_id"], side="actor")
    assert resolved["state"] == "resolved" and resolved["outcome"] == "succeed"


async def test_http_refuses_exactly_what_the_socket_refuses(
    bridge: BridgeProcess, world: tuple[str, str], table: dict[str, Seat]
) -> None:
    gm = table["gm"]
    bad_bodies = [
        {"request_id": "b1", "type": "overcome"},  # missing fields
        {**overcome("b2"), "dice": [1, 1, 1, 1]},  # unknown field: no client dice (R1.1)
        {**overcome("b3"), "type": "fireball"},
        {**overcome("b4"), "actor_id": "nobody"},
        {**overcome("b5"), "opposition": {"kind": "passive", "rating": "4"}},  # strict types
        {**overcome("b6"), "request_id": "has spaces"},
        [overcome("b7")],
    ]
    url = "/actions"
    async with world_api(bridge, world) as http:
        for body in bad_bodies:
            answer = await http.post(url, json=body)
            assert answer.status_code == 422, (body, answer.text)
            socket_ack = await gm.client.call("action.start", body, namespace="/fate")
            assert answer.json() == socket_ack, body
        state = (await http.get("/state")).json()
        assert state["open_actions"] == []


async def test_reads_of_state_characters_and_scene(
    bridge: BridgeProcess, world: tuple[str, str], table: dict[str, Seat]
) -> None:
    async with world_api(bridge, world) as http:
        state = TypeAdapter(WorldStateData).validate_python((await http.get("/state")).json())
        assert state["gm_fate_points"] == 2
        listed = (await http.get("/characters")).json()["characters"]
        assert [c["id"] for c in listed] == [c["id"] for c in state["characters"]]
        one = TypeAdapter(CharacterSummary).validate_python(
            (await http.get("/characters/margot")).json()
        )
        assert one["name"] == "Margot" and one["owners"] == ["anna"]
        missing = await http.get("/characters/nobody")
        assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
        scene = TypeAdapter(SceneState).validate_python((await http.get("/scene")).json())
        assert scene["scene"]["number"] == 1
        ended = await http.post("/scene/end", json={"request_id": "end-1"})
        assert ended.status_code == 200 and ended.json()["ended_scene"] == 1
        repeated = await http.post("/scene/end", json={"request_id": "end-1"})
        assert repeated.json() == ended.json()
        scene = TypeAdapter(SceneState).validate_python((await http.get("/scene")).json())
        assert scene["scene"]["number"] == 2  # ended once, not twice


def test_the_gm_key_is_the_only_way_in(bridge: BridgeProcess, world: tuple[str, str]) -> None:
    other_key = add_world(bridge, "other")
    base = f"{bridge.url}{API}"
    attempts = [
        (f"{base}/{world[0]}/state", {}),
        (f"{base}/{world[0]}/state", {"Authorization": world[1]}),  # no scheme
        (f"{base}/{world[0]}/state", {"Authorization": f"Basic {world[1]}"}),
        (f"{base}/{world[0]}/state", bearer("not-the-key")),
        (f"{base}/{world[0]}/state", bearer(other_key)),  # another world's key
        (f"{base}/nowhere/state", bearer(world[1])),
        (f"{base}/{world[0]}/webhooks", {"Authorization": "Bearer"}),
    ]
    for url, headers in attempts:
        answer = httpx.get(url, headers=headers)
        assert answer.status_code == 401, (url, headers)
        assert answer.headers["WWW-Authenticate"].startswith("Bearer")
        assert answer.json()["error"]["code"] == "unauthorized"


def test_malformed_requests_get_json_errors(bridge: BridgeProcess, world: tuple[str, str]) -> None:
    base = f"{bridge.url}{API}/{world[0]}"
    headers = bearer(world[1])
    not_json = httpx.post(f"{base}/actions", content=b"{nope", headers=headers)
    assert not_json.status_code == 400 and not_json.json()["error"]["code"] == "invalid"
    huge = httpx.post(f"{base}/actions", content=b"[" + b"1," * 40_000 + b"1]", headers=headers)
    assert huge.status_code == 413 and huge.json()["error"]["code"] == "too_large"
    for limit in ("0", "-1", "x", "201"):
        bad = httpx.get(f"{base}/webhooks", params={"limit": limit}, headers=headers)
        assert bad.status_code == 422 and bad.json()["error"]["field"] == "limit"
    nowhere = httpx.get(f"{bridge.url}/api/v1/nothing-here", headers=headers)
    assert nowhere.status_code == 404 and nowhere.json()["ok"] is False
    wrong_method = httpx.put(f"{base}/state", headers=headers)
    assert wrong_method.status_code == 405 and "GET" in wrong_method.headers["Allow"]
    bad_hook = httpx.post(
        f"{base}/webhooks", json={"kind": "discord", "url": "https://x.test/a"}, headers=headers
    )
    assert bad_hook.status_code == 422 and bad_hook.json()["error"]["field"] == "url"
    unknown_hook = httpx.delete(f"{base}/webhooks/wh_nothere", headers=headers)
    assert unknown_hook.status_code == 404


def test_a_flood_gets_429_with_retry_after(tmp_path: Path) -> None:
    with serving_in_thread(InProcessBridge(tmp_path), "--api-rate", "0.001") as process:
        key = add_world(process, "t")
        answers = [httpx.get(f"{process.url}{API}/t/state", headers=bearer(key)) for _ in range(4)]
        # The burst (three) passes; the fourth waits for a token that takes 1000 s to grow.
        assert [a.status_code for a in answers] == [200, 200, 200, 429]
        assert answers[3].headers["Retry-After"] == "1"
        assert answers[3].json()["error"]["code"] == "rate_limited"


@pytest.mark.both_stores
@pytest.mark.bridge_args("--webhook-allow", "127.0.0.1")  # a self-hosted bridge's own endpoint
async def test_a_signed_webhook_set_up_over_http_mirrors_a_resolved_card(
    bridge: BridgeProcess, world: tuple[str, str], table: dict[str, Seat], receiver: Receiver
) -> None:
    gm = table["gm"]
    async with world_api(bridge, world) as http:
        created = await http.post(
            "/webhooks", json={"kind": "json", "url": receiver.url, "name": "overlay"}
        )
        assert created.status_code == 200, created.text
        secret = created.json()["secret"]
        hook_id = created.json()["webhook"]["id"]
        await queue(gm, [1, 1, 0, 0])
        card = await gm.card("action.start", **overcome("w1"))
        final = await gm.card("action.pass", action_id=card["action_id"], side="actor")
        ((headers, raw),) = await receiver.wait(1)
        stamp, signature = headers[TIMESTAMP_HEADER], headers[SIGNATURE_HEADER]
        assert verify(secret, raw, stamp, signature, time.time())
        event = WebhookCardEvent.model_validate_json(raw)
        assert event.model_dump(mode="json")["card"] == final
        listed = WebhookList.model_validate((await http.get("/webhooks")).json())
        assert [h.name for h in listed.webhooks] == ["overlay"]
        assert secret not in json.dumps(listed.model_dump(mode="json"))
        for _ in range(100):
            if listed.deliveries and listed.deliveries[0].status == "delivered":
                break
            await asyncio.sleep(0.05)
            listed = WebhookList.model_validate((await http.get("/webhooks")).json())
        assert [d.status for d in listed.deliveries] == ["delivered"]
        shown = run_cli(bridge, "world", "webhooks", "list", world[0]).stdout
        assert "DELIVERED" in shown and hook_id in shown and secret not in shown
        removed = await http.delete(f"/webhooks/{hook_id}")
        assert removed.json() == {"id": hook_id, "removed": True}
        assert (await http.get("/webhooks")).json()["webhooks"] == []
    assert len(receiver.got) == 1


def test_world_webhooks_from_the_command_line(tmp_path: Path) -> None:
    add_world(tmp_path, "camp")
    discord = "https://discord.com/api/webhooks/123456789/t0ken-secret"
    added = json.loads(
        run_cli(tmp_path, "world", "webhooks", "add", "camp", "discord", discord, "--json").stdout
    )
    assert added["secret"] is None
    assert added["webhook"]["url_hint"] == "https://discord.com/api/webhooks/123456789/\u2026"
    # A name the host allows is taken as it is (no lookup; nothing here asks DNS).
    signed = run_cli(
        tmp_path, "world", "webhooks", "add", "camp", "json", "https://a.test/h",
        "--webhook-allow", "a.test",
    ).stdout  # fmt: skip
    assert "Signing secret (shown once): whsec_" in signed
    listing = run_cli(tmp_path, "world", "webhooks", "list", "camp").stdout
    assert added["webhook"]["id"] in listing and "t0ken-secret" not in listing
    assert "whsec_" not in listing and "Recent deliveries: 0, failed: 0" in listing
    removed = run_cli(tmp_path, "world", "webhooks", "remove", "camp", added["webhook"]["id"])
    assert "removed" in removed.stdout
    listed = json.loads(run_cli(tmp_path, "world", "webhooks", "list", "camp", "--json").stdout)
    assert [h["kind"] for h in listed["webhooks"]] == ["json"]
    bad = [
        ["add", "camp", "discord", "https://example.com/api/webhooks/1/x"],
        ["add", "camp", "json", "gopher://a.test/"],
        ["add", "camp", "json", ""],
        ["add", "camp", "json", "http://127.0.0.1:8080/h"],
        ["add", "camp", "json", "http://169.254.169.254/latest/meta-data/"],
        ["add", "camp", "json", "http://127.0.0.2/h", "--webhook-allow", "127.0.0.1"],
        ["add", "nowhere", "json", "https://a.test/h"],
        ["remove", "camp", "wh_nothere"],
        ["list", "nowhere"],
    ]
    for args in bad:
        refused = run_cli(tmp_path, "world", "webhooks", *args, check=False)
        # An unknown world is refused before the command runs, like every start-up error.
        status = 2 if "nowhere" in args else 1
        assert refused.returncode == status and refused.stderr.startswith("error: "), args
    not_a_host = run_cli(
        tmp_path, "world", "webhooks", "add", "camp", "json", "http://127.0.0.1/h",
        "--webhook-allow", "not a host", check=False,
    )  # fmt: skip
    assert not_a_host.returncode == 2 and "neither a host name" in not_a_host.stderr
    allowed = run_cli(
        tmp_path, "world", "webhooks", "add", "camp", "json", "http://127.0.0.1:8080/h",
        env={**os.environ, "FATE_BRIDGE_WEBHOOK_ALLOW": "10.0.0.0/8, 127.0.0.1"},
    )  # fmt: skip
    assert "Signing secret" in allowed.stdout


async def test_the_roll_history_over_http_pages_like_the_socket_intent(
    bridge: BridgeProcess, world: tuple[str, str], table: dict[str, Seat]
) -> None:
    gm = table["gm"]
    for n, rating in enumerate((1, 2, 3)):
        await queue(gm, [0, 0, 0, 0])
        card = await gm.card("action.start", **overcome(f"hist-{n}", rating))
        await gm.card("action.pass", action_id=card["action_id"], side="actor")
    async with world_api(bridge, world) as http:
        first = HistoryPage.model_validate((await http.get("/history", params={"limit": 2})).json())
        assert len(first.entries) == 2 and first.next_before is not None
        older = await http.get("/history", params={"limit": 2, "before": first.next_before})
        rest = HistoryPage.model_validate(older.json())
        socket = await gm.ok("history.read", limit=50)
        seen = [e.seq for e in first.entries + rest.entries]
        assert seen == [e["seq"] for e in socket["entries"]]
        assert [e.action_type for e in first.entries] == ["overcome", "overcome"]
        for bad in (
            {"limit": "0"},
            {"limit": "x"},
            {"kind": "juggle"},
            {"before": "-1"},
            {"cancelled": "yes"},
            {"cancelled": "1"},
        ):
            refused = await http.get("/history", params=bad)
            assert refused.status_code == 422, (bad, refused.text)
            assert refused.json()["error"]["code"] == "invalid"
        # A roll the GM called off is on the record; `cancelled` picks it or the others.
        await queue(gm, [-1, -1, -1, -1])
        card = await gm.card("action.start", **overcome("hist-cancelled", 1))
        await gm.card("action.cancel", action_id=card["action_id"], reason="Fished")
        only = HistoryPage.model_validate(
            (await http.get("/history", params={"cancelled": "true"})).json()
        )
        assert [(e.action_id, e.cancelled) for e in only.entries] == [(card["action_id"], True)]
        rest = HistoryPage.model_validate(
            (await http.get("/history", params={"cancelled": "false"})).json()
        )
        assert [e.seq for e in rest.entries] == seen and not any(e.cancelled for e in rest.entries)
