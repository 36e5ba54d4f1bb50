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
 * @property {(name: unknown) => string|null} [sheetSkill]  a skill as the sheet names it, as the
 *   bridge knows it (FCO: an approach in the world's language by its canonical name, R13.1)
 * @property {(actor: Actor) => import("../protocol.mjs").ActorData} toActorData
 * @property {(actor: Actor, patch: import("../protocol.mjs").ActorPatch) => object} patchUpdate
 * @property {(changed: object) => boolean} isRelevantChange
 * @property {(changed: object, options?: object) => boolean} [isTransientChange]  a system's
 *   halfway write (a block emptied before it is written back): not synced
 * @property {(actor: Actor) => {id: string, path: string}[]} [guardedFields]  fields the bridge
 *   writes that a stale sheet may re-submit (stale-guard.mjs)
 */

/**
 * @param {string} [systemId]
 * @returns {Adapter}
 */
export function adapterFor(systemId = game.system?.id) {
  return systemId === fco.SYSTEM_ID ? fco : generic;
}
