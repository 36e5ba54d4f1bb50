// The sender's ack carries an action's card once, in the card's emit (schemas/defs/ActionData.json):
// the module puts it back into the answer (foundry-module/scripts/protocol.mjs cardPutBack).
import assert from "node:assert/strict";
import path from "node:path";
import { test } from "node:test";
import { MODULE_DIR } from "./support/node-foundry.mjs";

const { cardPutBack } = await import(path.join(MODULE_DIR, "scripts/protocol.mjs"));

const card = { action_id: "a1", state: "invoking" };
const emit = (cardId, shown) => ({ event: "card", data: { seq: 3, world: "w", writer: "u", op: "create", card_id: cardId, card: shown, anchor: null } });

test("an answer whose card is left to its emit gets that card back", () => {
  const ack = { ok: true, data: { action_id: "a1", card_id: "w.a1", card: null }, emits: [emit("w.a0", { action_id: "a0" }), emit("w.a1", card)] };
  assert.equal(cardPutBack(ack).data.card, card);
});

test("an answer that carries its card, or has no emits, is left as it is", () => {
  const stored = { ok: true, data: { action_id: "a1", card_id: "w.a1", card } };
  assert.deepEqual(cardPutBack(structuredClone(stored)), stored);
  const other = { ok: true, data: { queued: 1 }, emits: [emit("w.a1", card)] };
  assert.deepEqual(cardPutBack(structuredClone(other)), other);
  const refused = { ok: false, error: { code: "invalid", message: "no" } };
  assert.deepEqual(cardPutBack(structuredClone(refused)), refused);
});

test("a card the emits do not carry stays null rather than a wrong card", () => {
  const ack = { ok: true, data: { action_id: "a2", card_id: "w.a2", card: null }, emits: [emit("w.a1", card)] };
  assert.equal(cardPutBack(ack).data.card, null);
});
