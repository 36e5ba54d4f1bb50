/**
 * Wire constants shared with the bridge (bridge/protocol.py, schemas/).
 * @module protocol
 */

/** The protocol version this module speaks; the bridge refuses a mismatch at connect. */
export const PROTOCOL_VERSION = 6;

/**
 * The server event carrying one commit's emits (schemas/server/emits.json). The sender of the
 * intent gets the same items in its ack's `emits` instead (schemas/ack.json), handled alike.
 */
export const EMITS_FRAME = "emits";

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

/**
 * @typedef {object} ActorData  What the bridge knows of an actor (schemas/defs/ActorData.json).
 * @property {string} id
 * @property {string} name
 * @property {string[]} owners  ids of users who own the actor
 * @property {Record<string, number>} skills  skill name -> rating
 * @property {{name: string, skill: string, bonus: number, actions: string[]}[]} [stunts]
 * @property {{key: string, name: string}[]} [aspects]
 * @property {number} [fate_points]
 * @property {number} [refresh]
 * @property {{id: string, severity: number, name?: string, harm?: "physical"|"mental"}[]} [consequences]
 * @property {StressTrack[]} [stress]
 */

/**
 * @typedef {object} StressTrack  A named stress track (R5.10; schemas/defs/StressTrackData.json).
 * @property {string} id
 * @property {string} name
 * @property {"physical"|"mental"|"any"|"other"} kind  "any" takes every hit; "other" is not stress
 * @property {{value: number, marked: boolean}[]} boxes  each box absorbs its value
 */

/**
 * @typedef {object} Rated
 * @property {number} value
 * @property {string} label
 */

/**
 * @typedef {object} CardSide  (schemas/defs/CardSide.json)
 * @property {{id: string, name: string}|null} leader
 * @property {{id: string, name: string}[]} helpers
 * @property {string[]} controllers  user ids owning the leader
 * @property {string|null} skill
 * @property {Rated|null} skill_rating
 * @property {number} stunt_bonus
 * @property {number} teamwork_bonus
 * @property {number} invoke_bonus
 * @property {number[]|null} dice
 * @property {number|null} dice_total
 * @property {boolean} passive
 * @property {Rated|null} total
 * @property {boolean} dangerous
 * @property {boolean} passed
 * @property {number|null} fate_points
 * @property {string[]} [stunts]  the stunts this roll counted, by name (R13.8)
 * @property {boolean} [full_defense]  +2 of full defense on this defend roll, in the total (R13.7)
 */

/**
 * @typedef {object} ActionCard  (schemas/defs/ActionCard.json): see bridge/protocol/views.py.
 * @property {string} action_id
 * @property {string} action_type
 * @property {string} action_label
 * @property {"declared"|"awaiting_opposition"|"invoking"|"choosing"|"costing"|"absorbing"|"resolved"|"cancelled"} state
 * @property {CardSide} actor
 * @property {CardSide} opposition
 * @property {"passive"|"active"} opposition_kind
 * @property {object[]} invokes
 * @property {object[]} effects
 * @property {object[]} aspects
 * @property {{kind: string, users: string[], gm: boolean, options: string[]}} prompt
 * @property {number|null} shifts
 * @property {string|null} outcome
 * @property {string|null} outcome_label
 * @property {boolean} provisional
 * @property {number} pending_hit
 * @property {"physical"|"mental"|null} [attack_kind]  an attack's kind of harm (R11.3)
 * @property {"ones"|"one_box"|null} [stress_rule]  how many boxes one hit may mark (R13.2):
 *   "ones" any number of 1-shift boxes (a bigger box alone), "one_box" one box, the smallest
 *   free one worth what the consequences leave; null: any boxes, summed (records before R13)
 * @property {{character: {id: string, name: string}, parts: ("target"|"opposer"|"aspect")[], status: "asked"|"accepted"|"declined", controllers: string[]}[]} [consents]
 *   consent to harm (DESIGN Reach and trust): characters of others a player's action would
 *   touch; "asked" ones wait for their owners (`controllers`) or the GM (action.help)
 */

/**
 * @typedef {object} CardEmit  (schemas/server/card.json, schemas/defs/CardEmit.json)
 * @property {number} seq
 * @property {string} world
 * @property {string} writer  the Foundry user id of the one client that writes it
 * @property {"create"|"update"} op
 * @property {string} card_id
 * @property {ActionCard} card
 */

/**
 * @typedef {object} ActorPatch  (schemas/server/actor_patch.json)
 * @property {number} seq
 * @property {string} actor_id
 * @property {number} fate_points
 * @property {number} pending_fate_points
 * @property {{id: string, severity: number, name: string|null, status: string}[]} consequences
 * @property {StressTrack[]} stress
 * @property {boolean} overwhelmed
 * @property {number} [boosts]  boosts the character holds
 */

/**
 * @typedef {{ok: true, data: object} | {ok: false, error: {code: string, message: string, field?: string}}} Ack
 */
