"""What each committed change sends to Foundry: cards, patches, statuses, scene state."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

from pydantic import BaseModel

from bridge.rules.engine import touched_keys
from bridge.rules.events import (
    ActionPut,
    AspectPut,
    CharacterPut,
    CountersPut,
    Event,
    HistoryUndone,
)
from bridge.rules.ruleset import Ruleset
from bridge.rules.state import Action, WorldState
from bridge.service import cards
from bridge.service.protocol import (
    ActionCard,
    ActorPatch,
    AnchorView,
    Card,
    CardEmit,
    SceneState,
    SceneStateEmit,
    TokenStatus,
)
from bridge.service.view_index import ByIdentity, aspect_index, open_actions
from bridge.store.base import (
    EmitRow,
    EventRow,
)


@dataclass(frozen=True)
class KnownViews:
    """Views of one state that a commit built, for the next commit to compare with
    rather than build again: its before state is this commit's after (the service's
    cache). ``scene``: the scene panel, if known; ``characters``: per character, its
    patch and token status (``seq`` 0), for those known."""

    scene: SceneState | None
    characters: dict[str, tuple[ActorPatch, TokenStatus]]


# Known views by the state they show. Views are kept for the next state too when a commit
# cannot have changed them (see _carried), so a plain action's two intents build the scene
# panel and the actor's patch once each, not twice.
KnownViewsCache = ByIdentity[WorldState, KnownViews]
KNOWN_VIEWS_SIZE = 512


def known_views_cache() -> KnownViewsCache:
    """An empty cache of known views, for one service to own (its commits' states are
    its own: two services never share one)."""
    return ByIdentity(KNOWN_VIEWS_SIZE)


def _carried(
    known: KnownViews | None,
    before: WorldState,
    after: WorldState,
    events: list[Event],
    scene_touched: bool,
) -> KnownViews:
    """The views of ``before`` that are ``after``'s too, exactly: the scene panel when no
    event can change it (``touches_scene``) and no character changed (the panel shows
    names and owners); a character's patch and status when its record is the same and
    no aspect changed (they show its slots' aspects and the boosts it holds)."""
    if known is None:
        return KnownViews(None, {})
    characters_changed = any(isinstance(e, CharacterPut) for e in events)
    scene = None if scene_touched or characters_changed else known.scene
    if touched_keys(events, "aspects"):
        return KnownViews(scene, {})
    kept = {
        character_id: views
        for character_id, views in known.characters.items()
        if after.characters.get(character_id) is before.characters.get(character_id)
    }
    return KnownViews(scene, kept)


def card_id(world_id: str, action_id: str) -> str:
    return f"{world_id}.{action_id}"


ExtraCards = Callable[[WorldState], list[tuple[str, BaseModel]]]
GM_WRITER = "gm"
# The reason of the ActionPut that records a card's Foundry author: bookkeeping, no new card.
CARD_WRITTEN = "card.written"


def card_writer_candidate(action: Action) -> str:
    """The user who should write an action's card when connected: the message's author
    once a client has reported it, else the acting user (who creates it)."""
    return action.card_author or action.requested_by


def card_writer(action: Action, present: Callable[[str], bool]) -> str:
    """The writer of an action's card: a present user Foundry lets update the message.

    Foundry lets only a ChatMessage's author or a GM update it, so once the author is known
    the card goes to that author while connected, and otherwise to the active GM (who may
    update any message). Before any message exists it goes to the acting user, or the GM
    when that user has gone, so nobody waits on an absent player to see the card move on."""
    user = card_writer_candidate(action)
    return user if present(user) else GM_WRITER


def derive_emits(
    world_id: str,
    before: WorldState,
    after: WorldState,
    events: list[Event],
    rows: list[EventRow],
    last_emit: int,
    ruleset: Ruleset,
    extra_cards: Sequence[tuple[str, BaseModel]] = (),
    present: Callable[[str], bool] = lambda _user: True,
    *,
    known_views: KnownViewsCache,
) -> list[EmitRow]:
    """Cards for every action that changed, for each contest exchange and finished
    challenge; patches and statuses for every character whose written-back data
    changed (never for the GM's own sheet syncs); the scene state when it changed.

    Each payload is built in its JSON form (``bridge.service.cards``), typed by its view in
    ``protocol.EMITS``, so nothing is validated or dumped on the way. ``known_views``:
    the service's cache of the views its last commits built (read for ``before``, filled
    for ``after``)."""
    emits: list[EmitRow] = []
    seq = last_emit
    # The after state's indexes, derived from the before state's (cached from the commit
    # before): cards and the scene list aspects and open actions without walking them all.
    touched_aspects = touched_keys(events, "aspects")
    aspect_index(after.aspects, before.aspects, touched_aspects)
    # The open actions are read by world.state alone: noted here, derived when asked for.
    open_actions.note(after.actions, before.actions, touched_keys(events, "actions"))
    # Every card carries the last event behind it; the module keeps it in the message's
    # flags, anchoring the log in Foundry's chat log (DESIGN Trust, ``world.verify``).
    commit_anchor = anchor(rows[-1]) if rows else None

    def add(event: str, payload: Mapping[str, Any]) -> None:
        # The store keeps any JSON object; the view's type stays with the builder.
        emits.append(EmitRow(seq, event, cast(dict[str, Any], payload)))

    def card_emit(
        writer: str,
        op: Literal["create", "update"],
        card_id_: str,
        card: Card,
        at: AnchorView | None,
    ) -> None:
        """A card emit, the next in the outbox."""
        nonlocal seq
        seq += 1
        emit: CardEmit = {
            "seq": seq,
            "world": world_id,
            "writer": writer,
            "op": op,
            "card_id": card_id_,
            "card": card,
            "anchor": at,
        }
        add("card", emit)

    def gm_card(
        card_key: str, card: Card | BaseModel, op: Literal["create", "update"] = "create"
    ) -> None:
        # A model card (the scene end's) goes in its JSON form, as every view is.
        shown = card if isinstance(card, dict) else cast(Card, card.model_dump(mode="json"))
        card_emit(GM_WRITER, op, f"{world_id}.{card_key}", shown, commit_anchor)

    last_row_of_action: dict[str, EventRow] = {}
    touched: set[str] = set()
    for domain_event, row in zip(events, rows, strict=True):
        if isinstance(domain_event, ActionPut):
            if domain_event.reason != CARD_WRITTEN:
                last_row_of_action[domain_event.action.id] = row
        elif isinstance(domain_event, CharacterPut) and domain_event.reason != "actor.sync":
            touched.add(domain_event.character.id)
        elif isinstance(domain_event, AspectPut) and domain_event.aspect.kind == "boost":
            touched.update(domain_event.aspect.free_invokes)
    for aspect_id in touched_aspects:
        gone = before.aspects.get(aspect_id)
        if gone is not None and gone.kind == "boost" and aspect_id not in after.aspects:
            touched.update(gone.free_invokes)

    for action_id, row in last_row_of_action.items():
        action = after.actions[action_id]
        card_emit(
            card_writer(action, present),
            "update" if action_id in before.actions else "create",
            card_id(world_id, action_id),
            cards.action_card(action, after, ruleset, row.seq, row.hash),
            anchor(row),
        )
    for undo in (e for e in events if isinstance(e, HistoryUndone)):
        # Actions the undo took away entirely: their cards say so (the ones it only
        # moved back were updated above, as they now are).
        for action_id in undo.action_ids:
            taken = before.actions.get(action_id)
            if taken is None or action_id in after.actions:
                continue
            taken_card = cards.action_card(taken, before, ruleset, rows[-1].seq, rows[-1].hash)
            undone_card: ActionCard = {**taken_card, "undone": True}
            card_emit(
                # The GM asked for the undo and may update anyone's message.
                GM_WRITER,
                "update",
                card_id(world_id, action_id),
                undone_card,
                None,
            )
        # Exchange and challenge cards the undo took back say so too.
        for contest_id, taken_contest in before.contests.items():
            kept = after.contests.get(contest_id)
            kept_exchanges = len(kept.history) if kept else 0
            if len(taken_contest.history) <= kept_exchanges:
                continue
            taken_view = cards.contest_view(taken_contest, before, ruleset)
            for taken_exchange in taken_view["history"][kept_exchanges:]:
                gm_card(
                    f"{contest_id}.x{taken_exchange['number']}",
                    cards.contest_card(taken_view, taken_exchange, undone=True),
                    op="update",
                )
        for challenge_id, taken_challenge in before.challenges.items():
            kept_challenge = after.challenges.get(challenge_id)
            if taken_challenge.state == "complete" and (
                kept_challenge is None or kept_challenge.state != "complete"
            ):
                gm_card(
                    challenge_id,
                    cards.challenge_card(
                        cards.challenge_view(taken_challenge, before, ruleset), undone=True
                    ),
                    op="update",
                )
    for contest_id, contest in after.contests.items():
        old_contest = before.contests.get(contest_id)
        grew = len(contest.history) > (len(old_contest.history) if old_contest else 0)
        finished = contest.state != "open" and (old_contest is None or old_contest.state == "open")
        if grew or finished:
            view = cards.contest_view(contest, after, ruleset)
            last = view["history"][-1] if grew else None
            suffix = f"x{last['number']}" if last else "end"
            gm_card(f"{contest_id}.{suffix}", cards.contest_card(view, last))
        elif old_contest is not None:
            # A twist named after the exchange: its card shows the new aspect.
            for old_result, result in zip(old_contest.history, contest.history, strict=False):
                if result.twist_aspect and result.twist_aspect != old_result.twist_aspect:
                    view = cards.contest_view(contest, after, ruleset)
                    exchange = view["history"][result.number - 1]
                    gm_card(
                        f"{contest_id}.x{result.number}",
                        cards.contest_card(view, exchange),
                        op="update",
                    )
    for challenge_id, challenge in after.challenges.items():
        old_challenge = before.challenges.get(challenge_id)
        if challenge.state == "complete" and (
            old_challenge is None or old_challenge.state != "complete"
        ):
            gm_card(
                challenge_id, cards.challenge_card(cards.challenge_view(challenge, after, ruleset))
            )
    for card_key, card in extra_cards:
        gm_card(card_key, card)
    known_before = known_views.get(before)
    scene_touched = any(touches_scene(e, before) for e in events)
    known_after = _carried(known_before, before, after, events, scene_touched)
    for character_id in sorted(touched):
        new = after.characters.get(character_id)
        if new is None:
            continue
        old = before.characters.get(character_id)
        was = known_before.characters.get(character_id) if known_before else None
        if was is None and old is not None:
            was = (
                cards.actor_patch(old, before, world_id, 0),
                cards.token_status(old, before, world_id, 0),
            )
        patch = cards.actor_patch(new, after, world_id, 0)
        if was is None or was[0] != patch:
            seq += 1
            sent_patch: ActorPatch = {**patch, "seq": seq}
            add("actor.patch", sent_patch)
        status = cards.token_status(new, after, world_id, 0)
        if was is None or was[1] != status:
            seq += 1
            sent_status: TokenStatus = {**status, "seq": seq}
            add("token.status", sent_status)
        known_after.characters[character_id] = (patch, status)
    if scene_touched:
        scene_after = cards.scene_state(after)
        scene_before = known_before.scene if known_before else None
        if (scene_before if scene_before is not None else cards.scene_state(before)) != (
            scene_after
        ):
            seq += 1
            scene_emit: SceneStateEmit = {
                "seq": seq,
                "world": world_id,
                "writer": "gm",
                "state": scene_after,
            }
            add("scene.state", scene_emit)
        known_after = KnownViews(scene_after, known_after.characters)
    known_views.put(after, known_after)
    return emits


def anchor(row: EventRow) -> AnchorView:
    """The last event behind a card."""
    return {"seq": row.seq, "hash": row.hash}


def touches_scene(event: Event, before: WorldState) -> bool:
    """Whether an event can change what the scene panel shows (saves building it twice
    for the common case: a plain action moving along)."""
    if isinstance(event, ActionPut):
        return event.action.challenge_id is not None or event.action.contest_id is not None
    if isinstance(event, AspectPut):
        return event.aspect.kind in ("situation", "boost")
    if isinstance(event, CountersPut):
        return event.gm_fate_points != before.gm_fate_points
    return not isinstance(event, CharacterPut)
