/**
 * Writes the bridge's `card` emits into Foundry chat. Exactly one client writes each emit: the one
 * whose user id is the emit's `writer`. A card is created once and updated in place afterwards,
 * found by its `cardId` flag, so a replayed emit never duplicates a message.
 * @module cards
 */
import { characterActor } from "../foundry/characters.mjs";
import { cardContext } from "./view.mjs";
import { diceSound, mayUpdate, renderTemplate, showDice } from "../foundry/compat.mjs";
import { MODULE_ID } from "../protocol.mjs";
import { GM_CARDS } from "../scene/cards.mjs";

const CARD_TEMPLATE = `modules/${MODULE_ID}/templates/action-card.hbs`;

/**
 * Marker in a bridge roll's options. fate-core-official takes `options.fco_formula`, when set,
 * as the roll's dice formula and records a roll into its Fate Utilities roll list (and decorates
 * it on render) only when that formula is one of its world's Fate formulae or the roll's formula
 * starts with "4df"/"4dF" (FateUtilities.js, its `createChatMessage` and `renderChatMessageHTML`
 * hooks). A bridge roll is the bridge's, not one FCO may re-total or pay for.
 */
const BRIDGE_ROLL_FORMULA = "fate-bridge";

/**
 * The data of a pre-evaluated Roll carrying exactly one side's dice from the bridge: everything
 * the side adds (skill, stunts, teamwork, invokes) first, then 4dF with the given faces, totalling
 * the side's total. The modifier leads so the formula never starts with "4dF" (see
 * BRIDGE_ROLL_FORMULA); Dice So Nice animates the FateDie term wherever it stands.
 * Null for a side without dice (passive opposition, not rolled yet).
 * @param {import("../protocol.mjs").CardSide} side
 */
export function rollData(side) {
  if (!side?.dice || !side.total) return null;
  const modifier = side.total.value - side.dice_total;
  return {
    class: "Roll",
    options: { fco_formula: BRIDGE_ROLL_FORMULA },
    dice: [],
    formula: `${modifier} + 4dF`,
    terms: [
      { class: "NumericTerm", options: {}, evaluated: true, number: modifier },
      { class: "OperatorTerm", options: {}, evaluated: true, operator: "+" },
      {
        class: "FateDie",
        options: {},
        evaluated: true,
        number: 4,
        faces: 3,
        modifiers: [],
        results: side.dice.map((result) => ({ result, active: true }))
      }
    ],
    total: side.total.value,
    evaluated: true
  };
}

/**
 * The message's rolls: the actor's, then the opposition's when it rolled.
 * @param {import("../protocol.mjs").ActionCard} card
 * @returns {Roll[]}
 */
function cardRolls(card) {
  return [card.actor, card.opposition].map(rollData).filter(Boolean).map((data) => Roll.fromData(data));
}

/**
 * The chat message of a card, if this world has it.
 * @param {string} cardId
 * @returns {ChatMessage|undefined}
 */
function findCardMessage(cardId) {
  return game.messages.find((m) => m.flags?.[MODULE_ID]?.cardId === cardId);
}

/**
 * Whether this client writes a card emit: the user it names, or for `writer: "gm"` (a GM card,
 * or an action whose acting user is not connected) the writing GM's client only.
 * @param {import("../net/bridge.mjs").Bridge} bridge
 * @param {{writer: string}} emit
 */
function writesCard(bridge, emit) {
  if (!emit?.card) return false;
  if (emit.writer === "gm") return bridge.isWritingGM();
  return emit.writer === game.user.id;
}

/**
 * A card message's flags: its card id, the emit's seq, the card, and the anchor of the last
 * event behind it (`{seq, hash}`), so Foundry's chat log can vouch for the bridge's log.
 * @param {import("../protocol.mjs").CardEmit} emit
 */
function cardFlags(emit) {
  const flags = { cardId: emit.card_id, seq: emit.seq, card: emit.card };
  if (emit.anchor) flags.anchor = { seq: emit.anchor.seq, hash: emit.anchor.hash };
  return { [MODULE_ID]: flags };
}

/** Per-card chains, so a live emit and a replayed one for the same card never race. */
const chains = new Map();

/**
 * Handle one `card` emit. Resolves to the message written, or null when this client is not the
 * writer or the message already holds this emit or a newer one.
 * @param {import("../net/bridge.mjs").Bridge} bridge
 * @param {import("../protocol.mjs").CardEmit} emit
 * @returns {Promise<ChatMessage|null>}
 */
export function handleCardEmit(bridge, emit) {
  if (!writesCard(bridge, emit)) return Promise.resolve(null);
  const prior = chains.get(emit.card_id) ?? Promise.resolve();
  const next = prior.catch(() => {}).then(() => writeCard(bridge, emit));
  chains.set(emit.card_id, next);
  next.finally(() => {
    if (chains.get(emit.card_id) === next) chains.delete(emit.card_id);
  }).catch(() => {});
  return next;
}

/** The rolls carry dice and totals: rewrite them when either changes (an invoke's +2 too). */
const rollsKey = (card) => JSON.stringify([rollData(card?.actor), rollData(card?.opposition)]);

/**
 * @param {import("../net/bridge.mjs").Bridge} bridge
 * @param {import("../protocol.mjs").CardEmit} emit
 */
async function writeCard(bridge, emit) {
  const { card } = emit;
  if ((card.kind ?? "action") !== "action") return writeGmCard(bridge, emit);
  const content = await renderTemplate(CARD_TEMPLATE, cardContext(card, emit.seq));
  const flags = cardFlags(emit);
  const existing = findCardMessage(emit.card_id);
  if (existing) {
    if ((existing.flags?.[MODULE_ID]?.seq ?? -1) >= emit.seq) return null;
    if (!mayUpdate(existing)) {
      // The bridge sends a card to its message's author (or the GM) once it knows the author;
      // until then a refused update would only throw. Say who holds it.
      console.warn(`fate-bridge | card ${emit.card_id} belongs to ${existing.author?.name ?? "another user"}; this client may not update it`);
      return null;
    }
    const before = existing.flags?.[MODULE_ID]?.card;
    const update = { content, flags };
    if (rollsKey(before) !== rollsKey(card)) {
      update.rolls = cardRolls(card);
      const sides = ["actor", "opposition"].filter((s) => JSON.stringify(before?.[s]?.dice ?? null) !== JSON.stringify(card[s].dice ?? null));
      // A message update does not animate: show new dice (a reroll, the first roll) ourselves.
      for (const s of sides) {
        const data = rollData(card[s]);
        if (data) showDice(Roll.fromData(data));
      }
    }
    await existing.update(update);
    return existing;
  }
  const leader = card.actor.leader;
  const actor = leader ? characterActor(leader.id) : null;
  const speaker = actor ? ChatMessage.getSpeaker({ actor }) : ChatMessage.getSpeaker({ alias: leader?.name ?? "" });
  const rolls = cardRolls(card);
  const data = { speaker, content, rolls, flags };
  if (rolls.length) data.sound = diceSound();
  const message = await ChatMessage.create(data);
  await reportAuthor(bridge, card.action_id, message);
  return message;
}

/**
 * Tell the bridge who authored an action card's message: Foundry lets only that user or a GM
 * update it, so the bridge sends the card's later updates to that user while connected and to
 * the active GM otherwise (`card.written`).
 * @param {import("../net/bridge.mjs").Bridge} bridge
 * @param {string} actionId
 * @param {ChatMessage|null} message
 */
async function reportAuthor(bridge, actionId, message) {
  const connection = bridge.connection;
  const author = message?.author?.id;
  if (!connection?.connected || !author) return null;
  const ack = await connection.call("card.written", { action_id: actionId, author });
  if (!ack.ok) console.warn("fate-bridge | card.written refused", ack.error);
  return ack;
}

/**
 * Render a GM card (contest, challenge, scene end) from its template.
 * @param {{kind: string}} card
 * @param {string|null} ruleset  the world's (hello's)
 * @returns {Promise<string>}
 */
function renderGmCard(card, ruleset) {
  const spec = GM_CARDS[card.kind];
  return renderTemplate(spec.template, spec.context(card, ruleset));
}

/**
 * Write a contest, challenge or scene-end card: created once (a replay finds the message by its
 * card id), with the bridge's GM as the speaker.
 * @param {import("../net/bridge.mjs").Bridge} bridge
 * @param {import("../protocol.mjs").CardEmit} emit
 */
async function writeGmCard(bridge, emit) {
  const { card } = emit;
  if (!GM_CARDS[card.kind]) return null;
  const content = await renderGmCard(card, bridge.hello?.ruleset ?? null);
  const flags = cardFlags(emit);
  const existing = findCardMessage(emit.card_id);
  if (existing) {
    if ((existing.flags?.[MODULE_ID]?.seq ?? -1) >= emit.seq) return null;
    await existing.update({ content, flags });
    return existing;
  }
  const speaker = ChatMessage.getSpeaker({ alias: game.i18n.localize("FATEBRIDGE.Title") });
  return ChatMessage.create({ speaker, content, flags });
}

/**
 * Mark the bridge's messages so the stylesheet can frame them (hook `renderChatMessageHTML`).
 * @param {ChatMessage} message
 * @param {HTMLElement} html
 */
export function decorateMessage(message, html) {
  if (message.flags?.[MODULE_ID]?.cardId && html?.classList) html.classList.add("fate-bridge-message");
}
