/**
 * Writes the bridge's `card` emits into Foundry chat. Exactly one client writes each emit: the one
 * whose user id is the emit's `writer`. A card is created once and updated in place afterwards,
 * found by its `cardId` flag, so a replayed emit never duplicates a message.
 * @module cards
 */
import { diceSound, renderTemplate } from "./compat.mjs";
import { signed } from "./format.mjs";
import { MODULE_ID } from "./protocol.mjs";

export const CARD_TEMPLATE = `modules/${MODULE_ID}/templates/action-card.hbs`;

const GLYPHS = { 1: "+", 0: "", [-1]: "\u2212" };
const FACE_CLASS = { 1: "plus", 0: "blank", [-1]: "minus" };

/**
 * Everything the card template shows, computed here so the template stays logic-free.
 * @param {import("./protocol.mjs").ActionCard} card
 * @param {number} seq
 */
export function cardContext(card, seq) {
  const i18n = game.i18n;
  return {
    actorName: card.actor.name,
    actionLabel: card.action_label,
    skill: card.skill,
    skillRating: signed(card.skill_rating.value),
    skillLabel: card.skill_rating.label,
    dice: card.dice.map((face) => ({ face, glyph: GLYPHS[face], cls: FACE_CLASS[face] })),
    diceTotal: signed(card.dice_total),
    total: { value: signed(card.total.value), label: card.total.label },
    opposition: { value: signed(card.opposition.value), label: card.opposition.label },
    oppositionKind: card.opposition_kind === "passive" ? i18n.localize("FATEBRIDGE.Card.Passive") : card.opposition_kind,
    shifts: signed(card.shifts),
    outcome: card.outcome,
    outcomeLabel: card.outcome_label,
    state: card.state,
    stateLabel: i18n.localize(`FATEBRIDGE.Card.State.${card.state}`),
    boost: card.boost ? i18n.format("FATEBRIDGE.Card.Boost", { name: card.boost.name }) : null,
    description: card.description || null,
    eventLabel: i18n.format("FATEBRIDGE.Card.Event", { seq: card.event_seq }),
    hashShort: String(card.event_hash).slice(0, 10),
    hashTitle: i18n.format("FATEBRIDGE.Card.HashTitle", { hash: card.event_hash }),
    seq
  };
}

/**
 * The data of a pre-evaluated Roll carrying exactly the bridge's dice: 4dF with the given faces,
 * plus the skill rating, totalling the card's total.
 * @param {import("./protocol.mjs").ActionCard} card
 */
export function rollData(card) {
  const rating = card.skill_rating.value;
  const operator = rating < 0 ? "-" : "+";
  const magnitude = Math.abs(rating);
  return {
    class: "Roll",
    options: {},
    dice: [],
    formula: `4dF ${operator} ${magnitude}`,
    terms: [
      {
        class: "FateDie",
        options: {},
        evaluated: true,
        number: 4,
        faces: 3,
        modifiers: [],
        results: card.dice.map((result) => ({ result, active: true }))
      },
      { class: "OperatorTerm", options: {}, evaluated: true, operator },
      { class: "NumericTerm", options: {}, evaluated: true, number: magnitude }
    ],
    total: card.total.value,
    evaluated: true
  };
}

/**
 * The chat message of a card, if this world has it.
 * @param {string} cardId
 * @returns {ChatMessage|undefined}
 */
export function findCardMessage(cardId) {
  return game.messages.find((m) => m.flags?.[MODULE_ID]?.cardId === cardId);
}

/** Per-card chains, so a live emit and a replayed one for the same card never race. */
const chains = new Map();

/**
 * Handle one `card` emit. Resolves to the message written, or null when this client is not the
 * writer or the message already holds this emit or a newer one.
 * @param {import("./protocol.mjs").CardEmit} emit
 * @returns {Promise<ChatMessage|null>}
 */
export function handleCardEmit(emit) {
  if (!emit || emit.writer !== game.user.id) return Promise.resolve(null);
  const prior = chains.get(emit.card_id) ?? Promise.resolve();
  const next = prior.catch(() => {}).then(() => writeCard(emit));
  chains.set(emit.card_id, next);
  next.finally(() => {
    if (chains.get(emit.card_id) === next) chains.delete(emit.card_id);
  }).catch(() => {});
  return next;
}

/** @param {import("./protocol.mjs").CardEmit} emit */
async function writeCard(emit) {
  const { card } = emit;
  const content = await renderTemplate(CARD_TEMPLATE, cardContext(card, emit.seq));
  const flags = { [MODULE_ID]: { cardId: emit.card_id, seq: emit.seq, card } };
  const existing = findCardMessage(emit.card_id);
  if (existing) {
    if ((existing.flags?.[MODULE_ID]?.seq ?? -1) >= emit.seq) return null;
    const sameDice = JSON.stringify(existing.flags?.[MODULE_ID]?.card?.dice) === JSON.stringify(card.dice);
    const update = { content, flags };
    if (!sameDice) update.rolls = [Roll.fromData(rollData(card))];
    await existing.update(update);
    return existing;
  }
  const actor = game.actors.get(card.actor.id);
  const speaker = actor ? ChatMessage.getSpeaker({ actor }) : ChatMessage.getSpeaker({ alias: card.actor.name });
  return ChatMessage.create({
    speaker,
    content,
    rolls: [Roll.fromData(rollData(card))],
    sound: diceSound(),
    flags
  });
}

/**
 * Mark the bridge's messages so the stylesheet can frame them (hook `renderChatMessageHTML`).
 * @param {ChatMessage} message
 * @param {HTMLElement} html
 */
export function decorateMessage(message, html) {
  if (message.flags?.[MODULE_ID]?.cardId && html?.classList) html.classList.add("fate-bridge-message");
}
