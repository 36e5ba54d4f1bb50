"""Every intent the bridge answers, declared once: its model, what answers it, and its policy.

One row per intent, in one style. What answers it is one of three:

- :class:`Act`: a rule that starts or moves an action, answered with that action's card;
- :class:`Change`: a rule on the scene or its procedures, answered with the scene;
- :class:`Handle`: any other handler, given the service.

Its policy: ``unbound`` (a player the GM's client has not yet vouched for may send it),
``relayed`` (a GM's connection may send it for a player, DESIGN Reach and trust),
``costed`` (a read whose answer says what it cost: one sender's take turns, each charged),
``http`` (its route under ``/api/v1``). The dispatcher (:meth:`BridgeService.handle`), the
socket port (costed reads, relaying), the HTTP API (its routes) and the schema generator
(each row's model) read this table; the model itself names its event and its answer's
data (:class:`bridge.service.protocol.Intent`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar, get_args

from bridge.service import action_intents as action
from bridge.service import history_intents as history
from bridge.service import protocol
from bridge.service import scene_intents as scene
from bridge.service import world_intents as world
from bridge.service.core import IntentRule
from bridge.service.session import IntentError, Reply, Session

if TYPE_CHECKING:
    from bridge.service import BridgeService

In = TypeVar("In", bound=protocol.Intent)
Handler = Callable[["BridgeService", Session, In], Awaitable[Reply]]


@dataclass(frozen=True, slots=True)
class Act(Generic[In]):
    """A rule that starts or moves an action: answered with the card of the action it
    names (an ``ActionRef``), else of the one it started (``protocol.ActionData``)."""

    rule: IntentRule[In]


@dataclass(frozen=True, slots=True)
class Change(Generic[In]):
    """A rule on the scene or its procedures: answered with the scene as it now is and
    the id of the record it created, if any."""

    rule: IntentRule[In]


@dataclass(frozen=True, slots=True)
class Handle(Generic[In]):
    """Any other intent: a handler given the service, the session and the intent."""

    handler: Handler[In]


@dataclass(frozen=True, slots=True)
class Http:
    """An intent's route under ``/api/v1/worlds/{world_id}``. A ``get`` route's query
    parameters (``query``: name -> JSON Schema) become the intent's fields, beside a fresh
    request id; a ``post`` route's body is the intent. ``on_action``: the route is
    ``actions/{action_id}/<verb>`` (the event after ``action.``, ``-`` for ``_``), its
    ``action_id`` the path's."""

    method: Literal["get", "post"]
    path: str
    operation_id: str
    summary: str
    query: Mapping[str, dict[str, Any]] = field(default_factory=dict)
    on_action: bool = False


def on_action(operation_id: str, summary: str) -> Http:
    """The route of an intent on a started action (see :attr:`Http.on_action`)."""
    return Http("post", "", operation_id, summary, on_action=True)


@dataclass(frozen=True, slots=True)
class Declared(Generic[In]):
    """One intent: its model, what answers it, and its policy (see the module's text)."""

    model: type[In]
    answer: Act[In] | Change[In] | Handle[In]
    unbound: bool = False
    relayed: bool = True
    costed: bool = False
    http: Http | None = None

    @property
    def event(self) -> str:
        return self.model.__event__


async def on_socket_only(_service: BridgeService, _session: Session, _intent: Any) -> Reply:
    """The relay envelopes: the socket port opens them itself, so they never reach here."""
    raise IntentError("forbidden", "Relays travel only on a GM's socket connection.")


TABLE: tuple[Declared[Any], ...] = (
    # --- the world, its actors and its users
    Declared(protocol.Hello, Handle(world.hello), unbound=True),
    Declared(protocol.WorldSync, Handle(world.world_sync)),
    Declared(protocol.ActorSync, Handle(world.actor_sync), http=Http(
        "post", "/characters", "syncCharacter", "Add or update a character as the GM's "
        "Foundry client syncs an actor (socket intent actor.sync): a script's world before "
        "Foundry has synced any; Foundry's next sync of that actor replaces it")),
    Declared(protocol.WorldRead, Handle(world.world_state), http=Http(
        "get", "/state", "readWorldState", "The world: characters, aspects, the GM's fate "
        "points, open actions (socket intent world.state)")),
    Declared(protocol.CardWritten, Handle(world.card_written)),
    # A relayed user is who Foundry says it is: the direct mode's binding is not relayed.
    Declared(protocol.UserBind, Handle(world.user_bind), relayed=False),
    Declared(protocol.WorldVerify, Handle(world.world_verify)),
    Declared(protocol.GmBudget, Handle(world.gm_budget)),
    Declared(protocol.DevQueueDice, Handle(world.dev_queue_dice)),
    # --- one action's life (R2-R10)
    Declared(protocol.ActionStart, Act(action.action_start), http=Http(
        "post", "/actions", "startAction", "Start an action as the GM (socket intent "
        "action.start); a repeated request_id answers as the first time and changes nothing")),
    Declared(protocol.ActionOdds, Handle(action.action_odds), http=Http(
        "post", "/actions/odds", "actionOdds", "The exact odds of each outcome before an "
        "action exists (socket intent action.odds); commits nothing")),
    Declared(protocol.ActionRoll, Act(action.action_roll), http=on_action(
        "rollAction", "Close a dangerous action's concession window and roll (R9.3)")),
    Declared(protocol.ActionOppose, Act(action.action_oppose), http=on_action(
        "opposeAction", "The active opposer rolls its skill (R2.2)")),
    Declared(protocol.ActionInterpose, Act(action.action_interpose), http=on_action(
        "interposeOnAction", "Let a character in the conflict defend in the target's place "
        "and take the hit (R13.11)")),
    Declared(protocol.ActionInvoke, Act(action.action_invoke), http=on_action(
        "invokeOnAction", "Invoke an aspect for a side: +2, a reroll or a hostile invoke, "
        "paid by fate point, free invoke or boost (R4.1, R4.2)")),
    Declared(protocol.ActionPass, Act(action.action_pass), http=on_action(
        "passOnAction", "A side invokes no more; once both have passed the action resolves "
        "(R4.4)")),
    Declared(protocol.ActionChoose, Act(action.action_choose), http=on_action(
        "chooseOnAction", "Make the choice the outcome offers: fail or succeed at a cost, an "
        "aspect, a mark, a boost (R5)")),
    Declared(protocol.ActionCost, Act(action.action_cost), http=on_action(
        "setActionCost", "Set the cost of a success at a cost (R6)")),
    Declared(protocol.ActionConcede, Act(action.action_concede), http=on_action(
        "concedeAction", "A character concedes a dangerous action before the roll (R9.3)")),
    Declared(protocol.ActionAbsorb, Act(action.action_absorb), http=on_action(
        "absorbHit", "Absorb a hit with stress boxes and consequences (R5.10, R7)")),
    Declared(protocol.ActionGift, Act(action.action_gift), http=on_action(
        "giftFreeInvoke", "Give someone else the free invoke of a fumbled advantage (R5.2, "
        "R5.3)")),
    Declared(protocol.ActionCancel, Act(action.action_cancel), http=on_action(
        "cancelAction", "Call an open action off; invoke payments go back")),
    Declared(protocol.ActionConfirm, Act(action.action_confirm), http=on_action(
        "confirmAction", "Confirm or change a player's proposal: the passive rating, the "
        "danger (R2.1, R9.1)")),
    Declared(protocol.ActionHelp, Act(action.action_help), http=on_action(
        "answerHelp", "Accept or decline for a character the action waits on: a named "
        "helper (R10.1), or one it would target, have oppose or be about (consent to harm)")),
    Declared(protocol.ActionHint, Act(action.action_hint), http=on_action(
        "takeHint", "The actor of an excelled discover takes the hint (R5.5)")),
    Declared(protocol.ActionHintGive, Act(action.action_hint_give), http=on_action(
        "giveHint", "Answer the hint the actor asked for (R5.5)")),
    Declared(protocol.AspectGive, Handle(action.aspect_give)),
    # --- the scene, its procedures (R11) and fate points (R12)
    Declared(protocol.SceneEnd, Handle(scene.scene_end), http=Http(
        "post", "/scene/end", "endScene", "End the scene, session or scenario (socket "
        "intent scene.end); idempotent by request_id")),
    Declared(protocol.SceneAspect, Change(scene.scene_aspect)),
    Declared(protocol.WorldSettingsIn, Change(scene.world_settings)),
    Declared(protocol.WorldRuleset, Handle(scene.world_ruleset)),
    Declared(protocol.SceneRead, Handle(scene.scene_read), http=Http(
        "get", "/scene", "readScene", "The scene: aspects, contests, challenges, conflicts, "
        "compels (socket intent scene.read)")),
    Declared(protocol.ContestStart, Change(scene.contest_start)),
    Declared(protocol.ContestRoll, Act(scene.contest_roll)),
    Declared(protocol.ContestAdvantage, Act(scene.contest_advantage)),
    Declared(protocol.ContestTwist, Change(scene.contest_twist)),
    Declared(protocol.ContestConcede, Change(scene.contest_concede)),
    Declared(protocol.ChallengeStart, Change(scene.challenge_start)),
    Declared(protocol.ChallengeRoll, Act(scene.challenge_roll)),
    Declared(protocol.ChallengeAdvantage, Act(scene.challenge_advantage)),
    Declared(protocol.ChallengeCarry, Change(scene.challenge_carry)),
    Declared(protocol.ConflictStart, Change(scene.conflict_start)),
    Declared(protocol.ConflictOrder, Change(scene.conflict_order)),
    Declared(protocol.ConflictNext, Change(scene.conflict_next)),
    Declared(protocol.ConflictFullDefense, Change(scene.conflict_full_defense)),
    Declared(protocol.ConflictConcede, Change(scene.conflict_concede)),
    Declared(protocol.ConflictMove, Change(scene.conflict_move)),
    Declared(protocol.ConflictZones, Change(scene.conflict_zones)),
    Declared(protocol.ConflictEnd, Change(scene.conflict_end)),
    Declared(protocol.FateCompel, Change(scene.fate_compel)),
    Declared(protocol.FateCompelAnswer, Change(scene.fate_compel_answer)),
    Declared(protocol.FateSpend, Handle(scene.fate_spend)),
    Declared(protocol.FateSacrifice, Handle(scene.fate_sacrifice)),
    # --- the roll history (reads charged by what they read)
    Declared(protocol.HistoryRead, Handle(history.history_read), costed=True, http=Http(
        "get", "/history", "readHistory", "One page of the roll history, newest first "
        "(socket intent history.read); next_before pages on", query={
            "before": {"type": "integer", "minimum": 1},
            "limit": {"type": "integer", "minimum": 1, "maximum": 50},
            "scene": {"type": "integer", "minimum": 1},
            "character": {"type": "string", "maxLength": 64},
            "kind": {"type": "string", "enum": list(get_args(protocol.HistoryKindName))},
            "cancelled": {"type": "boolean"},
        })),
    Declared(protocol.HistoryStats, Handle(history.history_stats), costed=True),
    Declared(protocol.HistoryUndo, Handle(history.history_undo)),
    # --- relay mode's envelopes, opened by the socket port (bridge.transport.port)
    Declared(protocol.Relay, Handle(on_socket_only), relayed=False),
    Declared(protocol.RelayLeave, Handle(on_socket_only), relayed=False),
)  # fmt: skip

DECLARED: dict[str, Declared[Any]] = {declared.event: declared for declared in TABLE}
"""Each intent's row by its event."""

if len(DECLARED) != len(TABLE) or set(DECLARED) != set(protocol.INTENTS):
    raise RuntimeError(
        f"each intent model needs exactly one row: {sorted(set(protocol.INTENTS) ^ set(DECLARED))}"
    )
