"""What one commit writes beside its events: when it saves the whole state, the state's
JSON, which card its answer shares with an emit, which record it created; and the dice
one attempt at it rolled."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, TypeAdapter
from pydantic_core import PydanticSerializationError

from bridge.rules.dice import QueuedDice, Roll
from bridge.rules.engine import replay
from bridge.rules.events import (
    EVENT_ADAPTER,
    AspectPut,
    ChallengePut,
    CompelPut,
    ConflictPut,
    ContestPut,
    Event,
)
from bridge.rules.state import WorldState
from bridge.store import codec
from bridge.store.base import EmitRow, Snapshot

COMMIT_ATTEMPTS = 5
# A commit carries a snapshot of the whole state once the events after the saved one
# have grown to SNAPSHOT_TAIL_SHARE of its size (sizes of their JSON), but not before
# SNAPSHOT_MIN_TAIL, and at every scene end. Writing the state then costs, amortised,
# a fixed multiple of the events' own size however large the world has grown, and a
# load replays events amounting to at most about that share of the state.
SNAPSHOT_TAIL_SHARE = 0.5
SNAPSHOT_MIN_TAIL = 128 * 1024


# The state's JSON straight from pydantic's serializer (the one Frozen.model_dump uses).
_STATE_JSON: TypeAdapter[WorldState] = TypeAdapter(WorldState)


def state_json(state: WorldState) -> str:
    """The state as a snapshot saves it: ``codec.dumps(state.model_dump(mode="json"))``
    byte for byte (tests/test_card_views.py proves it), written by pydantic's serializer
    without building the dict first. Text it cannot write (a lone surrogate) goes the
    long way, and fails there as the snapshot's writer would."""
    try:
        return _STATE_JSON.dump_json(state).decode("utf-8")
    except PydanticSerializationError:
        return codec.dumps(state.model_dump(mode="json"))


def snapshot_due(state_size: int, tail_size: int, events: list[Event]) -> bool:
    """Whether a commit of ``events`` should save the whole state, given the saved
    state's size and the size of its tail with these events joined: the tail has grown
    to SNAPSHOT_TAIL_SHARE of the state (and at least SNAPSHOT_MIN_TAIL), or the scene
    ends (a natural resting point: the scene's records close there)."""
    if not events:
        return False
    return tail_size >= max(SNAPSHOT_MIN_TAIL, SNAPSHOT_TAIL_SHARE * state_size) or any(
        getattr(e, "reason", None) == "scene.end" for e in events
    )


class AttemptDice:
    """The world's dice as one attempt at an intent sees them. The queued rolls it
    takes (``dev.queue_dice``) go back to the front of the queue when the attempt is
    thrown away (a retry already answered, another writer first), so they reach the
    intent that is committed, in order."""

    def __init__(self, dice: QueuedDice) -> None:
        self._dice = dice
        self._taken: list[Roll] = []

    def roll(self) -> Roll:
        queued = self._dice.pending > 0
        faces = self._dice.roll()
        if queued:
            self._taken.append(faces)
        return faces

    def put_back(self) -> None:
        """Return the queued rolls this attempt took, ahead of the rest, in order."""
        if self._taken:
            rest = [self._dice.roll() for _ in range(self._dice.pending)]
            self._dice.queue([*self._taken, *rest])
            self._taken = []


def rebuild(snapshot: Snapshot) -> WorldState:
    """The latest state: the saved state with the events after it replayed."""
    return replay(
        (EVENT_ADAPTER.validate_python(row.payload) for row in snapshot.tail),
        WorldState.model_validate(snapshot.state),
    )


def answered_card(data: BaseModel | Mapping[str, Any], emits: list[EmitRow]) -> int | None:
    """The seq of the emit whose card an answer shows (the same object), if any: the
    store then keeps that card once (``CommitBatch.response_card_emit``)."""
    card = data.get("card") if isinstance(data, dict) else None
    if card is None:
        return None
    return next((e.seq for e in emits if e.event == "card" and e.payload["card"] is card), None)


def created_record(before: WorldState, events: list[Event]) -> str | None:
    """The id of the first contest, challenge, conflict, compel or aspect the events create."""
    known: Mapping[str, object]
    for event in events:
        if isinstance(event, ContestPut):
            record_id, known = event.contest.id, before.contests
        elif isinstance(event, ChallengePut):
            record_id, known = event.challenge.id, before.challenges
        elif isinstance(event, ConflictPut):
            record_id, known = event.conflict.id, before.conflicts
        elif isinstance(event, CompelPut):
            record_id, known = event.compel.id, before.compels
        elif isinstance(event, AspectPut):
            record_id, known = event.aspect.id, before.aspects
        else:
            continue
        if record_id not in known:
            return record_id
    return None
