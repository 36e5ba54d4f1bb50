"""What the bridge says outside Foundry comes from the module's language files (issue 34):
one home for each sentence, read from the module the bridge packages."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest

from bridge.rules.errors import RuleViolation, refused
from bridge.service import lang
from bridge.service.module_files import MODULE_DIR
from bridge.service.session import error

RULES = Path(__file__).resolve().parent.parent / "bridge" / "rules"
# Reasons the rules build from a closed set: the harm kinds (R11.3; a conflict's, a mild
# consequence's) and what an overwhelmed character may not do (R8.2; require_active's callers).
VARIANTS = {
    "absorb_wrong_kind_": ("physical", "mental"),
    "conflict_kind_": ("physical", "mental"),
    "mild_takes_only_": ("physical", "mental"),
    "overwhelmed_cannot_": ("act", "oppose", "help", "invoke", "defend"),
}


def test_the_english_comes_from_the_module_s_en_json() -> None:
    english = json.loads((MODULE_DIR / "lang" / "en.json").read_text("utf-8"))["FATEBRIDGE"]
    # R1.3: the ladder's words, the number alone beyond it, a true minus.
    assert lang.ladder(4) == f"{english['Ladder']['4']} (+4)" == "Great (+4)"
    assert lang.ladder(-2) == "Terrible (\u22122)"
    assert lang.ladder(12) == "+12"
    assert lang.action_name("create_advantage") == english["Action"]["create_advantage"]
    # R3.1: Fate's outcome names, Unwritten's own.
    assert lang.outcome_name("fate-core", "excel") == "Succeed with Style"
    assert lang.outcome_name("unwritten", "excel") == "Excel"
    # Foundry's rules: a placeholder without a value stays, a missing key reads as itself.
    assert lang.say("Card.Against") == "vs {name}"
    assert lang.say("No.Such.Key") == "FATEBRIDGE.No.Such.Key"


def test_the_world_s_language_when_asked_english_where_it_lacks_a_key() -> None:
    assert lang.ladder(4, "de") == "Großartig (+4)"
    assert lang.outcome_name("fate-core", "excel", "pt-BR") == "Sucesso com Estilo"
    # A language the module does not ship reads as English.
    assert lang.action_name("overcome", "xx") == "Overcome"


def test_a_refusal_with_a_reason_is_worded_from_en_json_and_carries_its_parameters() -> None:
    with pytest.raises(RuleViolation) as caught:
        raise refused("invalid", "absorb_short", "consequences", hit=2, absorbed=1)
    exc = caught.value
    ack = error(exc.code, exc.message, exc.field, exc.params)
    assert ack["error"] == {
        "code": "invalid",
        "field": "consequences",
        "params": {"reason": "absorb_short", "hit": 2, "absorbed": 1},
        "message": "The hit is 2 shifts; that absorbs only 1.",
    }


def test_every_reason_the_rules_give_has_its_sentence() -> None:
    reasons: set[str] = set()
    for path in RULES.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "refused"
            ):
                reason = node.args[1]
                if isinstance(reason, ast.Constant):
                    reasons.add(str(reason.value))
                else:  # an f-string over a closed set of parts
                    assert isinstance(reason, ast.JoinedStr)
                    head = reason.values[0]
                    assert isinstance(head, ast.Constant) and isinstance(head.value, str)
                    reasons.update(f"{head.value!s}{part}" for part in VARIANTS[head.value])
    assert {"gm_only", "act_for", "absorb_short"} <= reasons
    missing = sorted(r for r in reasons if not lang.known(f"Refusal.{r}"))
    assert missing == []


def test_a_card_stored_before_protocol_7_is_still_mirrored_in_words_from_en_json() -> None:
    # A world upgraded from protocol 6 keeps its stored card emits, words and all: the
    # webhook outbox reads them as protocol 7's ids and words them itself.
    from bridge.service.webhooks import payloads
    from bridge.store.base import EmitRow

    side: dict[str, Any] = {
        "leader": {"id": "brousseau", "name": "Brousseau"},
        "helpers": [],
        "controllers": [],
        "skill": "Athletics",
        "skill_rating": {"value": 3, "label": "Good"},
        "stunt_bonus": 0,
        "teamwork_bonus": 0,
        "invoke_bonus": 0,
        "dice": [1, 0, 0, 0],
        "dice_total": 1,
        "passive": False,
        "total": {"value": 4, "label": "Great"},
        "dangerous": False,
        "passed": True,
        "fate_points": 3,
    }
    passive = {
        **side,
        "leader": None,
        "skill": None,
        "skill_rating": None,
        "dice": None,
        "dice_total": None,
        "passive": True,
        "total": {"value": 2, "label": "Fair"},
        "fate_points": None,
    }
    card: dict[str, Any] = {
        "kind": "action",
        "action_id": "a1",
        "ruleset": "unwritten",
        "action_type": "overcome",
        "action_label": "Overcome",
        "state": "resolved",
        "actor": side,
        "opposition": passive,
        "opposition_kind": "passive",
        "target": None,
        "target_aspect": None,
        "aspect_name": None,
        "situation": None,
        "invokes": [],
        "shifts": 2,
        "outcome": "succeed",
        "outcome_label": "Succeed",
        "provisional": False,
        "succeeded": True,
        "pending_choice": None,
        "cost_severity": None,
        "pending_hit": 0,
        "opposition_action": None,
        "fate_points": {"brousseau": 3},
        "effects": [],
        "aspects": [],
        "gm_fate_points": 0,
        "prompt": {"kind": "none", "users": [], "gm": False, "options": []},
        "event_seq": 5,
        "event_hash": "a" * 64,
    }
    payload = {"world": "table", "seq": 5, "card_id": "table.a1", "op": "update", "writer": "u1"}
    payload["card"] = card
    row = EmitRow(seq=5, event="card", payload=payload)
    mirrored = payloads.mirrored_card(row)
    assert mirrored is not None
    embed = json.loads(payloads.discord_body(mirrored[1]))["embeds"][0]
    assert embed["title"] == "Brousseau: Overcome \u2014 Succeed"
    assert "Total **Great (+4)**" in embed["fields"][0]["value"]


def test_a_reason_the_files_lack_reads_as_its_code_s_sentence_never_as_an_id() -> None:
    exc = refused("overwhelmed", "overwhelmed_cannot_fly", "character_id", name="Borin")
    ack = error(exc.code, exc.message, exc.field, exc.params)
    assert ack["error"]["message"] == "That character is out of the scene."
    assert ack["error"]["params"] == {"reason": "overwhelmed_cannot_fly", "name": "Borin"}


def test_an_action_s_state_is_worded_as_its_card_names_it() -> None:
    exc = refused("wrong_state", "action_state", "action_id", state="awaiting_opposition")
    ack = error(exc.code, exc.message, exc.field, exc.params)
    assert (
        ack["error"]["message"]
        == "That can't be done now (the action: Waiting for the opposition)."
    )
    assert ack["error"]["params"] == {"reason": "action_state", "state": "awaiting_opposition"}
