/**
 * Helpers shared by the adapters.
 * @module adapters/common
 */
import { ownerLevel } from "../foundry/compat.mjs";
import { IDENTIFIER, RATING_MAX, RATING_MIN } from "../protocol.mjs";

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
 * A name as the bridge accepts it (1..120 characters), or null.
 * @param {unknown} name
 * @returns {string|null}
 */
export function toSkillName(name) {
  if (typeof name !== "string") return null;
  const trimmed = name.trim();
  return trimmed.length >= 1 && trimmed.length <= 120 ? trimmed : null;
}

/**
 * Aspect and consequence text: tags stripped, trimmed, at most 120 characters; null when empty.
 * @param {unknown} text
 * @returns {string|null}
 */
export function toAspectText(text) {
  if (typeof text !== "string") return null;
  const plain = text.replace(/<[^>]*>/g, " ").replace(/&nbsp;/g, " ").replace(/\s+/g, " ").trim();
  return plain ? plain.slice(0, 120) : null;
}

/**
 * A whole number clamped into [min, max], or null when not a number.
 * @param {unknown} value
 * @param {number} min
 * @param {number} max
 */
export function clampInt(value, min, max) {
  const n = Number(value);
  if (value === null || value === undefined || value === "" || !Number.isFinite(n)) return null;
  return Math.min(max, Math.max(min, Math.trunc(n)));
}

/** Longest system key used as it is: the bridge prefixes aspect keys with the character id. */
const KEY_MAX = 60;

/**
 * A stable wire identifier for a system key: the key itself when it is one of at most 60
 * characters, otherwise a short deterministic hash of it (fate-core-official keys may be base64
 * with `+`, `/`, `=`). At most 60 characters, so "<character id>.<key>" stays an identifier
 * even for a token character (a 45-character token UUID).
 * @param {string} key
 * @returns {string}
 */
export function toIdentifier(key) {
  const s = String(key);
  if (IDENTIFIER.test(s) && s.length <= KEY_MAX) return s;
  let h1 = 0x811c9dc5;
  let h2 = 0x01000193;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 16777619) >>> 0;
    h2 = Math.imul(h2 + c, 2246822519) >>> 0;
  }
  const safe = s.replace(/[^A-Za-z0-9_.:-]/g, "").slice(0, 40);
  return `${safe || "k"}-${h1.toString(36)}${h2.toString(36)}`;
}

/** Drop fields whose value is null or undefined (the bridge then keeps what it has). */
export function compact(obj) {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== null && v !== undefined));
}
