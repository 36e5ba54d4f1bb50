/**
 * Picks the adapter for the running system.
 * @module adapters
 */
import * as fco from "./fate-core-official.mjs";
import * as generic from "./generic.mjs";

/**
 * @typedef {object} Adapter
 * @property {string} SYSTEM_ID
 * @property {(actor: Actor) => boolean} isCharacter  whether the actor is synced as a character
 * @property {(actor: Actor) => Record<string, number>} skills
 * @property {(actor: Actor) => import("../protocol.mjs").ActorData} toActorData
 * @property {(actor: Actor, patch: import("../protocol.mjs").ActorPatch) => object} patchUpdate
 * @property {(changed: object) => boolean} isRelevantChange
 */

/**
 * @param {string} [systemId]
 * @returns {Adapter}
 */
export function adapterFor(systemId = game.system?.id) {
  return systemId === fco.SYSTEM_ID ? fco : generic;
}
