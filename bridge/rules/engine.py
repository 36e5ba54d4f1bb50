"""The reducer (state + event -> state), replay, and syncing sheet data in."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from bridge.rules.consequences import severity_name
from bridge.rules.draft import Draft, DraftEvents
from bridge.rules.events import (
    PUTS,
    ActionPut,
    AspectPut,
    AspectRemoved,
    CarriedBoostsPut,
    CountersPut,
    Event,
    HistoryUndone,
    RecordDropped,
    RulesetPut,
    ScenePut,
    SettingsPut,
)
from bridge.rules.ruleset import Ruleset
from bridge.rules.shared_map import SharedMap
from bridge.rules.state import (
    Aspect,
    Character,
    ConsequenceSlot,
    HarmKind,
    StressBox,
    StressTrack,
    Stunt,
    WorldState,
)


@dataclass(frozen=True)
class SheetSlot:
    """A consequence slot as the sheet shows it: its text, if filled."""

    id: str
    severity: int
    name: str | None = None
    # R13.3: an extra mild slot's kind of harm (None: any).
    harm: HarmKind | None = None


@dataclass(frozen=True)
class Sheet:
    """What the GM's client knows of an actor; the bridge keeps the rest."""

    id: str
    name: str
    owners: tuple[str, ...] = ()
    skills: dict[str, int] | None = None
    stunts: tuple[Stunt, ...] = ()
    aspects: tuple[tuple[str, str], ...] = ()
    fate_points: int | None = None
    refresh: int | None = None
    consequences: tuple[SheetSlot, ...] | None = None
    stress: tuple[StressTrack, ...] | None = None


def default_stress(
    ruleset: Ruleset, skills: dict[str, int] | None = None
) -> tuple[StressTrack, ...]:
    """The ruleset's stress tracks for a character with these ratings, every box free
    (R5.10 Decision; R13.2: Physique and Will add boxes)."""
    return tuple(
        StressTrack(
            id=track.id,
            name=track.name,
            kind=track.kind,
            boxes=tuple(StressBox(value=value) for value in track.box_values(skills or {})),
        )
        for track in ruleset.stress_tracks
    )


def default_consequences(
    ruleset: Ruleset, skills: dict[str, int] | None = None
) -> tuple[ConsequenceSlot, ...]:
    """R7.1 Decision: one slot of each of the ruleset's severities; R13.3: Physique or
    Will at the ruleset's mark adds a mild slot for that kind of harm alone."""
    slots = [
        ConsequenceSlot(id=severity_name(severity), severity=severity)
        for severity in ruleset.consequence_slots
    ]
    if ruleset.extra_mild_at is not None:
        for harm, skill in ruleset.harm_skills.items():
            if (skills or {}).get(skill, 0) >= ruleset.extra_mild_at:
                kind: HarmKind = "physical" if harm == "physical" else "mental"
                slots.append(ConsequenceSlot(id=f"mild-{kind}", severity=2, harm=kind))
    return tuple(slots)


def sync_character(state: WorldState, sheet: Sheet, ruleset: Ruleset) -> list[Event]:
    """Merge sheet data into the bridge's character; no events when nothing changed.

    The sheet owns name, owners, skills, stunts, aspects, refresh, the slots'
    layout, the stress tracks with their boxes, values and marks, and the fate
    point count (a GM's edit); the bridge owns everything
    the rules produced that a sheet has no place for (pending points, overwhelm).
    A new character whose sheet says nothing of consequences or stress gets the
    ruleset's (R7.1 Decision, R13.2, R13.3: grown by Physique and Will).
    """
    draft = Draft(state, "actor.sync")
    old = state.characters.get(sheet.id)
    base = old or Character(
        id=sheet.id,
        name=sheet.name,
        consequences=default_consequences(ruleset, sheet.skills),
        stress=default_stress(ruleset, sheet.skills),
    )
    updates: dict[str, object] = {"name": sheet.name, "owners": sheet.owners}
    if sheet.skills is not None:
        updates["skills"] = dict(sheet.skills)
    updates["stunts"] = sheet.stunts
    if sheet.fate_points is not None:
        updates["fate_points"] = max(sheet.fate_points, 0)
    if sheet.refresh is not None:
        updates["refresh"] = sheet.refresh
    if sheet.stress is not None:
        updates["stress"] = sheet.stress

    # Character aspects: ids are stable per sheet key, so free invokes survive a resync.
    wanted = {f"{sheet.id}.{key}": name for key, name in sheet.aspects}
    for aspect in list(draft.aspects.values()):
        mine = aspect.kind == "character" and aspect.attached_to == sheet.id
        if mine and aspect.id not in wanted:
            draft.remove_aspect(aspect.id)
    for aspect_id, name in wanted.items():
        existing = draft.aspects.get(aspect_id)
        if existing is None:
            draft.put_aspect(
                Aspect(id=aspect_id, name=name, kind="character", attached_to=sheet.id)
            )
        elif existing.name != name:
            draft.put_aspect(existing.model_copy(update={"name": name}))

    if sheet.consequences is not None:
        updates["consequences"] = _merge_slots(draft, base, sheet)

    character = base.model_copy(update=updates)
    if character != old:
        draft.put_character(character)
    return draft.events()


def _merge_slots(draft: Draft, base: Character, sheet: Sheet) -> tuple[ConsequenceSlot, ...]:
    current = {s.id: s for s in base.consequences}
    merged: list[ConsequenceSlot] = []
    for wanted in sheet.consequences or ():
        slot = current.pop(wanted.id, None) or ConsequenceSlot(
            id=wanted.id, severity=wanted.severity
        )
        slot = slot.model_copy(update={"severity": wanted.severity, "harm": wanted.harm})
        if wanted.name and slot.aspect_id is None:
            aspect = draft.put_aspect(
                Aspect(
                    id=draft.new_aspect_id("csq"),
                    name=wanted.name,
                    kind="consequence",
                    attached_to=base.id,
                )
            )
            slot = slot.model_copy(update={"aspect_id": aspect.id, "status": "fresh"})
        elif not wanted.name and slot.aspect_id is not None:
            draft.remove_aspect(slot.aspect_id)
            slot = slot.model_copy(
                update={"aspect_id": None, "status": "fresh", "recovering_since": None}
            )
        elif wanted.name and slot.aspect_id is not None:
            current_aspect = draft.aspects.get(slot.aspect_id)
            if current_aspect is not None and current_aspect.name != wanted.name:
                draft.put_aspect(current_aspect.model_copy(update={"name": wanted.name}))
        merged.append(slot)
    for dropped in current.values():
        if dropped.aspect_id is not None:
            draft.remove_aspect(dropped.aspect_id)
    return tuple(merged)


def apply(state: WorldState, event: Event) -> WorldState:
    """Apply one event; with :func:`apply_all`, the only way to a new state."""
    return apply_all(state, (event,))


# WorldState maps keyed by record id, as a batch of events has changed them so far.
_Maps = dict[str, SharedMap[Any]]


def _put(maps: _Maps, state: WorldState, name: str, key: str, record: object) -> None:
    records = maps.get(name)
    if records is None:
        records = SharedMap.of(getattr(state, name))
    maps[name] = records.set(key, record)


def _drop(maps: _Maps, state: WorldState, name: str, key: str) -> None:
    records = maps.get(name)
    if records is None:
        records = SharedMap.of(getattr(state, name))
    maps[name] = records.remove(key)


def apply_all(state: WorldState, events: Iterable[Event]) -> WorldState:
    """Fold events over ``state`` into one new state, exactly as applying them one by one
    would: a later event wins over an earlier one for the same record or field.

    A batch builds one WorldState, not one per event. Events a
    :class:`~bridge.rules.draft.Draft` made from ``state`` carry the state it built from
    them, which is this fold's result (see ``DraftEvents``): that one is returned."""
    if type(events) is DraftEvents:
        built = events.result_from(state)
        if built is not None:
            return built
    return _fold(state, events)


def _fold(state: WorldState, events: Iterable[Event]) -> WorldState:
    """:func:`apply_all`'s fold itself, event by event."""
    maps: _Maps = {}
    fields: dict[str, Any] = {}
    undone: tuple[int, ...] | None = None
    for event in events:
        put = PUTS.get(type(event))
        if put is not None:
            records, name = put
            record = getattr(event, name)
            _put(maps, state, records, record.id, record)
        elif isinstance(event, CountersPut):
            fields["gm_fate_points"] = event.gm_fate_points
            fields["action_count"] = event.action_count
            fields["aspect_count"] = event.aspect_count
        elif isinstance(event, AspectRemoved):
            _drop(maps, state, "aspects", event.aspect_id)
        elif isinstance(event, ScenePut):
            fields["scene"] = event.scene
        elif isinstance(event, RecordDropped):
            _drop(maps, state, event.collection, event.record_id)
        elif isinstance(event, HistoryUndone):
            # The restoring upserts did the work; this only records what was taken back.
            undone = (state.undone if undone is None else undone) + event.resolutions
        elif isinstance(event, CarriedBoostsPut):
            fields["carried_boosts"] = event.aspect_ids
        elif isinstance(event, SettingsPut):
            fields["settings"] = event.settings
        elif isinstance(event, RulesetPut):
            fields["ruleset"] = event.ruleset
        else:
            raise TypeError(f"unhandled event {event!r}")
    if undone is not None:
        fields["undone"] = undone
    if not maps and not fields:
        return state
    return state.model_copy(update={**fields, **maps})


def touched_keys(events: Iterable[Event], collection: Literal["aspects", "actions"]) -> list[str]:
    """Every key of the state's ``collection`` map that the events put or drop: for
    :func:`apply_all`, the only keys of that map whose records can differ afterwards."""
    keys: list[str] = []
    for event in events:
        if isinstance(event, RecordDropped):
            if event.collection == collection:
                keys.append(event.record_id)
        elif collection == "actions":
            if isinstance(event, ActionPut):
                keys.append(event.action.id)
        elif isinstance(event, AspectPut):
            keys.append(event.aspect.id)
        elif isinstance(event, AspectRemoved):
            keys.append(event.aspect_id)
    return keys


def replay(events: Iterable[Event], initial: WorldState | None = None) -> WorldState:
    """Fold events over a state; replaying a world's log reproduces its state."""
    return _fold(initial if initial is not None else WorldState(), events)
