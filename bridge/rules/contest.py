"""Contests (R11.2): exchanges of one overcome roll per side, first to the target wins."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from bridge.rules.actions import (
    Principal,
    StartAction,
    declare,
    may_control,
    pending_fate_point,
)
from bridge.rules.dice import DiceSource
from bridge.rules.draft import Draft
from bridge.rules.errors import refused
from bridge.rules.events import Event
from bridge.rules.ruleset import Ruleset
from bridge.rules.state import (
    Action,
    Aspect,
    Contest,
    ContestSide,
    Earning,
    ExchangeResult,
    ExchangeRoll,
    WorldState,
)


@dataclass(frozen=True)
class SideSpec:
    name: str
    members: tuple[str, ...]


def start_contest(
    state: WorldState,
    name: str,
    mode: Literal["direct", "environment"],
    skill: str,
    sides: Sequence[SideSpec],
    principal: Principal,
    ruleset: Ruleset,
    passive_rating: int | None = None,
) -> list[Event]:
    """The GM sets up sides (R10.1 teamwork inside a side) and the mode."""
    if not principal.is_gm:
        raise refused("forbidden", "gm_only")
    if len(sides) < 2 and mode == "direct":
        raise refused("invalid", "two_sides_needed", "sides")
    if not sides:
        raise refused("invalid", "contest_needs_sides", "sides")
    if mode == "environment" and passive_rating is None:
        raise refused("invalid", "environment_needs_passive", "passive_rating")
    draft = Draft(state, "contest.start")
    seen: set[str] = set()
    built: list[ContestSide] = []
    for index, spec in enumerate(sides):
        if not spec.members:
            raise refused("invalid", "side_needs_character", f"sides.{index}")
        for member in spec.members:
            if member not in draft.characters:
                raise refused("unknown_actor", "unknown_actor_sync", f"sides.{index}", id=member)
            if member in seen:
                raise refused("invalid", "one_side_only", f"sides.{index}")
            seen.add(member)
        built.append(ContestSide(id=f"s{index + 1}", name=spec.name, members=spec.members))
    contest = Contest(
        id=draft.new_id("contest"),
        name=name,
        mode=mode,
        skill=skill,
        passive_rating=passive_rating,
        target=ruleset.contest_target,
        sides=tuple(built),
        current=tuple(ExchangeRoll(side_id=side.id) for side in built),
    )
    draft.put_contest(contest)
    return draft.events()


def _contest(draft: Draft, contest_id: str) -> Contest:
    contest = draft.contests.get(contest_id)
    if contest is None:
        raise refused("not_found", "no_contest_id", "contest_id", id=contest_id)
    if contest.state != "open":
        raise refused("wrong_state", "over", "contest_id", name=contest.name)
    return contest


def _side(contest: Contest, side_id: str) -> ContestSide:
    side = next((s for s in contest.sides if s.id == side_id), None)
    if side is None:
        raise refused("not_found", "no_side_id", "side_id", id=side_id)
    if side.conceded:
        raise refused("wrong_state", "side_conceded", "side_id", name=side.name)
    return side


def _require_side_control(draft: Draft, side: ContestSide, principal: Principal) -> None:
    if not any(may_control(principal, draft.character(m)) for m in side.members):
        raise refused("forbidden", "act_for", "side_id", name=side.name)


def _slot(contest: Contest, side_id: str) -> ExchangeRoll:
    return next(r for r in contest.current if r.side_id == side_id)


def _with_slot(contest: Contest, slot: ExchangeRoll) -> Contest:
    current = tuple(slot if r.side_id == slot.side_id else r for r in contest.current)
    return contest.model_copy(update={"current": current})


def contest_roll(
    state: WorldState,
    contest_id: str,
    side_id: str,
    principal: Principal,
    dice: DiceSource,
    ruleset: Ruleset,
    skill: str | None = None,
) -> list[Event]:
    """A side's overcome roll for this exchange; the invoke phase runs as usual."""
    draft = Draft(state, "contest.roll")
    contest = _contest(draft, contest_id)
    side = _side(contest, side_id)
    _require_side_control(draft, side, principal)
    slot = _slot(contest, side_id)
    if slot.forfeited:
        raise refused("forfeited", "side_forfeited", "side_id", name=side.name)
    if slot.action_id is not None:
        raise refused("wrong_state", "side_rolled", "side_id", name=side.name)
    if _open_advantage(draft, contest, side.id) is not None:
        # R11.2 Decision: the roll waits, so a fumbled advantage can still forfeit it.
        raise refused("advantage_pending", "advantage_first", "side_id", name=side.name)
    active = [m for m in side.members if not draft.character(m).overwhelmed]
    if not active:
        raise refused("overwhelmed", "side_cannot_act", "side_id", name=side.name)
    leader, *helpers = active
    from bridge.rules.actions import Helper

    action = declare(
        draft,
        StartAction(
            type="overcome",
            actor_id=leader,
            skill=skill or contest.skill,
            passive_rating=contest.passive_rating if contest.mode == "environment" else 0,
            helpers=tuple(Helper(h) for h in helpers),
            purpose="contest_roll",
            contest_id=contest.id,
            side_id=side.id,
        ),
        Principal(principal.user_id, is_gm=True),  # any member's owner rolls for the side
        dice,
        ruleset,
    )
    draft.put_contest(_with_slot(contest, slot.model_copy(update={"action_id": action.id})))
    return draft.events()


def contest_advantage(
    state: WorldState,
    contest_id: str,
    side_id: str,
    actor_id: str,
    skill: str,
    aspect_name: str,
    principal: Principal,
    dice: DiceSource,
    ruleset: Ruleset,
    passive_rating: int | None = None,
    opposer_id: str | None = None,
    target_id: str | None = None,
) -> list[Event]:
    """R11.2: before its roll, a side may try to create an advantage (targets may
    oppose); a fumble forfeits the side's roll this exchange."""
    draft = Draft(state, "contest.advantage")
    contest = _contest(draft, contest_id)
    side = _side(contest, side_id)
    if actor_id not in side.members:
        raise refused("invalid", "actor_on_side", "actor_id")
    slot = _slot(contest, side_id)
    if slot.action_id is not None or slot.forfeited:
        raise refused("wrong_state", "advantage_before_roll", "side_id")
    if _open_advantage(draft, contest, side.id) is not None:
        raise refused("advantage_pending", "already_trying_advantage", "side_id", name=side.name)
    declare(
        draft,
        StartAction(
            type="create_advantage",
            actor_id=actor_id,
            skill=skill,
            passive_rating=passive_rating if opposer_id is None else None,
            opposer_id=opposer_id,
            target_id=target_id,
            aspect_name=aspect_name,
            purpose="contest_advantage",
            contest_id=contest.id,
            side_id=side.id,
        ),
        principal,
        dice,
        ruleset,
    )
    return draft.events()


def _open_advantage(draft: Draft, contest: Contest, side_id: str) -> Action | None:
    """The side's create-an-advantage before its roll that has not resolved yet."""
    return next(
        (
            a
            for a in draft.actions.values()
            if a.purpose == "contest_advantage"
            and a.contest_id == contest.id
            and a.side_id == side_id
            and not a.closed
        ),
        None,
    )


def forfeit(draft: Draft, action: Action) -> None:
    """R11.2: a fumbled advantage forfeits the side's roll (observed by :mod:`procedures`)."""
    contest = draft.contests.get(action.contest_id or "")
    if contest is None or contest.state != "open":
        return
    slot = _slot(contest, action.side_id or "")
    if slot.action_id is None:
        contest = _with_slot(contest, slot.model_copy(update={"forfeited": True}))
        draft.put_contest(contest)
        _maybe_close_exchange(draft, contest)


def release_roll(draft: Draft, action: Action) -> None:
    """A cancelled contest roll frees its side's slot (observed by :mod:`procedures`)."""
    contest = draft.contests.get(action.contest_id or "")
    if contest is None or contest.state != "open":
        return
    slot = next((r for r in contest.current if r.side_id == action.side_id), None)
    if slot is not None and slot.action_id == action.id:
        draft.put_contest(_with_slot(contest, slot.model_copy(update={"action_id": None})))


def record_roll(draft: Draft, action: Action) -> None:
    """R11.2: a resolved contest roll is the side's total (observed by :mod:`procedures`)."""
    contest = draft.contests.get(action.contest_id or "")
    if contest is None or contest.state != "open":
        return
    slot = _slot(contest, action.side_id or "")
    if slot.action_id != action.id:
        return
    total = action.actor.roll.total
    shifts = total - contest.passive_rating if contest.passive_rating is not None else None
    contest = _with_slot(contest, slot.model_copy(update={"total": total, "shifts": shifts}))
    draft.put_contest(contest)
    _maybe_close_exchange(draft, contest)


def _maybe_close_exchange(draft: Draft, contest: Contest) -> None:
    live = {s.id for s in contest.sides if not s.conceded}
    slots = [r for r in contest.current if r.side_id in live]
    if any(r.total is None and not r.forfeited for r in slots):
        return
    result = score_exchange(contest, slots)
    sides = tuple(
        s.model_copy(update={"progress": s.progress + result.progress})
        if s.id == result.winner
        else s
        for s in contest.sides
    )
    winner = next((s for s in sides if s.progress >= contest.target), None)
    draft.put_contest(
        contest.model_copy(
            update={
                "sides": sides,
                "history": (*contest.history, result),
                "exchange": contest.exchange + 1,
                "current": tuple(ExchangeRoll(side_id=s.id) for s in sides if not s.conceded),
                "twist_pending": contest.twist_pending or result.twist,
                "state": "won" if winner else "open",
                "winner": winner.id if winner else None,
            }
        )
    )


def score_exchange(contest: Contest, slots: Sequence[ExchangeRoll]) -> ExchangeResult:
    """R11.2 scoring, pure: highest total (direct) or most shifts above 0 (environment)
    wins; a tie at the top is a twist; excelling alone marks 2 progress (Decision:
    direct excels when the margin is 3 or more, environment when shifts are)."""
    rolled = [r for r in slots if r.total is not None]
    number = contest.exchange
    if contest.mode == "environment":
        scores = {r.side_id: r.shifts or 0 for r in rolled}
        contenders = {k: v for k, v in scores.items() if v > 0}
    else:
        scores = {r.side_id: r.total or 0 for r in rolled}
        contenders = dict(scores)
    if not contenders:
        return ExchangeResult(number=number, rolls=tuple(slots))
    best = max(contenders.values())
    leaders = [k for k, v in contenders.items() if v == best]
    if len(leaders) > 1:
        return ExchangeResult(number=number, rolls=tuple(slots), twist=True)
    winner = leaders[0]
    others = [v for k, v in scores.items() if k != winner]
    margin = best - max(others) if others else 0
    if contest.mode == "environment":
        excels = [k for k, v in scores.items() if v >= 3]
        excelled = excels == [winner]
    else:
        excelled = bool(others) and margin >= 3
    return ExchangeResult(
        number=number,
        rolls=tuple(slots),
        winner=winner,
        margin=margin,
        progress=2 if excelled else 1,
        excelled=excelled,
    )


def name_twist(state: WorldState, contest_id: str, name: str, principal: Principal) -> list[Event]:
    """R11.2: after a tie the GM names a new situation aspect; the bridge places it."""
    if not principal.is_gm:
        raise refused("forbidden", "gm_only")
    draft = Draft(state, "contest.twist")
    contest = draft.contests.get(contest_id)
    if contest is None or not contest.twist_pending:
        raise refused("wrong_state", "no_twist_waiting", "contest_id")
    draft.put_aspect(Aspect(id=draft.new_aspect_id("sit"), name=name, kind="situation"))
    history = list(contest.history)
    last_twist = max(i for i, h in enumerate(history) if h.twist)
    history[last_twist] = history[last_twist].model_copy(update={"twist_aspect": name})
    draft.put_contest(
        contest.model_copy(update={"twist_pending": False, "history": tuple(history)})
    )
    return draft.events()


def concede_contest(
    state: WorldState, contest_id: str, side_id: str, principal: Principal
) -> list[Event]:
    """R9.3: conceding a contest gives each conceding character a fate point,
    usable once the scene is over; the last side standing wins."""
    draft = Draft(state, "contest.concede")
    contest = _contest(draft, contest_id)
    side = _side(contest, side_id)
    _require_side_control(draft, side, principal)
    for member in side.members:
        pending_fate_point(draft, member, Earning(kind="conceded_contest"))
    sides = tuple(
        s.model_copy(update={"conceded": True}) if s.id == side_id else s for s in contest.sides
    )
    remaining = [s for s in sides if not s.conceded]
    contest = contest.model_copy(
        update={
            "sides": sides,
            "current": tuple(r for r in contest.current if r.side_id != side_id),
        }
    )
    if len(remaining) == 1:
        contest = contest.model_copy(update={"state": "won", "winner": remaining[0].id})
    draft.put_contest(contest)
    if contest.state == "open":
        _maybe_close_exchange(draft, contest)
    return draft.events()
