"""Small builders for rules tests: characters, worlds, and running commands."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest

from bridge.rules import actions, challenge, contest
from bridge.rules.actions import Principal
from bridge.rules.dice import DiceSource, QueuedDice, Roll
from bridge.rules.engine import Sheet, SheetSlot, apply_all, sync_character
from bridge.rules.errors import RuleViolation
from bridge.rules.events import Event
from bridge.rules.procedures import settle
from bridge.rules.ruleset import UNWRITTEN, Ruleset, get_ruleset
from bridge.rules.state import Action, Aspect, Character, StressBox, StressTrack, Stunt, WorldState

GM_USER = Principal("gmUser", is_gm=True)
PAUL = Principal("paul", is_gm=False)
ANNA = Principal("anna", is_gm=False)
# A roll of four blanks: the dice add nothing (R1.1).
ZERO: Roll = (0, 0, 0, 0)

STANDARD_SLOTS = (SheetSlot("mild", 2), SheetSlot("moderate", 4), SheetSlot("severe", 6))


def sheet(
    character_id: str,
    name: str,
    *,
    owners: Sequence[str] = (),
    skills: dict[str, int] | None = None,
    fate_points: int = 3,
    aspects: Sequence[tuple[str, str]] = (),
    stunts: Sequence[Stunt] = (),
    slots: Sequence[SheetSlot] = STANDARD_SLOTS,
    stress: int | Sequence[StressTrack] = 0,
) -> Sheet:
    """A sheet; ``stress`` is a number of 1-shift physical boxes, or the tracks themselves."""
    return Sheet(
        id=character_id,
        name=name,
        owners=tuple(owners),
        skills=skills or {},
        stunts=tuple(stunts),
        aspects=tuple(aspects),
        fate_points=fate_points,
        refresh=3,
        consequences=tuple(slots),
        stress=(physical(*(1,) * stress),) if isinstance(stress, int) else tuple(stress),
    )


def track(
    track_id: str, kind: str, *values: int, marked: Sequence[int] = (), name: str = ""
) -> StressTrack:
    """A stress track of ``kind`` whose boxes absorb ``values``; ``marked`` box indexes."""
    return StressTrack(
        id=track_id,
        name=name or f"{track_id.title()} Stress",
        kind=kind,  # type: ignore[arg-type]
        boxes=tuple(StressBox(value=v, marked=i in marked) for i, v in enumerate(values)),
    )


def physical(*values: int) -> StressTrack:
    return track("physical", "physical", *values)


def mental(*values: int) -> StressTrack:
    return track("mental", "mental", *values)


BROUSSEAU = sheet(
    "b",
    "Brousseau",
    owners=["paul"],
    skills={"Athletics": 3, "Notice": 2, "Lore": 1},
    aspects=[("hc", "Skeptical Ghost Hunter")],
)
MARGOT = sheet("m", "Margot", owners=["anna"], skills={"Athletics": 2, "Notice": 1, "Lore": 4})
GHOUL = sheet("g", "Ghoul", skills={"Fight": 3, "Athletics": 2}, aspects=[("hc", "Hungry Dead")])


def world(*sheets: Sheet, ruleset: Ruleset = UNWRITTEN, gm_fate_points: int = 0) -> WorldState:
    state = WorldState(ruleset=ruleset.id, gm_fate_points=gm_fate_points)
    for s in sheets or (BROUSSEAU, MARGOT, GHOUL):
        state = apply_all(state, sync_character(state, s, ruleset))
    return state


def with_aspect(state: WorldState, aspect: Aspect) -> WorldState:
    return state.model_copy(update={"aspects": {**state.aspects, aspect.id: aspect}})


def dice(*rolls: Roll) -> QueuedDice:
    """Only the queued rolls: a test that rolls more than it queued fails loudly."""
    return QueuedDice(rolls=rolls)


class Table:
    """A world plus its event log, moved along by rules commands."""

    def __init__(self, state: WorldState, ruleset: Ruleset | None = None) -> None:
        self.state = state
        self._ruleset = ruleset
        self.log: list[Event] = []

    @property
    def ruleset(self) -> Ruleset:
        """The ruleset given, else the world's own (R13.9: it follows a change)."""
        return self._ruleset or get_ruleset(self.state.ruleset)

    def run(self, command: Callable[[WorldState], list[Event]]) -> list[Event]:
        # As the service does: the procedures observe what the command changed (R11).
        events = settle(self.state, command(self.state))
        self.state = apply_all(self.state, events)
        self.log.extend(events)
        return events

    def action(self, action_id: str = "") -> Action:
        if not action_id:
            action_id = f"a{self.state.action_count}"
        return self.state.actions[action_id]

    def character(self, character_id: str) -> Character:
        return self.state.characters[character_id]


def gm_confirms(table: Table, dice_source: DiceSource, action_id: str = "") -> None:
    """R2.1, R9.1, R10.1: the GM confirms a player's proposal as it stands, accepts
    every helper still invited and every character the action would touch (consent to
    harm, DESIGN Reach and trust), so the action goes on as declared."""
    action = table.action(action_id)
    if action.state != "confirming":
        return
    if action.proposal is not None:
        table.run(lambda s: actions.confirm(s, action.id, GM_USER, dice_source))
    answering = [p.character_id for p in action.participants if p.status == "invited"]
    answering += [c.character_id for c in action.consents if c.character_id not in answering]
    for character_id in answering:
        table.run(
            lambda s, c=character_id: actions.answer_help(  # type: ignore[misc]
                s, action.id, c, True, GM_USER, dice_source
            )
        )


def refused(code: str, command: Callable[[], object]) -> RuleViolation:
    """Run ``command`` and check that the rules refuse it with ``code``; the refusal."""
    with pytest.raises(RuleViolation) as caught:
        command()
    assert caught.value.code == code, caught.value.message
    return caught.value


def direct_contest(table: Table, rival: contest.SideSpec | None = None) -> str:
    """R11.2: the GM starts a direct Athletics contest, the Hunters (Brousseau) against
    ``rival`` (the Ghoul when None); the contest's id."""
    sides = [contest.SideSpec("Hunters", ("b",)), rival or contest.SideSpec("Ghoul", ("g",))]
    table.run(
        lambda s: contest.start_contest(
            s, "Rooftop chase", "direct", "Athletics", sides, GM_USER, table.ruleset
        )
    )
    return next(iter(table.state.contests))


def one_task_challenge(table: Table, task: str = "Row", rating: int = 2) -> str:
    """R11.1: the GM starts a challenge of one Athletics task at ``rating``; its id."""
    table.run(
        lambda s: challenge.start_challenge(
            s, "Storm", [challenge.TaskSpec(task, "Athletics", rating)], GM_USER
        )
    )
    return next(iter(table.state.challenges))
