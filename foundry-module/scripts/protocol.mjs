/**
 * Wire constants shared with the bridge (bridge/protocol.py, schemas/).
 * @module protocol
 */

/** The protocol version this module speaks; the bridge refuses a mismatch at connect. */
export const PROTOCOL_VERSION = 1;

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

/** Identifier pattern of ids on the wire (actor ids, user ids, request ids). */
export const IDENTIFIER = /^[A-Za-z0-9_.:-]{1,64}$/;

/**
 * @typedef {object} ActorData  What the bridge knows of an actor (schemas/client/actor_sync.json).
 * @property {string} id
 * @property {string} name
 * @property {string[]} owners  ids of users who own the actor
 * @property {Record<string, number>} skills  skill name -> rating
 */

/**
 * @typedef {object} Rated
 * @property {number} value
 * @property {string} label
 */

/**
 * @typedef {object} ActionCard  (schemas/server/card.json `ActionCard`)
 * @property {string} action_id
 * @property {string} action_label
 * @property {string} action_type
 * @property {{id: string, name: string}} actor
 * @property {string} skill
 * @property {Rated} skill_rating
 * @property {number[]} dice
 * @property {number} dice_total
 * @property {Rated} total
 * @property {Rated} opposition
 * @property {string} opposition_kind
 * @property {number} shifts
 * @property {"fumble"|"tie"|"succeed"|"excel"} outcome
 * @property {string} outcome_label
 * @property {"rolled"|"invoking"|"choosing"|"resolved"} state
 * @property {{id: string, name: string, holder_id: string}|null} [boost]
 * @property {string|null} [description]
 * @property {number} event_seq
 * @property {string} event_hash
 */

/**
 * @typedef {object} CardEmit  (schemas/server/card.json)
 * @property {number} seq
 * @property {string} world
 * @property {string} writer  the Foundry user id of the one client that writes it
 * @property {"create"|"update"} op
 * @property {string} card_id
 * @property {ActionCard} card
 */

/**
 * @typedef {{ok: true, data: object} | {ok: false, error: {code: string, message: string, field?: string}}} Ack
 */
