/**
 * Adapter for the fate-core-official system: `system.skills` is an object keyed by skill name,
 * each skill `{name, rank, hidden, ...}`.
 * @module adapters/fate-core-official
 */
import { ownerIds, toRating, toSkillName } from "./common.mjs";

export const SYSTEM_ID = "fate-core-official";

/**
 * The actor's skills, name -> rating.
 * @param {Actor} actor
 * @returns {Record<string, number>}
 */
export function skills(actor) {
  /** @type {Record<string, number>} */
  const out = {};
  for (const [key, skill] of Object.entries(actor.system?.skills ?? {})) {
    const name = toSkillName(skill?.name || key);
    const rating = toRating(skill?.rank);
    if (name !== null && rating !== null) out[name] = rating;
  }
  return out;
}

/**
 * @param {Actor} actor
 * @returns {import("../protocol.mjs").ActorData}
 */
export function toActorData(actor) {
  return { id: actor.id, name: actor.name, owners: ownerIds(actor), skills: skills(actor) };
}

/**
 * Whether an actor update touched something the bridge knows about.
 * @param {object} changed  the diff passed to `updateActor`
 */
export function isRelevantChange(changed) {
  return "name" in changed || "ownership" in changed || Boolean(changed.system?.skills);
}
