/**
 * Wire constants shared with the bridge (bridge/protocol.py, schemas/).
 * @module protocol
 */

/** The protocol version this module speaks; the bridge refuses a mismatch at connect. */
export const PROTOCOL_VERSION = 8;

/**
 * The server event carrying one commit's emits (schemas/server/emits.json). The sender of the
 * intent gets the same items in its ack's `emits` instead (schemas/ack.json), handled alike.
 */
export const EMITS_FRAME = "emits";

/**
 * An ack as its sender reads it: an action's answer leaves its card to that card's emit in the
 * same ack (`ActionData.card` null there: the card travels once); it is put back from the emit.
 * @template {object} A
 * @param {A} ack
 * @returns {A}
 */
export function cardPutBack(ack) {
  if (Array.isArray(ack?.emits) && ack.data?.card === null && ack.data.card_id) {
    ack.data.card = ack.emits.find((e) => e.event === "card" && e.data?.card_id === ack.data.card_id)?.data.card ?? null;
  }
  return ack;
}

/** Socket.IO namespace of the bridge. */
export const NAMESPACE = "/fate";

/** The module's id, also its flag scope and settings namespace. */
export const MODULE_ID = "fate-bridge";

/** Refusal reasons after which reconnecting cannot help (schemas/connect_refusal.json). */
export const FINAL_REFUSALS = Object.freeze([
  "bad_key",
  "protocol_mismatch",
  "unknown_world",
  "invalid_auth",
  "role"
]);

/** The ladder the roll dialog offers for passive opposition (R1.3, R2.1). */
export const LADDER_MIN = -2;
export const LADDER_MAX = 8;
export const DEFAULT_OPPOSITION = 2;

/** Bounds of a skill rating on the wire (bridge/protocol.py `Rating`). */
export const RATING_MIN = -10;
export const RATING_MAX = 20;

/** Identifier pattern of ids on the wire (actor ids incl. token UUIDs, user ids, aspect ids). */
export const IDENTIFIER = /^[A-Za-z0-9_.:-]{1,128}$/;

/** Status effects the module registers (token.status keys -> status ids). */
export const STATUS_IDS = Object.freeze({
  overwhelmed: "fate-bridge-overwhelmed",
  mild: "fate-bridge-mild",
  moderate: "fate-bridge-moderate",
  severe: "fate-bridge-severe",
  boost: "fate-bridge-boost"
});

/*
 * The wire's shapes are typed in wire-types.mjs, generated with schemas/ from the bridge's
 * models (`make schemas`); the module's files name them from here.
 */

/** @typedef {import("./wire-types.mjs").ActorData} ActorData  What the bridge knows of an actor */
/** @typedef {import("./wire-types.mjs").StressTrackData} StressTrack  A named stress track (R5.10) */
/** @typedef {import("./wire-types.mjs").Rated} Rated  A value with its ladder label */
/** @typedef {import("./wire-types.mjs").CardSide} CardSide  One side of an action */
/** @typedef {import("./wire-types.mjs").ActionCard} ActionCard  A chat card's action */
/** @typedef {import("./wire-types.mjs").CardEmit} CardEmit  A card to write (server `card`) */
/** @typedef {import("./wire-types.mjs").ActorPatch} ActorPatch  Server `actor.patch` */
/** @typedef {import("./wire-types.mjs").Ack} Ack  An intent's answer */
