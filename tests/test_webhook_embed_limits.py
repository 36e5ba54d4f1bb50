"""Discord refuses an embed past any of its limits (6,000 characters in total; title 256,
description 4096, 25 fields, field name 256, value 1024, footer 2048, author name 256): every
card's embed stays within them, summarised, and the JSON webhook keeps the whole card."""

from __future__ import annotations

import json
from typing import Any

from bridge.service.webhooks.payloads import (
    CARD_EMIT,
    EMBED_TOTAL_LIMIT,
    SHORTENED,
    discord_body,
    embed_length,
    fitted,
    json_body,
)

LONGEST_NAME = 120  # the wire's Name


def within_discord_limits(embed: dict[str, Any]) -> None:
    assert embed_length(embed) <= EMBED_TOTAL_LIMIT, embed_length(embed)
    assert len(embed["title"]) <= 256 and len(embed["description"]) <= 4096
    assert len(embed["fields"]) <= 25
    for field in embed["fields"]:
        assert 0 < len(field["name"]) <= 256 and 0 < len(field["value"]) <= 1024
    assert len(embed.get("footer", {}).get("text", "")) <= 2048
    assert len(embed.get("author", {}).get("name", "")) <= 256


def name(prefix: str, index: int) -> str:
    return f"{prefix} {index:02d} ".ljust(LONGEST_NAME, "x")


def challenge_emit(tasks: int) -> Any:
    """A completed challenge of ``tasks`` tasks (20: the most the wire takes), every name
    as long as the wire allows: R11.1's summary card, as stored."""
    rated = {"value": 8}  # protocol 7: the value alone; the embed words it from en.json
    return CARD_EMIT.validate_python(
        {
            "seq": 41,
            "world": "w",
            "writer": "gm",
            "op": "create",
            "card_id": "challenge-c1",
            "card": {
                "kind": "challenge",
                "challenge": {
                    "id": "c1",
                    "name": name("Escape the flooding crypt", 0),
                    "advantages": [],
                    "state": "complete",
                    "carry_boosts": False,
                    "tasks": [
                        {
                            "id": f"t{i}",
                            "name": name("Task", i),
                            "skill": name("Skill", i),
                            "opposition": rated,
                            "action_id": f"a{i}",
                            "actor": {"id": f"c{i}", "name": name("Character", i)},
                            "total": rated,
                            "shifts": 0,
                            "outcome": "tie",
                            "state": "resolved",
                            "succeeded": True,
                            "costs": [],
                        }
                        for i in range(tasks)
                    ],
                },
            },
        }
    )


def test_a_20_task_challenge_embed_is_summarised_within_6000_characters() -> None:
    # R11.1's summary card of the largest challenge the wire takes, every name at its
    # longest: unfitted it would be over 8,000 characters; the embed keeps every task,
    # each line cut to its share, and says the JSON webhook has the rest.
    emit = challenge_emit(20)
    (embed,) = json.loads(discord_body(emit))["embeds"]
    within_discord_limits(embed)
    assert embed_length(embed) > EMBED_TOTAL_LIMIT - 1000  # the room is used, not wasted
    assert [f["name"] for f in embed["fields"]] == [name("Task", i) for i in range(20)]
    assert all(
        f["value"].startswith(f"Tie \u2014 {name('Character', i)}: Skill {i:02d}")
        for i, f in enumerate(embed["fields"])
    )
    assert SHORTENED in embed["footer"]["text"]
    # The JSON webhook carries the whole card, nothing cut.
    whole = json.loads(json_body(emit))["card"]["challenge"]["tasks"]
    assert [t["skill"] for t in whole] == [name("Skill", i) for i in range(20)]


def test_a_small_challenge_embed_is_whole_and_says_nothing_of_shortening() -> None:
    (embed,) = json.loads(discord_body(challenge_emit(3)))["embeds"]
    within_discord_limits(embed)
    assert "footer" not in embed and len(embed["fields"]) == 3
    assert name("Skill", 2) in embed["fields"][2]["value"]


def test_every_part_at_discords_limit_and_past_it_is_fitted() -> None:
    # Each part at or past its own limit, together far past 6,000: every limit holds, the
    # description gives way first, and the fields left out are counted in the last one.
    embed = fitted(
        {
            "title": "T" * 300,
            "description": "D" * 5000,
            "author": {"name": "A" * 300},
            "footer": {"text": "F" * 2100},
            "fields": [
                {"name": f"{i:02d}".ljust(256, "n"), "value": "v" * 1100, "inline": False}
                for i in range(30)
            ],
        },
        "tasks",
    )
    within_discord_limits(embed)
    last = embed["fields"][-1]
    kept = len(embed["fields"]) - 1
    assert last["name"] == f"\u2026 and {30 - kept} more tasks" and last["value"] == SHORTENED
    assert [f["name"][:2] for f in embed["fields"][:kept]] == [f"{i:02d}" for i in range(kept)]
