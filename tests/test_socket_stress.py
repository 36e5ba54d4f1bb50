"""Stress tracks over real Socket.IO in a Fate Condensed world (R5.10, R11.3): what the wire
accepts, what it refuses with a clear error, and that a refusal changes nothing."""

from __future__ import annotations

from typing import Any

from tests.conftest import Connect
from tests.seats import BROUSSEAU, GHOUL, Seat, characters, queue


def track(track_id: str, kind: str, *values: int, name: str = "") -> dict[str, Any]:
    return {
        "id": track_id,
        "name": name or track_id.title(),
        "kind": kind,
        "boxes": [{"value": v, "marked": False} for v in values],
    }


GHOUL_TRACKS = [
    track("phys", "physical", 1, 2),
    track("ment", "mental", 1, 1, 1),
    track("debt", "other", 1, 1, name="Indebted"),
]


async def ghoul_stress(gm: Seat) -> list[dict[str, Any]]:
    stress: list[dict[str, Any]] = (await characters(gm))["ghoul"]["stress"]
    return stress


async def condensed_table(connect: Connect, bridge: Any) -> Seat:
    from tests.bridge_process import add_world

    key = add_world(bridge, "fc", ruleset="fate-condensed")
    gm = Seat(await connect("fc", key=key, user="gm"))
    await gm.ok("actor.sync", actor={**BROUSSEAU, "skills": {"Athletics": 3, "Fight": 3}})
    await gm.ok("actor.sync", actor={**GHOUL, "stress": GHOUL_TRACKS})
    return gm


async def test_actor_sync_refuses_malformed_stress_tracks(connect: Connect, bridge: Any) -> None:
    # R5.10: each refusal is an error ack naming the field; the bridge keeps what it had.
    gm = await condensed_table(connect, bridge)
    before = await ghoul_stress(gm)
    bad_tracks: list[Any] = [
        [True, False],  # the old flat list of boxes
        [track("a", "physical", 1), track("a", "mental", 1)],  # two tracks, one id
        [track("a", "fire", 1)],  # no such kind
        [track("a", "physical", 0)],  # a box absorbs at least 1
        [track("a", "physical", 13)],  # and at most 12
        [track("a", "physical", *([1] * 21))],  # at most 20 boxes
        [track(f"t{n}", "physical", 1) for n in range(13)],  # at most 12 tracks
        [{**track("a", "physical", 1), "extra": 1}],  # closed
        [{**track("a", "physical", 1), "id": "bad id!"}],
    ]
    for stress in bad_tracks:
        ack = await gm.send("actor.sync", actor={**GHOUL, "stress": stress})
        assert ack["ok"] is False, stress
        assert ack["error"]["code"] == "invalid"
        assert str(ack["error"].get("field", "")).startswith("actor.stress"), ack
    assert await ghoul_stress(gm) == before


async def test_a_mental_conflicts_hit_is_absorbed_only_by_mental_boxes(
    connect: Connect, bridge: Any
) -> None:
    # R11.3: the attack takes the conflict's kind; R5.10: only that kind's track absorbs it.
    gm = await condensed_table(connect, bridge)
    await gm.ok(
        "conflict.start",
        name="Battle of wills",
        kind="mental",
        sides=[
            {"name": "Hunter", "members": ["brousseau"]},
            {"name": "Dead", "members": ["ghoul"]},
        ],
    )
    attack = {
        "type": "attack",
        "actor_id": "brousseau",
        "skill": "Fight",
        "target_id": "ghoul",
        "opposition": {"kind": "passive", "rating": 1},
    }
    wrong_kind = await gm.send("action.start", **attack, attack_kind="physical")
    assert wrong_kind["ok"] is False
    assert wrong_kind["error"]["field"] == "attack_kind"
    assert "mental conflict" in wrong_kind["error"]["message"]

    await queue(gm, [0, 0, 0, 0])  # Fight 3 vs 1: a 2-shift mental hit
    card = await gm.card("action.start", **attack)
    assert card["attack_kind"] == "mental"
    card = await gm.card("action.pass", action_id=card["action_id"], side="actor")
    assert card["state"] == "absorbing" and card["pending_hit"] == 2
    action_id = card["action_id"]

    before = await ghoul_stress(gm)
    refusals: list[tuple[dict[str, Any], str]] = [
        ({"stress_boxes": [0, 1]}, ""),  # the old shape
        ({"stress": [{"track": "ment", "boxes": []}]}, "stress"),
        ({"stress": [{"track": "ment", "boxes": [20]}]}, "stress"),
        ({"stress": [{"track": "nope", "boxes": [0, 1]}]}, "stress"),
        ({"stress": [{"track": "phys", "boxes": [1]}]}, "stress"),  # physical can't take it
        ({"stress": [{"track": "debt", "boxes": [0, 1]}]}, "stress"),  # "other" never
        ({"stress": [{"track": "ment", "boxes": [0]}]}, "consequences"),  # 1 < 2
        ({"stress": [{"track": "ment", "boxes": [5, 6]}]}, "stress"),  # no such boxes
    ]
    for body, field in refusals:
        ack = await gm.send("action.absorb", action_id=action_id, **body)
        assert ack["ok"] is False, body
        assert ack["error"]["code"] == "invalid", ack
        assert str(ack["error"].get("field", "")).startswith(field), ack
    assert await ghoul_stress(gm) == before

    card = await gm.card(
        "action.absorb", action_id=action_id, stress=[{"track": "ment", "boxes": [0, 2]}]
    )
    assert card["state"] == "resolved"
    stress_effect = next(e for e in card["effects"] if e["kind"] == "stress")
    assert (stress_effect["text"], stress_effect["count"], stress_effect["detail"]) == (
        "Ment",
        2,
        "2",
    )
    after = {t["id"]: [b["marked"] for b in t["boxes"]] for t in await ghoul_stress(gm)}
    assert after == {"phys": [False, False], "ment": [True, False, True], "debt": [False, False]}
    patches = await gm.wait_for("actor.patch", lambda p: p["actor_id"] == "ghoul")
    patched = {t["id"]: [b["marked"] for b in t["boxes"]] for t in patches[-1]["stress"]}
    assert patched == after
    assert {t["id"]: t["kind"] for t in patches[-1]["stress"]} == {
        "phys": "physical",
        "ment": "mental",
        "debt": "other",
    }
