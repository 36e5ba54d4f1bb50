"""Challenges (R11.1): tasks rolled in any order, decided only when all are in."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bridge.rules.actions import Helper, Principal, StartAction, declare
from bridge.rules.dice import DiceSource
from bridge.rules.draft import Draft
from bridge.rules.errors import refused
from bridge.rules.events import Event
from bridge.rules.ruleset import Ruleset
from bridge.rules.state import Action, Challenge, ChallengeTask, WorldState


@dataclass(frozen=True)
class TaskSpec:
    name: str
    skill: str
    rating: int


def start_challenge(
    state: WorldState, name: str, tasks: Sequence[TaskSpec], principal: Principal
) -> list[Event]:
    if not principal.is_gm:
        raise refused("forbidden", "gm_only")
    if not tasks:
        raise refused("invalid", "challenge_needs_task", "tasks")
    draft = Draft(state, "challenge.start")
    challenge = Challenge(
        id=draft.new_id("challenge"),
        name=name,
        tasks=tuple(
            ChallengeTask(id=f"t{n + 1}", name=t.name, skill=t.skill, rating=t.rating)
            for n, t in enumerate(tasks)
        ),
    )
    draft.put_challenge(challenge)
    return draft.events()


def _challenge(draft: Draft, challenge_id: str) -> Challenge:
    challenge = draft.challenges.get(challenge_id)
    if challenge is None:
        raise refused("not_found", "no_challenge_id", "challenge_id", id=challenge_id)
    if challenge.state != "open":
        raise refused("wrong_state", "challenge_complete", "challenge_id", name=challenge.name)
    return challenge


def roll_task(
    state: WorldState,
    challenge_id: str,
    task_id: str,
    actor_id: str,
    principal: Principal,
    dice: DiceSource,
    ruleset: Ruleset,
    helpers: Sequence[Helper] = (),
    skill: str | None = None,
) -> list[Event]:
    """One task's overcome roll, with the task's skill and opposition (one roll a task)."""
    draft = Draft(state, "challenge.roll")
    challenge = _challenge(draft, challenge_id)
    task = next((t for t in challenge.tasks if t.id == task_id), None)
    if task is None:
        raise refused("not_found", "no_task_id", "task_id", id=task_id)
    if task.action_id is not None:
        raise refused("wrong_state", "task_rolled", "task_id", name=task.name)
    action = declare(
        draft,
        StartAction(
            type="overcome",
            actor_id=actor_id,
            skill=skill or task.skill,
            passive_rating=task.rating,
            rating_from_gm=True,
            helpers=tuple(helpers),
            description=task.name,
            purpose="challenge_task",
            challenge_id=challenge.id,
            task_id=task.id,
        ),
        principal,
        dice,
        ruleset,
    )
    tasks = tuple(
        t.model_copy(update={"action_id": action.id}) if t.id == task.id else t
        for t in challenge.tasks
    )
    draft.put_challenge(draft.challenges[challenge.id].model_copy(update={"tasks": tasks}))
    return draft.events()


def try_advantage(
    state: WorldState,
    challenge_id: str,
    actor_id: str,
    skill: str,
    aspect_name: str,
    rating: int,
    principal: Principal,
    dice: DiceSource,
    ruleset: Ruleset,
) -> list[Event]:
    """R11.1: creating an advantage completes no task; its fumble may cost another."""
    draft = Draft(state, "challenge.advantage")
    challenge = _challenge(draft, challenge_id)
    action = declare(
        draft,
        StartAction(
            type="create_advantage",
            actor_id=actor_id,
            skill=skill,
            passive_rating=rating,
            aspect_name=aspect_name,
            purpose="challenge_advantage",
            challenge_id=challenge.id,
        ),
        principal,
        dice,
        ruleset,
    )
    current = draft.challenges[challenge.id]
    draft.put_challenge(
        current.model_copy(
            update={"advantage_action_ids": (*current.advantage_action_ids, action.id)}
        )
    )
    return draft.events()


def release_task(draft: Draft, action: Action) -> None:
    """A cancelled task roll frees its task (observed by :mod:`procedures`)."""
    challenge = draft.challenges.get(action.challenge_id or "")
    if challenge is None or challenge.state != "open":
        return
    tasks = tuple(
        t.model_copy(update={"action_id": None}) if t.action_id == action.id else t
        for t in challenge.tasks
    )
    if tasks != challenge.tasks:
        draft.put_challenge(challenge.model_copy(update={"tasks": tasks}))


def check_complete(draft: Draft, challenge_id: str) -> None:
    """R11.1: complete once every task resolved (observed by :mod:`procedures`)."""
    challenge = draft.challenges.get(challenge_id)
    if challenge is None or challenge.state != "open":
        return
    done = all(
        t.action_id is not None
        and draft.actions.get(t.action_id) is not None
        and draft.actions[t.action_id].state == "resolved"
        for t in challenge.tasks
    )
    if done:
        draft.put_challenge(challenge.model_copy(update={"state": "complete"}))


def challenge_boosts(state: WorldState, challenge: Challenge) -> tuple[str, ...]:
    """Boosts earned on the challenge's rolls that are still unused."""
    action_ids = {t.action_id for t in challenge.tasks if t.action_id}
    action_ids |= set(challenge.advantage_action_ids)
    return tuple(
        a.id
        for a in state.aspects.values()
        if a.kind == "boost" and a.created_by_action in action_ids
    )


def carry_boosts(
    state: WorldState, challenge_id: str, carry: bool, principal: Principal
) -> list[Event]:
    """R11.1, R12.1: unused boosts may carry into a directly connected next scene."""
    if not principal.is_gm:
        raise refused("forbidden", "gm_only")
    draft = Draft(state, "challenge.carry")
    challenge = draft.challenges.get(challenge_id)
    if challenge is None:
        raise refused("not_found", "no_challenge_id", id=challenge_id)
    draft.put_challenge(challenge.model_copy(update={"carry_boosts": carry}))
    boosts = set(challenge_boosts(state, challenge))
    kept = tuple(b for b in draft.carried_boosts if b not in boosts)
    draft.set_carried_boosts(kept + (tuple(sorted(boosts)) if carry else ()))
    return draft.events()
