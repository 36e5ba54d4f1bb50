/**
 * What a chat card shows, computed from the bridge's card so the template stays logic-free.
 * The same for every viewer: per-user buttons are added at render time (card-controls.mjs).
 * @module card-view
 */
import { actionName, ladderEntry, outcomeName, ratedParts, ratedText, signed, skillName, whoName } from "../foundry/format.mjs";

const GLYPHS = { 1: "+", 0: "", [-1]: "\u2212" };
const FACE_CLASS = { 1: "plus", 0: "blank", [-1]: "minus" };

/** @param {number[]|null} dice */
export function diceView(dice) {
  return (dice ?? []).map((face) => ({ face, glyph: GLYPHS[face], cls: FACE_CLASS[face] }));
}

const nameOf = (who) => whoName(who);

/**
 * One side of the action.
 * @param {import("../protocol.mjs").CardSide} side
 * @param {"actor"|"opposition"} which
 * @param {import("../protocol.mjs").ActionCard} card
 */
function sideView(side, which, card) {
  const i18n = game.i18n;
  const bonuses = [];
  const add = (key, n) => { if (n) bonuses.push({ label: i18n.localize(`FATEBRIDGE.Card.Bonus.${key}`), value: signed(n), negative: n < 0 }); };
  add("stunt", side.stunt_bonus);
  add("teamwork", side.teamwork_bonus);
  add("invokes", side.invoke_bonus);
  // R13.7: full defense's +2, already in the total.
  if (side.full_defense) bonuses.push({ label: i18n.localize("FATEBRIDGE.Card.Bonus.fullDefense"), value: signed(2), negative: false, fullDefense: true });
  const passive = side.passive;
  const name = side.leader ? nameOf(side.leader)
    : i18n.localize(which === "opposition" ? "FATEBRIDGE.Card.PassiveOpposition" : "FATEBRIDGE.Card.Nobody");
  return {
    which,
    name,
    helpers: side.helpers.length ? i18n.format("FATEBRIDGE.Card.WithHelpers", { names: side.helpers.map(nameOf).join(", ") }) : null,
    skill: side.skill ? skillName(side.skill) : side.skill,
    skillRating: ratedText(side.skill_rating),
    passive,
    dice: diceView(side.dice),
    diceTotal: side.dice ? signed(side.dice_total) : null,
    bonuses,
    // R13.8: each stunt this roll counted, by name.
    stunts: side.stunts ?? [],
    stuntsLabel: side.stunts?.length ? i18n.localize("FATEBRIDGE.Card.Stunts") : null,
    fullDefense: Boolean(side.full_defense),
    total: side.total ? { label: ratedParts(side.total).word, value: signed(side.total.value) } : null,
    waiting: !side.total,
    dangerous: side.dangerous,
    passed: card.state === "invoking" && side.passed,
    fatePoints: side.fate_points === null ? null : i18n.format("FATEBRIDGE.Card.FatePoints", { n: side.fate_points })
  };
}

/**
 * One invoke in words: who, which aspect, how paid, what for.
 * @param {object} invoke  CardInvoke
 */
export function invokeText(invoke) {
  const i18n = game.i18n;
  return i18n.format(`FATEBRIDGE.Card.Invoke.${invoke.effect}`, {
    who: invoke.invoker === "gm" ? whoName({ id: "gm" }) : invoke.invoker_name || invoke.invoker,
    aspect: invoke.aspect_name,
    payment: i18n.localize(`FATEBRIDGE.Card.Payment.${invoke.payment}`)
  });
}

/** A localized word for a machine-readable key, or the fallback when the key is unknown. */
function word(key, fallback) {
  const text = game.i18n.localize(key);
  return text === key ? fallback : text;
}

/**
 * One effect in words, from its structured fields (kind, detail, count, character, cause).
 * @param {object} effect  CardEffect
 * @param {import("../protocol.mjs").ActionCard} card
 */
export function effectText(effect, card) {
  const i18n = game.i18n;
  const aspect = card.aspects?.find((a) => a.id === effect.aspect_id)?.name ?? effect.text;
  const data = { who: effect.character ? whoName(effect.character) : i18n.localize("FATEBRIDGE.Card.Someone"), text: effect.text, count: effect.count, aspect };
  let key = `FATEBRIDGE.Card.Effect.${effect.kind}`;
  switch (effect.kind) {
    case "consequence":
      if (effect.detail === "addressed") key += "Addressed";
      else data.severity = word(`FATEBRIDGE.Severity.${effect.detail}`, effect.detail || String(effect.count));
      break;
    case "cost": {
      // detail "minor.wrinkle": the severity and the ruleset's cost kind.
      const [severity, kind = ""] = String(effect.detail ?? "").split(".");
      data.severity = word(`FATEBRIDGE.Controls.CostTitle.${severity}`, severity);
      data.kind = word(`FATEBRIDGE.Cost.${kind}`, kind);
      if (!effect.text) key += "NoText";
      break;
    }
    case "overwhelmed":
      if (effect.cause) {
        key += "By";
        data.cause = whoName(effect.cause);
      }
      break;
    case "fate_point":
      // detail: why (EarningView.kind); text: the aspect invoked against them, or "".
      data.text = fatePointReason({ kind: effect.detail, aspect: effect.text || null });
      break;
    case "aspect":
      if (!effect.count) key += "NoInvokes";
      else if (effect.count === 1) key += "One";
      break;
    case "free_invokes":
      if (effect.text === "gift") key += "Gift";
      else if (effect.count === 1) key += "One";
      break;
    case "hint":
      // R5.5: offered, asked for by the actor, or given (text: the GM's hint).
      if (effect.detail === "asked") key += "Asked";
      else if (effect.detail === "given") key += "Given";
      break;
    case "cancelled":
      if (!effect.text) key += "NoText";
      break;
    case "vanished":
      key += effect.detail;
      break;
    case "declined":
      // Consent to harm: the part the character played ("target", "opposer", "aspect").
      key += effect.detail;
      break;
    case "questions":
      if (effect.count === 1) key += "One";
      break;
    case "stress":
      // text: the track's name; detail: the shifts its marked boxes absorbed (R5.10).
      data.shifts = effect.detail;
      if (effect.count === 1) key += "One";
      break;
    case "hit":
      if (card.attack_kind) {
        key += "Kind";
        data.kind = word(`FATEBRIDGE.Harm.${card.attack_kind}`, card.attack_kind);
      }
      break;
    default:
      break;
  }
  const text = i18n.localize(key) === key ? i18n.format("FATEBRIDGE.Card.Effect.other", data) : i18n.format(key, data);
  return { kind: effect.kind, text };
}

/** The reasons a fate point is earned (EarningView.kind). */
export const EARNING_KINDS = Object.freeze(["invoked_against", "conceded", "conceded_contest", "hint_unused"]);

/**
 * Why a fate point was earned, from the bridge's EarningView {kind, aspect}. An unknown kind (a
 * newer bridge) is shown as sent.
 * @param {{kind: string, aspect: string|null}} earning
 */
export function fatePointReason(earning) {
  const kind = String(earning?.kind ?? "");
  const key = `FATEBRIDGE.FatePoint.${kind}`;
  if (!EARNING_KINDS.includes(kind)) return kind;
  return game.i18n.format(key, { aspect: earning.aspect ?? "" });
}

/**
 * What a player proposed that waits for the GM (R2.1, R9.1), in words; null when nothing does.
 * @param {import("../protocol.mjs").ActionCard} card
 */
function proposalText(card) {
  const proposal = card.proposal;
  if (!proposal) return null;
  const i18n = game.i18n;
  const parts = [];
  if (proposal.passive_rating) parts.push(i18n.format("FATEBRIDGE.Card.ProposalRating", { rating: ladderEntry(proposal.passive_rating.value) }));
  if (proposal.dangerous_actor) parts.push(i18n.localize("FATEBRIDGE.Card.ProposalDangerActor"));
  if (proposal.dangerous_opposition) parts.push(i18n.localize("FATEBRIDGE.Card.ProposalDangerOpposition"));
  return i18n.format("FATEBRIDGE.Card.Proposal", { what: parts.join(", ") });
}

/**
 * Helpers who have not joined (R10.1): invited, declined or dropped, in words.
 * @param {import("../protocol.mjs").ActionCard} card
 */
function participantLines(card) {
  return (card.participants ?? []).filter((p) => p.status !== "joined").map((p) => ({
    status: p.status,
    text: game.i18n.format(`FATEBRIDGE.Card.Participant.${p.status}`, { name: p.character.name, skill: skillName(p.skill) })
  }));
}

/** Consent to harm: the parts a character plays in an action (CardConsent.parts), in words. */
export function consentParts(parts) {
  return (parts ?? []).map((part) => word(`FATEBRIDGE.Card.ConsentPart.${part}`, part)).join(", ");
}

/**
 * Consent to harm (DESIGN Reach and trust): the characters of others the player's action
 * would touch, each waiting for a yes, accepted or declined, in words.
 * @param {import("../protocol.mjs").ActionCard} card
 */
function consentLines(card) {
  return (card.consents ?? []).map((c) => ({
    status: c.status,
    text: game.i18n.format(`FATEBRIDGE.Card.Consent.${c.status}`, { name: c.character.name, parts: consentParts(c.parts) })
  }));
}

/**
 * Everything the card template shows.
 * @param {import("../protocol.mjs").ActionCard} card
 * @param {number} seq
 */
export function cardContext(card, seq) {
  const i18n = game.i18n;
  const final = card.outcome && !card.provisional;
  const subject = [card.aspect_name, card.target_aspect?.name, card.situation].filter(Boolean);
  return {
    seq,
    actionId: card.action_id,
    actorName: nameOf(card.actor.leader),
    actionLabel: actionName(card.action_type),
    // R13.11: the defender stepped in for the target it names.
    target: card.target
      ? card.interposed_for
        ? i18n.format("FATEBRIDGE.Card.AgainstInterposed", { name: card.target.name, other: card.interposed_for.name })
        : i18n.format("FATEBRIDGE.Card.Against", { name: card.target.name })
      : null,
    subject: subject.length ? subject.join(" \u00b7 ") : null,
    description: card.description || null,
    proposal: proposalText(card),
    participants: participantLines(card),
    consents: consentLines(card),
    actor: sideView(card.actor, "actor", card),
    opposition: sideView(card.opposition, "opposition", card),
    // A cancelled action has no outcome, whatever its dice showed so far.
    outcome: card.state === "cancelled" ? "cancelled" : card.outcome ?? "pending",
    outcomeLabel: card.state === "cancelled"
      ? i18n.localize("FATEBRIDGE.Card.NoOutcome")
      : card.outcome ? outcomeName(card.outcome, card.ruleset) : i18n.localize("FATEBRIDGE.Card.Pending"),
    shifts: card.shifts === null ? null : i18n.format(Math.abs(card.shifts) === 1 ? "FATEBRIDGE.Card.Shift" : "FATEBRIDGE.Card.Shifts", { n: signed(card.shifts) }),
    provisional: card.provisional,
    final,
    state: card.state,
    // Called off by a "no" to consent to harm, not by the GM.
    stateLabel: i18n.localize(`FATEBRIDGE.Card.State.${card.state === "cancelled" && card.effects.some((e) => e.kind === "declined") ? "declined" : card.state}`),
    invokes: card.invokes.map((inv) => ({ side: inv.side, text: invokeText(inv), dice: diceView(inv.dice) })),
    effects: card.effects.filter((e) => e.kind !== "success" && e.kind !== "failure").map((e) => effectText(e, card)),
    verdict: card.succeeded === null ? null : i18n.localize(card.succeeded ? "FATEBRIDGE.Card.Succeeded" : "FATEBRIDGE.Card.Failed"),
    succeeded: card.succeeded,
    // The GM took the action back (history.undo): the card stays, marked, without controls.
    undone: Boolean(card.undone),
    undoneText: card.undone ? i18n.localize("FATEBRIDGE.Card.Undone") : null,
    eventLabel: i18n.format("FATEBRIDGE.Card.Event", { seq: card.event_seq }),
    hashShort: String(card.event_hash).slice(0, 10),
    hashTitle: i18n.format("FATEBRIDGE.Card.HashTitle", { hash: card.event_hash })
  };
}
