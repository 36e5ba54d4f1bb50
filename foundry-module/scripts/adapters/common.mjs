/**
 * Helpers shared by the adapters.
 * @module adapters/common
 */
import { ownerLevel } from "../compat.mjs";
import { RATING_MAX, RATING_MIN } from "../protocol.mjs";

/**
 * Ids of the users who own an actor (the "default" entry is not a user).
 * @param {Actor} actor
 * @returns {string[]}
 */
export function ownerIds(actor) {
  const level = ownerLevel();
  return Object.entries(actor.ownership ?? {})
    .filter(([id, lvl]) => id !== "default" && Number(lvl) >= level)
    .map(([id]) => id)
    .sort();
}

/**
 * A skill rating as the bridge accepts it, or null when it is not a usable number.
 * @param {unknown} value
 * @returns {number|null}
 */
export function toRating(value) {
  const n = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
  if (typeof n !== "number" || !Number.isInteger(n)) return null;
  if (n < RATING_MIN || n > RATING_MAX) return null;
  return n;
}

/**
 * A skill name as the bridge accepts it (1..120 characters), or null.
 * @param {unknown} name
 * @returns {string|null}
 */
export function toSkillName(name) {
  if (typeof name !== "string") return null;
  const trimmed = name.trim();
  return trimmed.length >= 1 && trimmed.length <= 120 ? trimmed : null;
}
