"""R13: the Fate SRD rulesets fate-core-official's frameworks play (Fate Core, Fate
Condensed, Fate Accelerated), as data the engine is given; the rules' pure functions."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from bridge.rules import actions, conflict
from bridge.rules.actions import AbsorbCommand, StartAction, StressMark
from bridge.rules.engine import Sheet, replay
from bridge.rules.errors import RuleViolation
from bridge.rules.events import EVENT_ADAPTER
from bridge.rules.ruleset import (
    FATE_ACCELERATED,
    FATE_CONDENSED,
    FATE_CORE,
    RULESETS,
    UNWRITTEN,
    Ruleset,
)
from bridge.rules.scene import end_scene
from bridge.rules.settings import change_ruleset, change_settings
from bridge.rules.state import HarmKind, StressTrack, Stunt
from bridge.service.session import worded
from tests.rules_fixtures import (
    ANNA,
    GM_USER,
    PAUL,
    STANDARD_SLOTS,
    ZERO,
    Table,
    dice,
    refused,
    track,
    world,
)

# Ratings of a Fate Core cast (skills); Accelerated's would be approaches (R13.1).
HERO_SKILLS = {"Fight": 2, "Notice": 2, "Athletics": 1, "Physique": 3, "Will": 1, "Empathy": 1}
ALLY_SKILLS = {"Fight": 1, "Notice": 2, "Athletics": 2, "Empathy": 3, "Rapport": 2, "Will": 3}
GHOUL_SKILLS = {"Fight": 3, "Notice": 2, "Athletics": 1, "Physique": 5, "Empathy": 0}

# R13.1: the same cast under Accelerated rolls approaches; each skill's rating goes to one.
APPROACH_OF = {
    "Fight": "Forceful",
    "Notice": "Careful",
    "Athletics": "Quick",
    "Physique": "Flashy",
    "Rapport": "Flashy",
    "Will": "Clever",
    "Empathy": "Sneaky",
}


def rated(ruleset: Ruleset, skill: str) -> str:
    """The rating a roll names under ``ruleset``: the skill, or its approach (R13.1)."""
    return APPROACH_OF[skill] if ruleset.approaches else skill


def ratings(ruleset: Ruleset, skills: dict[str, int]) -> dict[str, int]:
    return {rated(ruleset, k): v for k, v in skills.items()}


PARRY = Stunt(name="Parry", skill="Fight", bonus=2, actions=("defend",))
BRAWLER = Stunt(name="Brawler", skill="Fight", bonus=2, actions=("attack",))
WATCHFUL = Stunt(name="Watchful", skill="Notice", bonus=2, actions=("overcome",))


def character(
    character_id: str,
    name: str,
    skills: dict[str, int],
    *,
    owners: tuple[str, ...] = (),
    stress: tuple[StressTrack, ...] | None = None,
    stunts: tuple[Stunt, ...] = (),
    slots: bool = False,
) -> Sheet:
    """A sheet that leaves stress (and, unless ``slots``, consequences) to the ruleset."""
    return Sheet(
        id=character_id,
        name=name,
        owners=owners,
        skills=skills,
        stunts=stunts,
        fate_points=2,
        refresh=3,
        consequences=STANDARD_SLOTS if slots else None,
        stress=stress,
    )


def cast(ruleset: Ruleset, *hero_stress: StressTrack) -> Table:
    hero = character(
        "b",
        "Brousseau",
        ratings(ruleset, HERO_SKILLS),
        owners=("paul",),
        stress=hero_stress or None,
        stunts=(PARRY, BRAWLER, WATCHFUL),
    )
    ally = character("m", "Margot", ratings(ruleset, ALLY_SKILLS), owners=("anna",))
    ghoul = character("g", "Ghoul", ratings(ruleset, GHOUL_SKILLS))
    return Table(world(hero, ally, ghoul, ruleset=ruleset))


def gm_hit(table: Table, target: str, shifts: int, *, kind: HarmKind | None = None) -> str:
    """The GM's ghoul (Fight 3) attacks ``target`` against passive 3 - ``shifts`` on flat
    dice: a hit of exactly ``shifts`` (a full hit when that is success with style)."""
    command = StartAction(
        type="attack",
        actor_id="g",
        skill=rated(table.ruleset, "Fight"),
        target_id=target,
        passive_rating=3 - shifts,
        attack_kind=kind,
    )
    table.run(lambda s: actions.start_action(s, command, GM_USER, dice(ZERO), table.ruleset))
    action_id = table.action().id
    table.run(lambda s: actions.pass_invokes(s, action_id, "actor", GM_USER, table.ruleset))
    if table.action().pending_choice == "attack_style":
        table.run(lambda s: actions.choose(s, action_id, "full_hit", GM_USER))
    return action_id


def absorb_command(
    action_id: str, *marks: tuple[str, tuple[int, ...]], **slots: str
) -> AbsorbCommand:
    return AbsorbCommand(
        action_id, tuple(StressMark(t, boxes) for t, boxes in marks), consequences=slots
    )


def absorb(table: Table, action_id: str, *marks: tuple[str, tuple[int, ...]], **slots: str) -> None:
    command = absorb_command(action_id, *marks, **slots)
    table.run(lambda s: actions.absorb(s, command, GM_USER))


def refused_absorb(
    table: Table, action_id: str, *marks: tuple[str, tuple[int, ...]], **slots: str
) -> str:
    """The absorb is refused as invalid and nothing changes; the refusal in English, as the
    bridge words it from the module's en.json."""
    before = table.state
    command = absorb_command(action_id, *marks, **slots)
    refusal = refused("invalid", lambda: actions.absorb(table.state, command, GM_USER))
    assert table.state is before
    return worded(refusal.code, refusal.message, refusal.params)


def marks(table: Table, character_id: str) -> dict[str, list[bool]]:
    return {t.id: [b.marked for b in t.boxes] for t in table.character(character_id).stress}


def values(table: Table, character_id: str) -> dict[str, tuple[int, ...]]:
    return {t.id: tuple(b.value for b in t.boxes) for t in table.character(character_id).stress}


def start(table: Table, kind: HarmKind = "physical", **kwargs: object) -> str:
    sides = (
        conflict.ConflictSideSpec("Hunters", ("b", "m")),
        conflict.ConflictSideSpec("Dead", ("g",)),
    )
    table.run(
        lambda s: conflict.start_conflict(
            s,
            "Crypt",
            kind,
            sides,
            GM_USER,
            table.ruleset,
            **kwargs,  # type: ignore[arg-type]
        )
    )
    return next(c.id for c in table.state.conflicts.values() if c.state == "open")


# --- R13.1 ratings -----------------------------------------------------------------------


def test_r13_1_skills_in_core_and_condensed_approaches_in_accelerated() -> None:
    # R13.1: Accelerated rolls its six approaches like skills.
    assert FATE_CORE.ratings == FATE_CONDENSED.ratings == "skills"
    assert FATE_ACCELERATED.ratings == "approaches"
    approaches = {"Careful": 1, "Clever": 2, "Flashy": 0, "Forceful": 3, "Quick": 2, "Sneaky": 1}
    table = Table(world(character("f", "Fae", approaches), ruleset=FATE_ACCELERATED))
    command = StartAction("overcome", "f", "Forceful", passive_rating=1)
    table.run(lambda s: actions.start_action(s, command, GM_USER, dice(ZERO), table.ruleset))
    roll = table.action().actor.roll
    assert (roll.skill, roll.skill_rating, roll.total) == ("Forceful", 3, 3)
    assert set(RULESETS) == {"unwritten", "fate-core", "fate-condensed", "fate-accelerated"}


# --- R13.2 stress boxes --------------------------------------------------------------------


def test_r13_2_each_rulesets_tracks_grow_with_physique_and_will() -> None:
    # R13.2: Core 1-2, +3 at Average-Fair, +3 and 4 at Good and up; Condensed 3 one-shift
    # boxes, 4 at Average-Fair, 6 at Good and up; Accelerated one track of 1, 2, 3.
    def tracks(ruleset: Ruleset, physique: int, will: int) -> dict[str, tuple[int, ...]]:
        sheet = character("x", "X", {"Physique": physique, "Will": will})
        return values(Table(world(sheet, ruleset=ruleset)), "x")

    assert tracks(FATE_CORE, 0, 1) == {"physical": (1, 2), "mental": (1, 2, 3)}
    assert tracks(FATE_CORE, 2, 3) == {"physical": (1, 2, 3), "mental": (1, 2, 3, 4)}
    assert tracks(FATE_CORE, 6, 4) == {"physical": (1, 2, 3, 4), "mental": (1, 2, 3, 4)}
    assert tracks(FATE_CONDENSED, 0, 2) == {"physical": (1,) * 3, "mental": (1,) * 4}
    assert tracks(FATE_CONDENSED, 3, 1) == {"physical": (1,) * 6, "mental": (1,) * 4}
    assert tracks(FATE_ACCELERATED, 5, 5) == {"stress": (1, 2, 3)}


def test_r13_2_core_one_box_per_hit_the_4_box_when_the_3_box_is_marked() -> None:
    # R13.2 (Core): one box per hit, worth at least its shifts; that box marked, a higher one.
    table = cast(FATE_CORE, track("physical", "physical", 1, 2, 3, 4, marked=[2]))
    hit = gm_hit(table, "b", 3)
    assert table.action().stress_rule == "one_box"
    refused_absorb(table, hit, ("physical", (0, 1)))  # 1 + 2: two boxes
    assert "too" not in refused_absorb(table, hit, ("physical", (1,)))  # box 2 < 3 shifts
    refused_absorb(table, hit, ("physical", (2,)))  # the 3-box is marked
    absorb(table, hit, ("physical", (3,)))
    assert marks(table, "b")["physical"] == [False, False, True, True]
    effect = next(e for e in table.action().effects if e.kind == "stress")
    assert (effect.count, effect.detail) == (1, "4")


def test_r13_2_core_the_smallest_free_box_that_fits_with_consequences() -> None:
    # R13.2: consequences take part of the hit, one box the rest; a bigger box than needed
    # is refused while a smaller free one fits; a box the consequences make needless too.
    table = cast(FATE_CORE, track("physical", "physical", 1, 2, 3, 4))
    hit = gm_hit(table, "b", 4)
    message = refused_absorb(table, hit, ("physical", (3,)), mild="Winded")
    assert "box 2" in message
    refused_absorb(table, hit, ("physical", (0,)), moderate="Cracked Rib")
    refused_absorb(table, hit, ("physical", (0, 1)), mild="Winded")
    absorb(table, hit, ("physical", (1,)), mild="Winded")
    assert marks(table, "b")["physical"] == [False, True, False, False]


def test_r13_2_core_never_sums_boxes_so_a_big_hit_takes_the_character_out() -> None:
    # R13.2: boxes 1-4 and no consequences absorb at most 4 (the old summing rule: 10).
    hero = character("b", "Brousseau", HERO_SKILLS, owners=("paul",), slots=False)
    lone = Table(world(hero, character("g", "Ghoul", GHOUL_SKILLS), ruleset=FATE_CORE))
    bare = lone.character("b").model_copy(update={"consequences": ()})
    lone.state = lone.state.model_copy(update={"characters": {**lone.state.characters, "b": bare}})
    gm_hit(lone, "b", 5)
    assert lone.character("b").overwhelmed
    assert lone.action().state == "resolved"


def test_r13_2_accelerated_box_3_takes_a_3_shift_hit_of_either_kind() -> None:
    # R13.2 (Accelerated): one track of 1, 2, 3; one box per hit absorbing its value.
    table = cast(FATE_ACCELERATED)
    hit = gm_hit(table, "b", 3)
    refused_absorb(table, hit, ("stress", (0, 1)))
    absorb(table, hit, ("stress", (2,)))
    assert marks(table, "b") == {"stress": [False, False, True]}
    mental = gm_hit(table, "b", 2, kind="mental")
    absorb(table, mental, ("stress", (1,)))
    assert marks(table, "b") == {"stress": [False, True, True]}


def test_r13_2_condensed_three_one_shift_boxes_for_three_shifts() -> None:
    # R13.2 (Condensed): each box absorbs one shift; any number may be marked for one hit.
    table = cast(FATE_CONDENSED)
    assert values(table, "b")["physical"] == (1,) * 6  # Physique Good
    hit = gm_hit(table, "b", 3)
    assert table.action().stress_rule == "ones"
    refused_absorb(table, hit, ("physical", (0, 1)))
    absorb(table, hit, ("physical", (0, 1, 2)))
    assert marks(table, "b")["physical"] == [True, True, True, False, False, False]


def test_r13_2_an_escalating_sheet_under_condensed_is_one_box_per_hit() -> None:
    # R13.2 Decision: the sheet's shape, the ruleset's rule: a box worth more is marked
    # alone, never summed with others.
    table = cast(FATE_CONDENSED, track("physical", "physical", 1, 2, 3))
    hit = gm_hit(table, "b", 3)
    refused_absorb(table, hit, ("physical", (0, 1)))
    absorb(table, hit, ("physical", (2,)))
    assert marks(table, "b")["physical"] == [False, False, True]


@given(
    ruleset=st.sampled_from([FATE_CORE, FATE_ACCELERATED]),
    shifts=st.integers(1, 6),
    chosen=st.lists(st.integers(0, 3), max_size=3),
    slots=st.sets(st.sampled_from(["mild", "moderate", "severe"])),
)
def test_r13_2_one_box_rulesets_never_mark_two_boxes_and_always_absorb_the_hit(
    ruleset: Ruleset, shifts: int, chosen: list[int], slots: set[str]
) -> None:
    # R13.2: whatever a player asks, an accepted absorb marks at most one box and covers
    # the hit; a refused one changes nothing.
    track_id = "physical" if ruleset is FATE_CORE else "stress"
    values_here = (1, 2, 3, 4) if ruleset is FATE_CORE else (1, 2, 3)
    table = cast(ruleset, track(track_id, "physical", *values_here))
    hit = gm_hit(table, "b", shifts)
    if table.action().state != "absorbing":
        assert table.character("b").overwhelmed
        return
    command = absorb_command(
        hit, *(((track_id, tuple(chosen)),) if chosen else ()), **dict.fromkeys(slots, "Hurt")
    )
    before = table.state
    try:
        table.run(lambda s: actions.absorb(s, command, GM_USER))
    except RuleViolation:
        assert table.state is before
        return
    marked = [
        v
        for t in table.character("b").stress
        for v, b in zip(values_here, t.boxes, strict=True)
        if b.marked
    ]
    assert len(marked) <= 1
    taken = sum({"mild": 2, "moderate": 4, "severe": 6}[s] for s in slots)
    assert sum(marked) + taken >= shifts


# --- R13.3 consequences --------------------------------------------------------------------


def test_r13_3_superb_physique_adds_a_mild_slot_for_physical_harm_only() -> None:
    # R13.3: Core and Condensed; Physique Superb adds a mild slot that takes only physical
    # harm (Will Superb: mental). Accelerated has none.
    for ruleset in (FATE_CORE, FATE_CONDENSED):
        table = cast(ruleset)
        ghoul = table.character("g")
        extra = [s for s in ghoul.consequences if s.harm is not None]
        assert [(s.severity, s.harm) for s in extra] == [(2, "physical")]
        assert [s.severity for s in table.character("b").consequences] == [2, 4, 6]
    assert all(s.harm is None for s in cast(FATE_ACCELERATED).character("g").consequences)

    table = cast(FATE_CORE)
    table.run(
        lambda s: change_settings(s, GM_USER, trust_player_ratings=True)
    )  # no proposal step for the player's attack below
    attack = StartAction(
        "attack", "b", "Fight", target_id="g", passive_rating=0, attack_kind="mental"
    )
    # The GM may act for Brousseau out of turn (no conflict here anyway).
    table.run(lambda s: actions.start_action(s, attack, GM_USER, dice((1, 1, 0, 0)), table.ruleset))
    action_id = table.action().id
    table.run(lambda s: actions.pass_invokes(s, action_id, "actor", GM_USER, table.ruleset))
    table.run(lambda s: actions.choose(s, action_id, "full_hit", GM_USER))
    assert table.action().pending_hit == 4
    message = refused_absorb(table, action_id, ("mental", (0,)), **{"mild-physical": "Torn"})
    assert "physical" in message
    physical_hit = gm_hit_on_ghoul(table, 2)
    absorb(table, physical_hit, **{"mild-physical": "Torn Arm"})
    slot = next(s for s in table.character("g").consequences if s.id == "mild-physical")
    assert slot.aspect_id is not None and table.state.aspects[slot.aspect_id].name == "Torn Arm"
    plain_mild = next(s for s in table.character("g").consequences if s.id == "mild")
    assert plain_mild.aspect_id is None


def gm_hit_on_ghoul(table: Table, shifts: int) -> str:
    command = StartAction(
        type="attack",
        actor_id="b",
        skill=rated(table.ruleset, "Fight"),
        target_id="g",
        passive_rating=2 - shifts,
    )
    table.run(lambda s: actions.start_action(s, command, GM_USER, dice(ZERO), table.ruleset))
    action_id = table.action().id
    table.run(lambda s: actions.pass_invokes(s, action_id, "actor", GM_USER, table.ruleset))
    return action_id


# --- R13.4 stress clears --------------------------------------------------------------------


def test_r13_4_core_clears_stress_when_the_conflict_ends() -> None:
    # R13.4 (Core): after the conflict.
    table = cast(FATE_CORE)
    cid = start(table)
    hit = gm_hit(table, "b", 1)
    absorb(table, hit, ("physical", (0,)))
    assert table.state.conflicts[cid].clears_stress
    assert marks(table, "b")["physical"][0]
    table.run(lambda s: conflict.end_conflict(s, cid, GM_USER))
    assert not any(any(v) for v in marks(table, "b").values())


def test_r13_4_condensed_and_accelerated_clear_stress_at_the_end_of_the_scene() -> None:
    # R13.4: not after the conflict, at the end of each scene.
    for ruleset, track_id in ((FATE_CONDENSED, "physical"), (FATE_ACCELERATED, "stress")):
        table = cast(ruleset)
        cid = start(table)
        hit = gm_hit(table, "b", 1)
        absorb(table, hit, (track_id, (0,)))
        table.run(lambda s, c=cid: conflict.end_conflict(s, c, GM_USER))  # type: ignore[misc]
        assert marks(table, "b")[track_id][0], ruleset.id
        events, summary = end_scene(table.state, GM_USER, ruleset=ruleset)
        table.run(lambda _s, e=events: e)  # type: ignore[misc]
        assert not any(any(v) for v in marks(table, "b").values())
        assert "b" in summary.stress_cleared
    # Unwritten has no stress to clear: nothing changes there.
    assert UNWRITTEN.stress_clears is None


# --- R13.5 turn order -------------------------------------------------------------------


def test_r13_5_core_orders_by_notice_then_athletics_or_by_empathy_then_rapport() -> None:
    # R13.5 (Core): physical by Notice, ties by Athletics then Physique; mental by
    # Empathy, ties by Rapport then Will; then the GM.
    table = cast(FATE_CORE)
    cid = start(table)
    c = table.state.conflicts[cid]
    assert c.order_skill == "Notice"
    # All Notice 2; Athletics 2, 1, 1; between the last two, Physique 5 before 3.
    assert c.order == ("m", "g", "b") and c.ties == ()
    mental = cast(FATE_CORE)
    mid = start(mental, "mental")
    m = mental.state.conflicts[mid]
    assert m.order_skill == "Empathy" and m.order[0] == "m"


def test_r13_5_accelerated_orders_by_quick_or_careful() -> None:
    # R13.5 (Accelerated, seed 003): Quick in a physical conflict, Careful in a mental one.
    assert FATE_ACCELERATED.turn_order_skills == {"physical": "Quick", "mental": "Careful"}
    fae = Table(
        world(
            character("b", "Brousseau", {"Quick": 1, "Careful": 3}, owners=("paul",)),
            character("m", "Margot", {"Quick": 3, "Careful": 0}, owners=("anna",)),
            character("g", "Ghoul", {"Quick": 2, "Careful": 2}),
            ruleset=FATE_ACCELERATED,
        )
    )
    cid = start(fae)
    assert fae.state.conflicts[cid].order == ("m", "g", "b")


def test_r13_5_condensed_elective_whoever_acted_picks_who_is_next() -> None:
    # R13.5 (Condensed): the GM picks who opens; whoever acted picks who goes next
    # (the GM for an NPC); the last to act in an exchange picks who opens the next.
    table = cast(FATE_CONDENSED)
    refused("invalid", lambda: start(table, first_id="nobody"))
    cid = start(table, first_id="m")
    c = table.state.conflicts[cid]
    assert c.order_method == "elective" and c.current == "m"
    refused("forbidden", lambda: conflict.next_turn(table.state, cid, PAUL, "b"))
    refused("invalid", lambda: conflict.next_turn(table.state, cid, ANNA))  # no pick
    refused("invalid", lambda: conflict.next_turn(table.state, cid, ANNA, "m"))  # acted
    table.run(lambda s: conflict.next_turn(s, cid, ANNA, "g"))
    assert table.state.conflicts[cid].current == "g"
    refused("forbidden", lambda: conflict.next_turn(table.state, cid, PAUL, "b"))  # GM's NPC
    table.run(lambda s: conflict.next_turn(s, cid, GM_USER, "b"))
    c = table.state.conflicts[cid]
    assert (c.current, c.acted, c.exchange) == ("b", ("m", "g"), 1)
    # Everyone acted: Brousseau, last, picks who opens the next exchange; anyone still in.
    table.run(lambda s: conflict.next_turn(s, cid, PAUL, "b"))
    c = table.state.conflicts[cid]
    assert (c.current, c.acted, c.exchange) == ("b", (), 2)


def test_r13_5_a_player_acts_only_on_its_turn_the_gm_for_anyone_defend_needs_none() -> None:
    # R13.5 Decision: a character acts only on its turn; the GM may act out of turn for
    # anyone; defend is a reaction and needs no turn.
    table = cast(FATE_CORE)
    cid = start(table)
    assert table.state.conflicts[cid].current == "m"
    overcome = StartAction("overcome", "b", "Athletics", passive_rating=1)
    refusal = refused(
        "not_your_turn",
        lambda: actions.start_action(table.state, overcome, PAUL, dice(ZERO), table.ruleset),
    )
    assert "Margot" in worded(refusal.code, refusal.message, refusal.params)
    table.run(lambda s: actions.start_action(s, overcome, GM_USER, dice(ZERO), table.ruleset))
    # The ghoul attacks Brousseau, who defends though it is Margot's turn.
    attack = StartAction("attack", "g", "Fight", opposer_id="b")
    table.run(lambda s: actions.start_action(s, attack, GM_USER, dice(ZERO), table.ruleset))
    action_id = table.action().id
    assert table.action().state == "awaiting_opposition"
    table.run(
        lambda s: actions.oppose(s, action_id, "Fight", PAUL, dice(ZERO, ZERO), table.ruleset)
    )
    assert table.action().opposition.roll.total == 2
    table.run(lambda s: conflict.next_turn(s, cid, ANNA))
    table.run(lambda s: conflict.next_turn(s, cid, GM_USER))
    assert table.state.conflicts[cid].current == "b"
    table.run(lambda s: actions.start_action(s, overcome, PAUL, dice(ZERO), table.ruleset))


# --- R13.6 concession and the end ------------------------------------------------------------


def test_r13_6_concession_pays_one_plus_its_consequences_when_the_conflict_ends() -> None:
    # R13.6: one fate point plus one per consequence taken in this conflict, paid when the
    # conflict ends; conceding ends the character's part.
    table = cast(FATE_CORE)
    cid = start(table)
    hit = gm_hit(table, "b", 4)
    absorb(table, hit, ("physical", (1,)), mild="Bleeding")
    assert table.state.conflicts[cid].consequences_taken == {"b": 1}
    points = table.character("b").fate_points
    refused("forbidden", lambda: conflict.concede(table.state, cid, "b", ANNA))
    # Not while dice are on the table for an action against it.
    rolled = StartAction("attack", "g", "Fight", target_id="b", passive_rating=0)
    table.run(lambda s: actions.start_action(s, rolled, GM_USER, dice(ZERO), table.ruleset))
    refused("wrong_state", lambda: conflict.concede(table.state, cid, "b", PAUL))
    rolled_id = table.action().id
    table.run(lambda s: actions.cancel(s, rolled_id, GM_USER))
    table.run(lambda s: conflict.concede(s, cid, "b", PAUL))
    c = table.state.conflicts[cid]
    assert c.state == "open" and c.conceded == ("b",)
    assert table.character("b").overwhelmed
    assert table.character("b").fate_points == points  # not yet: the conflict goes on
    refused("invalid", lambda: conflict.concede(table.state, cid, "b", PAUL))
    table.run(lambda s: conflict.concede(s, cid, "m", ANNA))
    c = table.state.conflicts[cid]
    assert (c.state, c.winner) == ("ended", "s2")  # at once: only the ghoul's side is left
    assert table.character("b").fate_points == points + 2
    assert table.character("m").fate_points == 2 + 1


def test_r13_6_taking_the_last_foe_out_ends_the_conflict_at_once() -> None:
    # R13.6: the conflict ends when only one side has characters in it, not at next turn.
    table = cast(FATE_ACCELERATED)
    cid = start(table)
    ghoul = table.character("g").model_copy(update={"consequences": (), "stress": ()})
    table.state = table.state.model_copy(
        update={"characters": {**table.state.characters, "g": ghoul}}
    )
    gm_hit_on_ghoul(table, 1)
    assert table.character("g").overwhelmed
    c = table.state.conflicts[cid]
    assert (c.state, c.winner) == ("ended", "s1")
    refused("wrong_state", lambda: conflict.next_turn(table.state, cid, GM_USER))


# --- R13.7 full defense -----------------------------------------------------------------


def test_r13_7_full_defense_adds_two_to_defend_rolls_until_the_next_turn() -> None:
    # R13.7 (Core): instead of acting on its turn, +2 on every defend roll until its next turn.
    table = cast(FATE_CORE)
    cid = start(table)
    refused("not_your_turn", lambda: conflict.full_defense(table.state, cid, "b", PAUL, FATE_CORE))
    table.run(lambda s: conflict.next_turn(s, cid, ANNA))  # Margot -> the ghoul
    table.run(lambda s: conflict.next_turn(s, cid, GM_USER))  # -> Brousseau
    table.run(lambda s: conflict.full_defense(s, cid, "b", PAUL, FATE_CORE))
    refused("invalid", lambda: conflict.full_defense(table.state, cid, "b", PAUL, FATE_CORE))
    table.run(lambda s: conflict.next_turn(s, cid, PAUL))  # -> Margot, exchange 2
    # The GM acts for the ghoul out of turn; Brousseau defends at +2.
    attack = StartAction("attack", "g", "Fight", opposer_id="b")
    table.run(lambda s: actions.start_action(s, attack, GM_USER, dice(ZERO), table.ruleset))
    action_id = table.action().id
    table.run(
        lambda s: actions.oppose(s, action_id, "Fight", PAUL, dice(ZERO, ZERO), table.ruleset)
    )
    roll = table.action().opposition.roll
    assert (roll.defense_bonus, roll.total) == (2, 4)
    assert table.state.conflicts[cid].full_defense == ("b",)
    table.run(lambda s: conflict.next_turn(s, cid, ANNA))  # -> the ghoul
    table.run(lambda s: conflict.next_turn(s, cid, GM_USER))  # -> Brousseau: it ends
    assert table.state.conflicts[cid].full_defense == ()


def test_r13_7_condensed_only_when_the_world_turns_it_on_accelerated_never() -> None:
    # R13.7: Condensed as an option; Accelerated has none.
    fae = cast(FATE_ACCELERATED)
    fid = start(fae)
    first = fae.state.conflicts[fid].current or ""
    refused(
        "not_in_ruleset",
        lambda: conflict.full_defense(fae.state, fid, first, GM_USER, FATE_ACCELERATED),
    )
    table = cast(FATE_CONDENSED)
    cid = start(table, first_id="b")
    refused(
        "not_in_ruleset", lambda: conflict.full_defense(table.state, cid, "b", PAUL, FATE_CONDENSED)
    )
    table.run(lambda s: change_settings(s, GM_USER, full_defense=True))
    table.run(lambda s: conflict.full_defense(s, cid, "b", PAUL, FATE_CONDENSED))
    assert table.state.conflicts[cid].full_defense == ("b",)


# --- R13.8 stunts -----------------------------------------------------------------------


def test_r13_8_only_the_stunts_the_roll_names_apply_each_once() -> None:
    # R13.8: none unless named; each named stunt must be the actor's and fit its skill and
    # action; the card's roll names each stunt used; a stunt counts once.
    table = cast(FATE_CORE)
    plain = StartAction("overcome", "b", "Notice", passive_rating=0)
    table.run(lambda s: actions.start_action(s, plain, GM_USER, dice(ZERO), table.ruleset))
    assert table.action().actor.roll.stunt_bonus == 0
    named = StartAction("overcome", "b", "Notice", passive_rating=0, stunts=("Watchful",))
    table.run(lambda s: actions.start_action(s, named, GM_USER, dice(ZERO), table.ruleset))
    roll = table.action().actor.roll
    assert (roll.stunt_bonus, roll.stunts, roll.total) == (2, ("Watchful",), 4)
    for bad in (("Brawler",), ("Watchful", "Watchful"), ("Flying",), ("Parry",)):
        before = table.state
        command = StartAction("overcome", "b", "Notice", passive_rating=0, stunts=bad)
        refused(
            "invalid",
            lambda c=command: actions.start_action(  # type: ignore[misc]
                table.state, c, GM_USER, dice(ZERO), table.ruleset
            ),
        )
        assert table.state is before
    # Unwritten (no R13.8): a roll naming none keeps every matching stunt.
    old = cast(UNWRITTEN)
    old.run(lambda s: actions.start_action(s, plain, GM_USER, dice(ZERO), old.ruleset))
    assert old.action().actor.roll.stunts == ("Watchful",)


def test_r13_8_the_defender_names_its_stunts_too() -> None:
    # R13.8: a defend roll names the stunts that apply to defending.
    table = cast(FATE_CORE)
    attack = StartAction("attack", "g", "Fight", opposer_id="b")
    table.run(lambda s: actions.start_action(s, attack, GM_USER, dice(ZERO), table.ruleset))
    action_id = table.action().id
    refused(
        "invalid",
        lambda: actions.oppose(
            table.state, action_id, "Fight", PAUL, dice(ZERO), table.ruleset, ("Brawler",)
        ),
    )
    table.run(
        lambda s: actions.oppose(
            s, action_id, "Fight", PAUL, dice(ZERO, ZERO), table.ruleset, ("Parry",)
        )
    )
    roll = table.action().opposition.roll
    assert (roll.stunts, roll.stunt_bonus) == (("Parry",), 2)


# --- R13.9 choosing the ruleset --------------------------------------------------------------


def test_r13_9_the_gm_changes_the_ruleset_between_scenes_and_the_log_replays() -> None:
    # R13.9: set by the GM; between procedures; the log is kept and replays to the state.
    table = cast(FATE_CONDENSED)
    initial = table.state
    refused("forbidden", lambda: change_ruleset(table.state, PAUL, "fate-core"))
    refused("invalid", lambda: change_ruleset(table.state, GM_USER, "dresden-files"))
    assert change_ruleset(table.state, GM_USER, "fate-condensed") == []
    cid = start(table, first_id="b")
    refusal = refused("wrong_state", lambda: change_ruleset(table.state, GM_USER, "fate-core"))
    assert "Crypt" in worded(refusal.code, refusal.message, refusal.params)
    table.run(lambda s: conflict.end_conflict(s, cid, GM_USER))
    table.run(lambda s: change_ruleset(s, GM_USER, "fate-core"))
    assert table.state.ruleset == "fate-core" and table.ruleset is FATE_CORE
    cid = start(table)
    assert table.state.conflicts[cid].order_method == ""  # ranked, by Notice
    assert replay(table.log, initial) == table.state
    # Replay never reads the ruleset: the same log from another world's start gives the
    # same records (a world stored as the old fate-condensed replays as it always did).
    other = replay(table.log, initial.model_copy(update={"ruleset": "unwritten"}))
    assert other == table.state
    payloads = [e.model_dump(mode="json") for e in table.log]
    assert replay([EVENT_ADAPTER.validate_python(p) for p in payloads], initial) == table.state
