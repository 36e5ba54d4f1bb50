"""What the bridge says outside Foundry comes from the module's language files (issue 34):
one home for each sentence, read from the module the bridge packages."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from bridge import lang
from bridge.module_package import MODULE_DIR
from bridge.rules.errors import RuleViolation, refused
from bridge.service.session import error

RULES = Path(__file__).resolve().parent.parent / "bridge" / "rules"


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
                else:  # an f-string over the harm kinds (R11.3)
                    assert isinstance(reason, ast.JoinedStr)
                    head = reason.values[0]
                    assert isinstance(head, ast.Constant) and isinstance(head.value, str)
                    reasons.update(f"{head.value!s}{kind}" for kind in ("physical", "mental"))
    assert {"gm_only", "act_for", "absorb_short"} <= reasons
    missing = sorted(r for r in reasons if not lang.known(f"Refusal.{r}"))
    assert missing == []
