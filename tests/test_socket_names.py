"""Names a player can read (H18), over real Socket.IO against a real bridge and its store."""

from __future__ import annotations

import pytest

from tests.bridge_process import BridgeProcess
from tests.seats import Seat
from tests.test_readable_text import BAD_NAMES, LEGITIMATE
from tests.test_socket_bridge import db_counts

# Bad names that reach the handler as strings (the empty one is a plain length error).
UNREADABLE = [name for name, _ in BAD_NAMES if name]


@pytest.mark.parametrize("name", UNREADABLE)
async def test_a_bad_aspect_name_gets_an_invalid_ack_and_changes_nothing(
    table: dict[str, Seat], bridge: BridgeProcess, name: str
) -> None:
    # H18: a scene aspect named with an override, a control or nothing visible is refused
    # with the field, and neither the scene nor the log changes.
    gm = table["gm"]
    before_scene = await gm.ok("scene.read")
    before_log = db_counts(bridge)
    ack = await gm.send("scene.aspect", op="add", name=name)
    assert ack["ok"] is False
    assert ack["error"]["code"] == "invalid"
    assert ack["error"]["field"] == "name"
    assert "\u202e" not in ack["error"]["message"] and "\x1b" not in ack["error"]["message"]
    assert await gm.ok("scene.read") == before_scene
    assert db_counts(bridge) == before_log


async def test_unreadable_sheet_names_are_refused_with_a_harmless_field(
    table: dict[str, Seat],
) -> None:
    # H18: an actor synced with a bidi-override aspect or skill key changes nothing; the
    # field path names the key without carrying the override itself.
    gm = table["gm"]
    before = await gm.ok("world.state")
    actor = {"id": "eve", "name": "Eve", "owners": ["paul"], "skills": {"Notice": 2}}
    bad_aspect = await gm.send(
        "actor.sync", actor={**actor, "aspects": [{"key": "hc", "name": "\u202eevil"}]}
    )
    assert bad_aspect["error"]["code"] == "invalid"
    assert bad_aspect["error"]["field"] == "actor.aspects.0.name"
    bad_skill = await gm.send("actor.sync", actor={**actor, "skills": {"\u202eNotice": 2}})
    assert bad_skill["error"]["code"] == "invalid"
    assert bad_skill["error"]["field"] == "actor.skills.<U+202E>Notice.[key]"
    bad_name = await gm.send("actor.sync", actor={**actor, "name": "\u200b\u200d"})
    assert bad_name["error"]["field"] == "actor.name"
    assert await gm.ok("world.state") == before


async def test_real_scripts_reach_every_card_intact(table: dict[str, Seat]) -> None:
    # H18: Arabic, Hebrew, Persian with ZWNJ, an emoji ZWJ sequence and a decomposed accent
    # are stored as sent (accent composed, NFC) and come back on the scene.
    gm = table["gm"]
    names = [*LEGITIMATE[1:5], "Cafe\u0301"]
    for name in names:
        await gm.ok("scene.aspect", op="add", name=name)
    scene = await gm.ok("scene.read")
    shown = [aspect["name"] for aspect in scene["aspects"]]
    assert sorted(shown) == sorted([*names[:-1], "Café"])
