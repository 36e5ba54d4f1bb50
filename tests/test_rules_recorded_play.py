"""The rules play today exactly as they played when the fixture was recorded: the same
commands with the same dice give the same events, the same refusals and the same states,
byte for byte (the rules are rewritten for speed; what they decide must not move).

Each recorded game is a seeded script of the property tests' commands (declaring with and
without helpers and danger, confirming, answering, conceding, rolling, invoking, passing,
choosing, costs, scene ends), settled and applied as the service does; the fixture keeps a
digest of each game's whole transcript. Regenerate it only for an intended change of the
rules' behaviour: ``python -m tests.test_rules_recorded_play > tests/fixtures/rules_play.json``.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from pathlib import Path
from typing import Any

import pytest

from bridge.rules.dice import FACES, QueuedDice
from bridge.rules.engine import apply_all, replay
from bridge.rules.errors import RuleViolation
from bridge.rules.events import Event
from bridge.rules.procedures import settle
from bridge.rules.state import WorldState
from tests.rules_fixtures import ANNA, GM_USER, PAUL
from tests.test_rules_properties import initial, play_turn, run

GAMES = 60
COMMANDS_PER_GAME = 40
RECORDED = Path(__file__).parent / "fixtures" / "rules_play.json"


_KINDS = ["start", "start", "invoke", "pass", "pass", "pass", "choose", "cost"]
_KINDS += ["concede", "roll", "confirm", "help", "end"]


def _command(rng: random.Random) -> tuple[Any, ...]:
    """One command of the property tests' vocabulary (tests.test_rules_properties)."""
    who = rng.choice([PAUL, ANNA, GM_USER])
    kind = rng.choice(_KINDS)
    if kind == "start":
        action_type = rng.choice(["overcome", "create_advantage", "discover", "take_advantage"])
        who = rng.choice([who, GM_USER])
        actor, rating = rng.choice(["b", "m"]), rng.randint(-2, 8)
        return (kind, who, actor, action_type, rating, rng.random() < 0.2, rng.random() < 0.3)
    if kind == "invoke":
        return (
            kind,
            who,
            rng.choice(["b", "m", "g", "gm"]),
            rng.choice(["b.hc", "g.hc", "sit-fog", "boost-x", "nope"]),
            rng.choice(["fate_point", "free", "boost"]),
            rng.choice(["bonus", "reroll"]),
        )
    if kind == "pass":
        return (kind, rng.choice([who, GM_USER]), rng.choice(["actor", "opposition"]))
    if kind == "choose":
        return (kind, who, rng.choice(["fail", "succeed_at_cost", "aspect", "mark"]))
    if kind == "cost":
        return (kind, rng.choice(["mild_consequence", "wrinkle", "npc_boost"]))
    if kind == "concede":
        return (kind, who, rng.choice(["b", "m"]))
    if kind == "confirm":
        return (kind, GM_USER, rng.choice([None, rng.randint(-2, 8)]))
    if kind == "help":
        return (kind, who, rng.choice(["b", "m"]), rng.random() < 0.8)
    if kind == "end":
        return (kind, rng.choice(["scene", "session", "scenario"]))
    return (kind, who)


def _turn(rng: random.Random) -> list[tuple[Any, ...]]:
    """One action as a table plays it (tests.test_rules_properties ``play_turn``)."""
    invokes = [
        (
            rng.choice(["b", "m", "g", "gm"]),
            rng.choice(["b.hc", "g.hc", "sit-fog", "boost-x"]),
            rng.choice(["fate_point", "free", "boost"]),
            rng.choice(["bonus", "reroll"]),
        )
        for _ in range(rng.randint(0, 3))
    ]
    return play_turn(
        (
            rng.choice(["b", "m"]),
            rng.choice(["overcome", "create_advantage", "discover", "take_advantage"]),
            rng.randint(-1, 6),
            rng.random() < 0.3,
            rng.random() < 0.3,
            invokes,
            rng.choice(["fail", "succeed_at_cost", "aspect", "mark"]),
            rng.choice(["mild_consequence", "opponent_advantage", "npc_boost", "wrinkle"]),
            rng.random() < 0.3,
            rng.choice([None, None, None, None, "scene", "session", "scenario"]),
        )
    )


def _script(rng: random.Random) -> list[tuple[Any, ...]]:
    """Whole turns, with stray commands (anyone pressing anything) between them."""
    script: list[tuple[Any, ...]] = []
    while len(script) < COMMANDS_PER_GAME:
        if rng.random() < 0.6:
            script.extend(_turn(rng))
        else:
            script.append(_command(rng))
    return script[:COMMANDS_PER_GAME]


def transcript(seed: int) -> list[Any]:
    """Game ``seed`` played through the rules: per command, its refusal or its settled
    events and the state they lead to, all as JSON."""
    rng = random.Random(seed)
    face = rng.choice
    rolls = [(face(FACES), face(FACES), face(FACES), face(FACES)) for _ in range(160)]
    dice = QueuedDice(rolls=rolls)
    state: WorldState = initial()
    start = state
    log: list[Event] = []
    lines: list[list[Any]] = []
    for command in _script(rng):
        try:
            events = settle(state, run(state, command, dice))
        except RuleViolation as refused:
            lines.append([list(command), "refused", refused.code, refused.field])
            continue
        state = apply_all(state, events)
        log.extend(events)
        lines.append(
            [
                list(command),
                [e.model_dump(mode="json") for e in events],
                state.model_dump(mode="json"),
            ]
        )
    assert replay(log, start) == state
    return lines


def digest(seed: int) -> str:
    text = json.dumps(transcript(seed), ensure_ascii=False, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()


def test_the_fixture_holds_every_game() -> None:
    assert len(json.loads(RECORDED.read_text())) == GAMES


@pytest.mark.parametrize("seed", range(GAMES))
def test_a_recorded_game_plays_the_same_events_refusals_and_states(seed: int) -> None:
    # R1-R12 as played: same commands and dice, same transcript (events, refusals, states).
    assert digest(seed) == json.loads(RECORDED.read_text())[str(seed)]


if __name__ == "__main__":
    json.dump({str(seed): digest(seed) for seed in range(GAMES)}, sys.stdout, indent=1)
    sys.stdout.write("\n")
