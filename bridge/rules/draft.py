"""A working copy of the state that records every change as an event."""

from __future__ import annotations

from collections.abc import Mapping

from bridge.rules.events import (
    ActionCancelled,
    ActionPut,
    ActionResolved,
    AspectPut,
    AspectRemoved,
    CarriedBoostsPut,
    Collection,
    CountersPut,
    Event,
    RecordDropped,
    RecordMap,
    ScenePut,
    record_put,
)
from bridge.rules.shared_map import SharedMap
from bridge.rules.state import (
    Action,
    Aspect,
    Challenge,
    Character,
    Compel,
    Conflict,
    Contest,
    Scene,
    WorldState,
)

# Draft record kinds -> WorldState collections that may drop records.
_COLLECTIONS: dict[str, Collection] = {
    "action": "actions",
    "contest": "contests",
    "challenge": "challenges",
    "conflict": "conflicts",
    "compel": "compels",
}

# The other record kinds a draft puts through :func:`record_put` -> their maps.
_MAPS: dict[str, RecordMap] = {
    "character": "characters",
    "contest": "contests",
    "challenge": "challenges",
    "conflict": "conflicts",
    "compel": "compels",
}


class DraftEvents(list[Event]):
    """A draft's events, with the state they lead to from the draft's base, so that
    :func:`bridge.rules.engine.apply_all` need not build again what the draft built.

    Why the two are the same state (the rules' property tests check it on arbitrary
    play, JSON and key order included): each event upserts a record as the draft last
    left it, or the counters, scene or carried boosts as they are in the draft, so
    folding them over the base gives each map the draft's values; a key already in the
    base keeps its place in both; a new key goes last in both, in the order it was first
    changed. Only a drop can break that order (a key dropped and put again moves last
    in the draft, not in the fold), so a draft that dropped anything holds no state
    (``after`` is None) and ``apply_all`` folds its events as any others.

    ``after`` holds only while the list is as the draft made it: ``apply_all`` checks.
    Only :meth:`Draft.events` makes one, and seals it at once."""

    # Slots: one is made per intent, and its four attributes are set on every one.
    __slots__ = ("_made", "after", "base", "contained")
    base: WorldState | None
    after: WorldState | None
    # The draft's own list of the events, which nothing else holds: compared with this
    # one item by item (identity first, no copy) to see that nobody changed it.
    _made: list[Event] | None
    # Whether an action they put is in a contest or a challenge: only such an action's
    # events give procedures anything to react to (bridge.rules.procedures.settle).
    contained: bool

    def seal(
        self, base: WorldState, after: WorldState | None, made: list[Event], contained: bool
    ) -> None:
        """``after``: the state the events lead to from ``base``, None when the draft did
        not build it (it dropped a record); ``made``: a list equal to this one that only
        this object holds from now on; ``contained``: whether an action put is in a
        contest or challenge."""
        self.base, self.after, self._made, self.contained = base, after, made, contained

    def result_from(self, state: WorldState) -> WorldState | None:
        """The state these events lead to from ``state``, if the draft built it: only
        from its own base, and only while the list holds exactly the events it made."""
        if state is self.base and self.after is not None and self._made == self:
            return self.after
        return None


class Draft:
    """Decisions change a Draft; :meth:`events` says what changed, once per record.

    The Draft never touches the state it was made from.
    """

    # Slots: a draft is made per intent and read and written all through its rules.
    __slots__ = (
        "_changed",
        "_dropped",
        "action_count",
        "actions",
        "aspect_count",
        "aspects",
        "base",
        "carried_boosts",
        "challenges",
        "characters",
        "compels",
        "conflicts",
        "contests",
        "gm_fate_points",
        "reason",
        "scene",
    )

    def __init__(self, state: WorldState, reason: str) -> None:
        self.base = state
        self.reason = reason
        # The base's maps; a change makes a new version of one, sharing the rest with it.
        self.characters: Mapping[str, Character] = state.characters
        self.aspects: Mapping[str, Aspect] = state.aspects
        self.actions: Mapping[str, Action] = state.actions
        self.scene = state.scene
        self.gm_fate_points = state.gm_fate_points
        self.action_count = state.action_count
        self.aspect_count = state.aspect_count
        self.contests: Mapping[str, Contest] = state.contests
        self.challenges: Mapping[str, Challenge] = state.challenges
        self.conflicts: Mapping[str, Conflict] = state.conflicts
        self.compels: Mapping[str, Compel] = state.compels
        self.carried_boosts = state.carried_boosts
        self._changed: dict[tuple[str, str], None] = {}
        # Whether any record left a map (a drop or an aspect removed): see DraftEvents.
        self._dropped = False

    # --- reads ----------------------------------------------------------------

    def character(self, character_id: str) -> Character:
        return self.characters[character_id]

    def aspect(self, aspect_id: str) -> Aspect:
        return self.aspects[aspect_id]

    def action(self, action_id: str) -> Action:
        return self.actions[action_id]

    # --- writes ---------------------------------------------------------------

    def put_character(self, character: Character) -> Character:
        self.characters = SharedMap.of(self.characters).set(character.id, character)
        self._changed[("character", character.id)] = None
        return character

    def put_aspect(self, aspect: Aspect) -> Aspect:
        self.aspects = SharedMap.of(self.aspects).set(aspect.id, aspect)
        self._changed[("aspect", aspect.id)] = None
        return aspect

    def remove_aspect(self, aspect_id: str) -> None:
        self.aspects = SharedMap.of(self.aspects).remove(aspect_id)
        self._dropped = True
        self._changed[("aspect", aspect_id)] = None

    def put_action(self, action: Action) -> Action:
        self.actions = SharedMap.of(self.actions).set(action.id, action)
        self._changed[("action", action.id)] = None
        return action

    def _drop(self, kind: str, record_id: str) -> None:
        name = _COLLECTIONS[kind]
        setattr(self, name, SharedMap.of(getattr(self, name)).remove(record_id))
        self._dropped = True
        self._changed[(kind, record_id)] = None

    def drop_action(self, action_id: str) -> None:
        self._drop("action", action_id)

    def drop_contest(self, contest_id: str) -> None:
        self._drop("contest", contest_id)

    def drop_challenge(self, challenge_id: str) -> None:
        self._drop("challenge", challenge_id)

    def drop_conflict(self, conflict_id: str) -> None:
        self._drop("conflict", conflict_id)

    def drop_compel(self, compel_id: str) -> None:
        self._drop("compel", compel_id)

    def put_contest(self, contest: Contest) -> Contest:
        self.contests = SharedMap.of(self.contests).set(contest.id, contest)
        self._changed[("contest", contest.id)] = None
        return contest

    def put_challenge(self, challenge: Challenge) -> Challenge:
        self.challenges = SharedMap.of(self.challenges).set(challenge.id, challenge)
        self._changed[("challenge", challenge.id)] = None
        return challenge

    def put_conflict(self, conflict: Conflict) -> Conflict:
        self.conflicts = SharedMap.of(self.conflicts).set(conflict.id, conflict)
        self._changed[("conflict", conflict.id)] = None
        return conflict

    def put_compel(self, compel: Compel) -> Compel:
        self.compels = SharedMap.of(self.compels).set(compel.id, compel)
        self._changed[("compel", compel.id)] = None
        return compel

    def set_carried_boosts(self, aspect_ids: tuple[str, ...]) -> None:
        self.carried_boosts = aspect_ids
        self._changed[("carried", "")] = None

    def new_id(self, prefix: str) -> str:
        """A fresh id for a contest, challenge, conflict, compel or task."""
        self.aspect_count += 1
        self._changed[("counters", "")] = None
        return f"{prefix}{self.aspect_count}"

    def put_scene(self, scene: Scene) -> None:
        self.scene = scene
        self._changed[("scene", "")] = None

    def set_gm_fate_points(self, value: int) -> None:
        self.gm_fate_points = value
        self._changed[("counters", "")] = None

    def new_action_id(self) -> str:
        self.action_count += 1
        self._changed[("counters", "")] = None
        return f"a{self.action_count}"

    def new_aspect_id(self, prefix: str = "asp") -> str:
        return self.new_id(prefix)

    # --- results --------------------------------------------------------------

    def events(self) -> DraftEvents:
        """One event per changed record, in the order each was first changed; they carry
        the state they lead to (see :class:`DraftEvents`). The draft may go on changing:
        the state they lead to is never touched by it."""
        out: list[Event] = []
        reason = self.reason
        contained = False
        for kind, key in self._changed:
            # An action's own kinds first: every intent changes one.
            if kind == "action":
                action = self.actions.get(key)
                was = self.base.actions.get(key)
                if action is None:
                    if was is not None:
                        out.append(
                            RecordDropped(reason=reason, collection="actions", record_id=key)
                        )
                    continue
                if action.contest_id is not None or action.challenge_id is not None:
                    contained = True
                if action.state == "resolved" and (was is None or was.state != "resolved"):
                    out.append(
                        ActionResolved(reason=reason, action=action, scene=self.scene.number)
                    )
                elif action.state == "cancelled" and (was is None or was.state != "cancelled"):
                    out.append(
                        ActionCancelled(reason=reason, action=action, scene=self.scene.number)
                    )
                else:
                    out.append(ActionPut(reason=reason, action=action))
            elif kind == "counters":
                out.append(
                    CountersPut(
                        reason=reason,
                        gm_fate_points=self.gm_fate_points,
                        action_count=self.action_count,
                        aspect_count=self.aspect_count,
                    )
                )
            elif kind == "aspect":
                if key in self.aspects:
                    out.append(AspectPut(reason=reason, aspect=self.aspects[key]))
                elif key in self.base.aspects:
                    out.append(AspectRemoved(reason=reason, aspect_id=key))
            elif kind == "scene":
                out.append(ScenePut(reason=reason, scene=self.scene))
            elif kind == "carried":
                out.append(CarriedBoostsPut(reason=reason, aspect_ids=self.carried_boosts))
            else:  # a character, contest, challenge, conflict or compel
                records = _MAPS[kind]
                record = getattr(self, records).get(key)
                if record is not None:
                    out.append(record_put(records, record, reason))
                elif key in getattr(self.base, records):
                    dropped_from = _COLLECTIONS[kind]
                    out.append(RecordDropped(reason=reason, collection=dropped_from, record_id=key))
        events = DraftEvents(out)
        built = self._after() if out and not self._dropped else None
        events.seal(self.base, built, out, contained)
        return events

    def _after(self) -> WorldState:
        """The base with every change made: what ``apply_all(base, events())`` builds
        when no record was dropped (see :class:`DraftEvents`)."""
        return self.base.model_copy(
            update={
                "characters": self.characters,
                "aspects": self.aspects,
                "actions": self.actions,
                "scene": self.scene,
                "gm_fate_points": self.gm_fate_points,
                "action_count": self.action_count,
                "aspect_count": self.aspect_count,
                "contests": self.contests,
                "challenges": self.challenges,
                "conflicts": self.conflicts,
                "compels": self.compels,
                "carried_boosts": self.carried_boosts,
            }
        )
