"""Worlds for the bench, written straight into the store before the bridge starts,
and the rules engine timed alone."""

from __future__ import annotations

import time
from dataclasses import dataclass

from bridge.rules import actions
from bridge.rules.dice import SecureDice
from bridge.rules.engine import apply_all
from bridge.rules.events import Event
from bridge.rules.procedures import settle
from bridge.rules.ruleset import get_ruleset
from bridge.rules.state import WorldState
from bridge.service import BridgeService, Session
from bridge.service.commit import rebuild
from bridge.service.history_index import index_rows
from bridge.store.base import CommitBatch, EventRow, Store
from bridge.store.chain import event_hash

HERO = {
    "id": "hero",
    "name": "Hero",
    "owners": ["player"],
    "skills": {"Athletics": 3},
    "fate_points": 99,
    "aspects": [{"key": "hc", "name": "Bold"}],
}
GM = actions.Principal("bench", is_gm=True)
OVERCOME = actions.StartAction(
    type="overcome", actor_id="hero", skill="Athletics", passive_rating=-2
)


def resolve_passive(state: WorldState, dice: SecureDice) -> tuple[WorldState, list[Event]]:
    """One passive overcome through the rules alone, as the service runs each of its two
    intents (bridge.service.core ``_mutate``): decide, settle, apply. Declare and roll,
    then pass."""
    ruleset = get_ruleset(state.ruleset)
    started = settle(state, actions.start_action(state, OVERCOME, GM, dice, ruleset))
    state = apply_all(state, started)
    action_id = f"a{state.action_count}"
    passed = settle(state, actions.pass_invokes(state, action_id, "actor", GM, ruleset))
    return apply_all(state, passed), [*started, *passed]


@dataclass(frozen=True)
class EngineResult:
    resolutions: int
    seconds: float

    @property
    def per_second(self) -> float:
        return self.resolutions / self.seconds


def time_engine(
    resolutions: int, scene_size: int = 50, dice: SecureDice | None = None, resolved: int = 0
) -> EngineResult:
    """Passive overcomes resolved back to back through the rules alone, on a world that
    starts again every ``scene_size`` resolutions (a scene's worth) from the hero's world
    with ``resolved`` passive overcomes already resolved in its scene (built before the
    clock starts, on the same dice): ``resolved=0`` gives the rules' cost per action,
    a larger one the same on a world with that much history."""
    dice = dice or SecureDice()
    fresh = world_with(resolved, dice)
    state = fresh
    # CPU time of this process: the machine is shared, wall time would measure others.
    began = time.process_time()
    for done in range(resolutions):
        if done % scene_size == 0:
            state = fresh
        state, _events = resolve_passive(state, dice)
    return EngineResult(resolutions, time.process_time() - began)


def world_with(resolved: int, dice: SecureDice) -> WorldState:
    """The hero's world with ``resolved`` passive overcomes resolved in one scene."""
    state = _hero_state()
    for _ in range(resolved):
        state, _events = resolve_passive(state, dice)
    return state


def _hero_state() -> WorldState:
    from bridge.rules.engine import Sheet, sync_character

    state = WorldState()
    sheet = Sheet(
        id="hero",
        name="Hero",
        owners=("player",),
        skills={"Athletics": 3},
        aspects=(("hc", "Bold"),),
        fate_points=99,
    )
    return apply_all(state, sync_character(state, sheet, get_ruleset(state.ruleset)))


async def seed_worlds(
    store: Store,
    world_ids: list[str],
    resolved: int = 0,
    owners: list[str] | None = None,
) -> dict[str, str]:
    """Register each world with the hero synced (through the service, as a GM would), then
    append ``resolved`` passive overcomes to each in one commit; returns the GM keys.

    ``owners``: the Foundry users who own the hero, for players to act (the relay part's:
    a relayed user acts with a player's authority, only for what it owns). Such a world
    also trusts its players' ratings (R2.1), so a player's passive overcome is the same
    two intents as a GM's (start, pass) rather than waiting on the GM's confirm."""
    service = BridgeService(store)
    hero = HERO if owners is None else {**HERO, "owners": owners}
    keys: dict[str, str] = {}
    for world_id in world_ids:
        _record, keys[world_id] = await service.add_world(world_id, world_id)
        gm = Session("seed", world_id, "seed", "gm", bound=True)
        reply = await service.handle(gm, "actor.sync", {"request_id": "seed", "actor": hero})
        if not reply.ack["ok"]:
            raise RuntimeError(reply.ack)
        if owners is not None:
            reply = await service.handle(
                gm, "world.settings", {"request_id": "seed-trust", "trust_player_ratings": True}
            )
            if not reply.ack["ok"]:
                raise RuntimeError(reply.ack)
        if resolved:
            await _append_actions(store, world_id, resolved)
    return keys


async def _append_actions(store: Store, world_id: str, resolved: int) -> None:
    snapshot = await store.load(world_id)
    assert snapshot is not None
    state = rebuild(snapshot)
    dice = SecureDice()
    events: list[Event] = []
    for _ in range(resolved):
        state, more = resolve_passive(state, dice)
        events.extend(more)
    rows: list[EventRow] = []
    prev, seq, now = snapshot.last_event_hash, snapshot.last_event_seq, "2026-01-01T00:00:00+00:00"
    for event in events:
        seq += 1
        payload = event.model_dump(mode="json")
        digest = event_hash(prev, seq, event.type, payload, now)
        rows.append(EventRow(seq, event.type, payload, now, prev, digest))
        prev = digest
    await store.commit(
        CommitBatch(
            world_id=world_id,
            expected_version=snapshot.version,
            snapshot=state.model_dump(mode="json"),
            events=rows,
            created_at=now,
            history=index_rows(rows, events),
        )
    )
