/**
 * Adapter for any system: the skills live in the module's own actor flags,
 * `flags["fate-bridge"].skills = {name: rating}`, edited from the sheet panel.
 * @module adapters/generic
 */
import { MODULE_ID } from "../protocol.mjs";
import { deletionKey } from "../compat.mjs";
import { ownerIds, toRating, toSkillName } from "./common.mjs";

export const SYSTEM_ID = "*";

/**
 * @param {Actor} actor
 * @returns {Record<string, number>}
 */
export function skills(actor) {
  /** @type {Record<string, number>} */
  const out = {};
  for (const [key, value] of Object.entries(actor.flags?.[MODULE_ID]?.skills ?? {})) {
    const name = toSkillName(key);
    const rating = toRating(value);
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

/** @param {object} changed */
export function isRelevantChange(changed) {
  return "name" in changed || "ownership" in changed || Boolean(changed.flags?.[MODULE_ID]);
}

/**
 * Set (or, with `rating === null`, remove) one skill on the actor, in one update.
 * @param {Actor} actor
 * @param {string} name
 * @param {number|null} rating
 */
export async function setSkill(actor, name, rating) {
  const skillsUpdate = rating === null ? deletionKey(name) : { [name]: rating };
  await actor.update({ flags: { [MODULE_ID]: { skills: skillsUpdate } } });
}
