"""The aspect index cards list aspects from: alike boosts as one entry, derived states
equal to building afresh (issue 9: cards stay small and cheap as a scene grows)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from bridge.rules.state import Action, Aspect, Roll, Side, WorldState
from bridge.service import cards
from bridge.service.view_index import AspectIndex, IdentityCache, OpenActions, aspect_index

NAMES = ("Hero's momentum", "Opening", "On fire")
HOLDERS = ("hero", "villain", "gm")


def boost(aspect_id: str, name: str, holder: str) -> Aspect:
    return Aspect(id=aspect_id, name=name, kind="boost", free_invokes={holder: 1})


def view(index: AspectIndex) -> list[tuple[str, int]]:
    return [(e.aspect.id, e.count) for e in index.entries()]


def held(index: AspectIndex) -> dict[str, int]:
    return {h: index.held_boosts(h) for h in HOLDERS}


# One edit of an aspect map: add or replace aspect N (a boost, or a situation aspect),
# or remove it.
edit = st.tuples(
    st.integers(0, 11),
    st.sampled_from(["boost", "situation", "remove", "spent"]),
    st.sampled_from(NAMES),
    st.sampled_from(HOLDERS),
)


@given(st.lists(st.lists(edit, max_size=4), max_size=12))
def test_a_derived_index_equals_building_afresh(
    commits: list[list[tuple[int, str, str, str]]],
) -> None:
    # R12.6: boosts held and spent; each commit's index derived from the one before.
    aspects: dict[str, Aspect] = {}
    index = AspectIndex(aspects)
    for commit in commits:
        aspects = dict(aspects)
        for number, what, name, holder in commit:
            aspect_id = f"x{number}"
            if what == "remove":
                aspects.pop(aspect_id, None)
            elif what == "spent":
                aspects[aspect_id] = Aspect(id=aspect_id, name=name, kind="boost")
            elif what == "boost":
                aspects[aspect_id] = boost(aspect_id, name, holder)
            else:
                aspects[aspect_id] = Aspect(id=aspect_id, name=name, kind="situation")
        # From the ids the commit put or dropped (as derive_emits passes them), and by
        # looking at every id: both as built afresh.
        touched = [f"x{number}" for number, *_ in commit]
        scanned = AspectIndex.derived(index, aspects)
        index = AspectIndex.derived(index, aspects, touched)
        fresh = AspectIndex(aspects)
        assert view(index) == view(scanned) == view(fresh)
        assert held(index) == held(scanned) == held(fresh)
        assert sum(count for _id, count in view(index)) == len(aspects)
        for holder in HOLDERS:
            assert index.held_boosts(holder) == sum(
                1 for a in aspects.values() if a.kind == "boost" and a.free_invokes.get(holder)
            )


def test_alike_boosts_are_one_entry_with_their_count() -> None:
    # R12.6: three momentum boosts the hero holds, one the villain holds, one situation aspect.
    aspects = {
        "b1": boost("b1", "Hero's momentum", "hero"),
        "b3": boost("b3", "Hero's momentum", "hero"),
        "b2": boost("b2", "Hero's momentum", "hero"),
        "b4": boost("b4", "Hero's momentum", "villain"),
        "s1": Aspect(id="s1", name="Dark alley", kind="situation"),
    }
    state = WorldState(aspects=aspects)
    shown = cards.scene_state(state)["aspects"]
    assert [(a["id"], a["name"], a["count"], a["free_invokes"]) for a in shown] == [
        ("b1", "Hero's momentum", 3, {"hero": 1}),
        ("b4", "Hero's momentum", 1, {"villain": 1}),
        ("s1", "Dark alley", 1, {}),
    ]
    index = aspect_index(state.aspects)
    assert index.held_boosts("hero") == 3
    assert index.held_boosts("villain") == 1
    assert index.held_boosts("gm") == 0
    # Spending the entry's representative leaves the other two, now led by the next id.
    spent = {k: v for k, v in aspects.items() if k != "b1"}
    after = aspect_index(spent, base=state.aspects)
    assert view(after)[0] == ("b2", 2)
    assert after.held_boosts("hero") == 2


def action(number: int, state: str) -> Action:
    """Action ``a{number}``, open or (``closed``) resolved."""
    side = Side(roll=Roll())
    return Action(
        id=f"a{number}",
        type="overcome",
        state="resolved" if state == "closed" else "invoking",
        actor=side,
        opposition=side,
        opposition_kind="passive",
        requested_by="paul",
    )


# One change of an action map: action N opened, moved along, closed, or (an undo) dropped.
action_edit = st.tuples(st.integers(0, 7), st.sampled_from(["open", "closed", "drop"]))


def edited(
    actions: dict[str, Action], commit: list[tuple[int, str]], dropped: set[int]
) -> dict[str, Action]:
    """A new action map: ``actions`` with one commit's edits (``dropped`` grows)."""
    changed = dict(actions)
    for number, what in commit:
        if what == "drop":
            # A dropped action's id is never used again (the world's counter).
            if changed.pop(f"a{number}", None) is not None:
                dropped.add(number)
        elif number not in dropped:
            changed[f"a{number}"] = action(number, what)
    return changed


@given(st.lists(st.lists(action_edit, max_size=3), max_size=12))
def test_derived_open_actions_equal_building_afresh(
    commits: list[list[tuple[int, str]]],
) -> None:
    actions: dict[str, Action] = {}
    dropped: set[int] = set()
    index = OpenActions(actions)
    for commit in commits:
        actions = edited(actions, commit, dropped)
        touched = [f"a{number}" for number, _ in commit]
        scanned = OpenActions.derived(index, actions)
        index = OpenActions.derived(index, actions, touched)
        fresh = [a.id for a in actions.values() if not a.closed]
        assert index.ids() == scanned.ids() == fresh, commits


@given(
    st.lists(st.tuples(st.lists(action_edit, max_size=3), st.booleans()), max_size=16),
    st.sampled_from([2, 4, 512]),
)
def test_open_actions_noted_per_commit_and_read_now_and_then_equal_building_afresh(
    commits: list[tuple[list[tuple[int, str]], bool]], size: int
) -> None:
    # Issue 9: each commit only notes where its action map came from; a read (world.state)
    # derives along the notes, or builds afresh when they lead to no known index (a cache
    # too small to hold them): either way what building the map's index afresh gives.
    cache: IdentityCache[Action, OpenActions] = IdentityCache(
        OpenActions, OpenActions.derived, size
    )
    actions: dict[str, Action] = {}
    cache(actions)
    dropped: set[int] = set()
    for commit, read in commits:
        before, actions = actions, edited(actions, commit, dropped)
        cache.note(actions, before, [f"a{number}" for number, _ in commit])
        if read:
            assert cache(actions).ids() == [a.id for a in actions.values() if not a.closed]
    assert cache(actions).ids() == [a.id for a in actions.values() if not a.closed]
