"""A roll history nobody can quietly rewrite: the log anchored in Foundry's chat log.

Every card the bridge emits carries its event's ``{seq, hash}`` (the module keeps it in the
message's flags); ``world verify --chat-log`` and the GM's ``world.verify`` check the log
against those anchors, and verify compares the chain head with the world's stored head.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest

from bridge.service.protocol import ANCHOR_PAGE, HISTORY_ANCHORS_FORMAT
from bridge.store.redis import RedisStore
from tests.bridge_process import BridgeProcess
from tests.conftest import Connect
from tests.in_process import run_cli
from tests.log_forgery import rewrite_and_rehash
from tests.seats import BROUSSEAU, Seat, queue, start_action


def verify(bridge: BridgeProcess, *args: str) -> subprocess.CompletedProcess[str]:
    """``fate-bridge world verify ...`` on the bridge's store, through the command's entry
    function in the test's process; never raises on failure."""
    return run_cli(bridge, "world", "verify", *args, check=False)


async def play_two_rolls(gm: Seat) -> None:
    """Two overcomes through the invoke phase: several cards, several anchors."""
    await gm.ok("actor.sync", actor=BROUSSEAU)
    await queue(gm, [1, 0, 0, -1], [0, 0, 1, 1])
    for rating in (2, 3):
        card = await start_action(gm, rating=rating)
        await gm.card("action.pass", action_id=card["action_id"], side="actor")


async def chat_log_anchors(gm: Seat, count: int) -> list[dict[str, Any]]:
    """The anchors the chat log keeps: one per card message, its latest write's."""
    emits = await gm.wait_for("card", count=count)
    latest: dict[str, dict[str, Any]] = {}
    for emit in emits:
        latest[emit["card_id"]] = emit["anchor"]
    return sorted(latest.values(), key=lambda a: int(a["seq"]))


def export(path: Path, world: str, anchors: list[dict[str, Any]]) -> Path:
    """The file the module's "Export history anchors" writes."""
    doc = {"format": HISTORY_ANCHORS_FORMAT, "version": 1, "world": world, "anchors": anchors}
    path.write_text(json.dumps(doc), "utf-8")
    return path


async def test_every_card_carries_its_events_anchor(
    connect: Connect, world: tuple[str, str]
) -> None:
    # DESIGN Trust: each card emit names the last event behind it, as the log has it.
    gm = Seat(await connect(world[0], key=world[1]))
    await play_two_rolls(gm)
    emits = await gm.wait_for("card", count=4)
    for emit in emits:
        assert emit["anchor"]["seq"] == emit["card"]["event_seq"]
        assert emit["anchor"]["hash"] == emit["card"]["event_hash"]
    report = await gm.ok("world.verify", anchors=[e["anchor"] for e in emits])
    assert report["ok"] is True and report["anchors_checked"] == 4
    assert report["stored_head_matches"] and report["replay_matches"]


@pytest.mark.process
async def test_a_rewritten_and_rehashed_log_is_caught_by_the_chat_log_anchors(
    bridge: BridgeProcess, connect: Connect, world: tuple[str, str], tmp_path: Path
) -> None:
    # DESIGN Trust: the chain alone cannot catch a rewrite re-hashed from the first edit on;
    # the hashes Foundry's chat log kept can.
    gm = Seat(await connect(world[0], key=world[1]))
    await play_two_rolls(gm)
    anchors = await chat_log_anchors(gm, count=4)
    chat_log = export(tmp_path / "chat-log.json", world[0], anchors)
    before = verify(bridge, world[0], "--chat-log", str(chat_log))
    assert before.returncode == 0, before.stderr
    assert "2 chat-log anchors agree" in before.stdout

    bridge.stop()
    rewrite_and_rehash(bridge.data_dir / "bridge.sqlite3", world[0])
    plain = verify(bridge, world[0])
    assert plain.returncode == 0 and plain.stdout.startswith("OK:"), plain.stderr
    anchored = verify(bridge, world[0], "--chat-log", str(chat_log))
    assert anchored.returncode == 2
    assert "chat-log anchor(s) disagree with the log" in anchored.stderr
    assert f"anchor {anchors[0]['seq']}: chat log {anchors[0]['hash']}" in anchored.stderr

    # The module's "Verify history" asks the same of the running bridge (GM only).
    bridge.start()
    gm = Seat(await connect(world[0], key=world[1]))
    report = await gm.ok("world.verify", anchors=anchors)
    assert report["ok"] is False
    assert report["chain_broken_at"] is None and report["replay_matches"] is True
    assert [m["seq"] for m in report["anchors_mismatched"]] == [a["seq"] for a in anchors]
    player = Seat(await connect(world[0], role="player", user="paul"))
    hello = await player.ok("hello")
    await gm.ok("user.bind", user_id="paul", nonce=hello["bind_nonce"])
    refused = await player.send("world.verify", anchors=anchors)
    assert refused["error"]["code"] == "forbidden"


async def test_an_anchor_past_the_end_of_the_log_is_caught(
    connect: Connect, world: tuple[str, str]
) -> None:
    # DESIGN Trust: a log truncated after the chat log anchored it lacks the anchored event.
    gm = Seat(await connect(world[0], key=world[1]))
    await play_two_rolls(gm)
    report = await gm.ok("world.verify", anchors=[{"seq": 9999, "hash": "a" * 64}])
    assert report["ok"] is False
    assert report["anchors_mismatched"] == [{"seq": 9999, "hash": "a" * 64, "log_hash": None}]


@pytest.mark.both_stores
async def test_verify_compares_the_chain_head_with_the_stored_head(
    bridge: BridgeProcess, connect: Connect, world: tuple[str, str]
) -> None:
    # DESIGN State: the world row's head must be the log's last event (both stores).
    gm = Seat(await connect(world[0], key=world[1]))
    await play_two_rolls(gm)
    assert verify(bridge, world[0]).returncode == 0
    forged_head = "f" * 64
    if bridge.redis_url is None:
        with sqlite3.connect(bridge.data_dir / "bridge.sqlite3") as db:
            db.execute(
                "UPDATE worlds SET last_event_hash = ? WHERE id = ?", (forged_head, world[0])
            )
    else:
        store = RedisStore(bridge.redis_url)
        await store.open()
        await store.redis.hset(store._key("world", world[0]), "last_event_hash", forged_head)  # type: ignore[misc]
        await store.close()
    broken = verify(bridge, world[0])
    assert broken.returncode == 2
    assert "but the world row stores event" in broken.stderr


BAD_CHAT_LOGS: list[tuple[Any, str]] = [
    ("not json {", "cannot read"),
    ({"anchors": []}, "is not a fate-bridge.history-anchors export"),
    (
        {"format": HISTORY_ANCHORS_FORMAT, "version": 2, "world": "table", "anchors": []},
        "version",
    ),
    (
        {"format": HISTORY_ANCHORS_FORMAT, "version": 1, "world": "other", "anchors": []},
        "chat log of world 'other'",
    ),
    (
        {
            "format": HISTORY_ANCHORS_FORMAT,
            "version": 1,
            "world": "table",
            "anchors": [{"seq": 1, "hash": "XYZ"}],
        },
        "anchors.0.hash",
    ),
    (
        {
            "format": HISTORY_ANCHORS_FORMAT,
            "version": 1,
            "world": "table",
            "anchors": [{"seq": 2**63, "hash": "a" * 64}],
        },
        "anchors.0.seq",
    ),
]


@pytest.mark.parametrize(("content", "says"), BAD_CHAT_LOGS)
async def test_a_bad_chat_log_file_gets_a_clear_error(
    bridge: BridgeProcess, world: tuple[str, str], tmp_path: Path, content: Any, says: str
) -> None:
    # Bad input gets a clear error (exit 1) and changes nothing.
    path = tmp_path / "bad.json"
    path.write_text(content if isinstance(content, str) else json.dumps(content), "utf-8")
    result = verify(bridge, world[0], "--chat-log", str(path))
    assert result.returncode == 1
    assert says in result.stderr
    assert verify(bridge, world[0]).returncode == 0


@pytest.mark.parametrize(
    ("anchors", "field"),
    [
        ([{"seq": 1, "hash": "a" * 64}] * (ANCHOR_PAGE + 1), "anchors"),
        ([{"seq": 1, "hash": "A" * 64}], "anchors.0.hash"),
        ([{"seq": 0, "hash": "a" * 64}], "anchors.0.seq"),
        ([{"seq": 2**63, "hash": "a" * 64}], "anchors.0.seq"),
        ([{"seq": 1, "hash": "a" * 64, "extra": 1}], "anchors.0.extra"),
    ],
)
async def test_bad_anchors_get_an_invalid_ack(
    connect: Connect, world: tuple[str, str], anchors: list[Any], field: str
) -> None:
    # Every field is bounded: a page holds at most ANCHOR_PAGE anchors, hashes are hex.
    gm = Seat(await connect(world[0], key=world[1]))
    ack = await gm.send("world.verify", anchors=anchors)
    assert ack["ok"] is False and ack["error"]["code"] in ("invalid", "too_large")
    if ack["error"]["code"] == "invalid":
        assert ack["error"]["field"] == field
