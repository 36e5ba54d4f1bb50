/**
 * Adapter for any system: the character lives in the module's own actor flags,
 * `flags["fate-bridge"]`:
 *  - `skills {name: rating}` (edited from the sheet panel),
 *  - `stunts [{name, skill, bonus, actions}]`, `aspects [{key, name}]`,
 *  - `fatePoints`, `refresh`, `consequences [{id, severity, name}]`,
 *  - `stress [{id, name, kind, boxes: [{value, marked}]}]`: named stress tracks of kind physical,
 *    mental, any (every hit) or other (never marked by the bridge); an older flat list of
 *    booleans is read as one physical track of 1-shift boxes,
 *  - written back by the bridge: `pendingFatePoints`, `overwhelmed`.
 * @module adapters/generic
 */
import { characterId } from "../foundry/characters.mjs";
import { MODULE_ID } from "../protocol.mjs";
import { deletionKey } from "../foundry/compat.mjs";
import { clampInt, compact, ownerIds, toAspectText, toIdentifier, toRating, toSkillName } from "./common.mjs";

export const SYSTEM_ID = "*";

/** The default consequence slots (R7.1): one mild, one moderate, one severe. */
const DEFAULT_SLOTS = Object.freeze([
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
    stress: stressTracks(f.stress)
  });
}

const KINDS = Object.freeze(["physical", "mental", "any", "other"]);

/**
 * The flag's stress tracks in the bridge's model, or null when the actor has none (the bridge
 * then gives it the ruleset's).
 * @param {unknown} flag
 */
export function stressTracks(flag) {
  if (!Array.isArray(flag)) return null;
  if (flag.length > 0 && flag.every((b) => typeof b === "boolean")) {
    return [{ id: "physical", name: "Physical Stress", kind: "physical", boxes: flag.slice(0, 20).map((marked) => ({ value: 1, marked })) }];
  }
  const seen = new Set();
  const tracks = [];
  for (const t of flag) {
    const id = toIdentifier(t?.id ?? t?.name ?? "");
    if (!t || typeof t !== "object" || seen.has(id)) continue;
    seen.add(id);
    tracks.push({
      id,
      name: toSkillName(t.name) ?? id,
      kind: KINDS.includes(t.kind) ? t.kind : "other",
      boxes: (Array.isArray(t.boxes) ? t.boxes : []).slice(0, 20).map((b) => ({ value: clampInt(b?.value ?? 1, 1, 12), marked: Boolean(b?.marked) }))
    });
  }
  return tracks.slice(0, 12);
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
    // A patch stored before named tracks (a flat list of booleans) reads as the tracks it meant.
    [`flags.${MODULE_ID}.stress`]: stressTracks(patch.stress) ?? []
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
