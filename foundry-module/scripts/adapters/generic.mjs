/**
 * Adapter for any system: the character lives in the module's own actor flags,
 * `flags["fate-bridge"]`:
 *  - `skills {name: rating}` (edited from the sheet panel),
 *  - `stunts [{name, skill, bonus, actions}]`, `aspects [{key, name}]`,
 *  - `fatePoints`, `refresh`, `consequences [{id, severity, name}]`, `stress [bool]`,
 *  - written back by the bridge: `pendingFatePoints`, `overwhelmed`.
 * @module adapters/generic
 */
import { characterId } from "../characters.mjs";
import { MODULE_ID } from "../protocol.mjs";
import { deletionKey } from "../compat.mjs";
import { clampInt, compact, ownerIds, toAspectText, toIdentifier, toRating, toSkillName } from "./common.mjs";

export const SYSTEM_ID = "*";

/** The default consequence slots (R7.1): one mild, one moderate, one severe. */
export const DEFAULT_SLOTS = Object.freeze([
  { id: "mild", severity: 2 },
  { id: "moderate", severity: 4 },
  { id: "severe", severity: 6 }
]);

const flags = (actor) => actor.flags?.[MODULE_ID] ?? {};

/**
 * @param {Actor} actor
 * @returns {Record<string, number>}
 */
export function skills(actor) {
  /** @type {Record<string, number>} */
  const out = {};
  for (const [key, value] of Object.entries(flags(actor).skills ?? {})) {
    const name = toSkillName(key);
    const rating = toRating(value);
    if (name !== null && rating !== null) out[name] = rating;
  }
  return out;
}

/** Any system's actor may be a character (its skills live in module flags). */
export function isCharacter(actor) {
  return Boolean(actor);
}

/**
 * @param {Actor} actor
 * @returns {import("../protocol.mjs").ActorData}
 */
export function toActorData(actor) {
  const f = flags(actor);
  const list = (v) => (Array.isArray(v) ? v : []);
  const stunts = list(f.stunts).map((s) => compact({
    name: toSkillName(s?.name),
    skill: toSkillName(s?.skill),
    bonus: clampInt(s?.bonus ?? 2, 0, 6),
    actions: Array.isArray(s?.actions) ? s.actions.filter((a) => typeof a === "string").slice(0, 8) : []
  })).filter((s) => s.name && s.skill);
  const aspects = list(f.aspects).map((a) => ({ key: toIdentifier(a?.key ?? a?.name ?? ""), name: toAspectText(a?.name) }))
    .filter((a) => a.name && a.key);
  const slots = Array.isArray(f.consequences) ? f.consequences : DEFAULT_SLOTS;
  return compact({
    id: characterId(actor),
    name: actor.name,
    owners: ownerIds(actor),
    skills: skills(actor),
    stunts: stunts.slice(0, 60),
    aspects: aspects.slice(0, 40),
    fate_points: clampInt(f.fatePoints, 0, 99),
    refresh: clampInt(f.refresh, 0, 20),
    consequences: slots.slice(0, 12).map((s) => compact({
      id: toIdentifier(s?.id ?? ""),
      severity: clampInt(s?.severity, 1, 12),
      name: toAspectText(s?.name)
    })).filter((s) => s.id && s.severity),
    stress: Array.isArray(f.stress) ? f.stress.slice(0, 20).map(Boolean) : null
  });
}

/**
 * The update that writes an `actor.patch` into the module flags.
 * @param {Actor} _actor
 * @param {import("../protocol.mjs").ActorPatch} patch
 */
export function patchUpdate(_actor, patch) {
  const update = {
    [`flags.${MODULE_ID}.fatePoints`]: patch.fate_points,
    [`flags.${MODULE_ID}.pendingFatePoints`]: patch.pending_fate_points,
    [`flags.${MODULE_ID}.overwhelmed`]: patch.overwhelmed,
    [`flags.${MODULE_ID}.consequences`]: patch.consequences.map(({ id, severity, name }) => compact({ id, severity, name })),
    [`flags.${MODULE_ID}.stress`]: [...patch.stress]
  };
  if (Number.isInteger(patch.boosts)) update[`flags.${MODULE_ID}.boosts`] = patch.boosts;
  return update;
}

/** @param {object} changed */
export function isRelevantChange(changed) {
  return "name" in changed || "ownership" in changed || Boolean(changed.flags?.[MODULE_ID])
    || Object.keys(changed).some((k) => k.startsWith(`flags.${MODULE_ID}`));
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
