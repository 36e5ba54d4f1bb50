/**
 * Adapter for fate-core-official (4.7.x data, read from its data models): `system.skills`,
 * `system.aspects`, `system.stunts` and `system.tracks` are objects keyed by id/name;
 *  - skill `{name, rank}`;
 *  - aspect `{name: "High Concept", value: "the aspect's text"}`;
 *  - stunt `{name, linked_skill ("None" when unlinked), bonus, overcome, caa, attack, defend}`;
 *  - track `{name, enabled, harm_can_absorb, boxes, box_values: [bool], aspect}` where `aspect` is
 *    "No" (or another string) for stress-like tracks and `{name, when_marked, as_name}` for
 *    consequences;
 *  - `details.fatePoints {current, refresh, boosts}`.
 * @module adapters/fate-core-official
 */
import { characterId, characterName } from "../characters.mjs";
import { MODULE_ID } from "../protocol.mjs";
import { clampInt, compact, ownerIds, toAspectText, toIdentifier, toRating, toSkillName } from "./common.mjs";

export const SYSTEM_ID = "fate-core-official";

/** Stunt flags -> the bridge's action names. */
const STUNT_ACTIONS = Object.freeze({
  overcome: ["overcome"],
  caa: ["create_advantage", "take_advantage"],
  attack: ["attack"],
  defend: ["defend", "oppose"]
});

/** fate-core-official's character actor type; its other type, "Thing", is an item holder. */
export const CHARACTER_TYPE = "fate-core-official";

/**
 * Whether an actor is a character the bridge should know: FCO's "Thing" actors (containers and
 * objects, system.json `documentTypes.Actor`) have no skills or aspects and are never synced.
 * @param {Actor} actor
 */
export function isCharacter(actor) {
  return actor?.type !== "Thing";
}

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

/** A track is a consequence when its aspect is an object marked `when_marked` or `as_name`. */
export function isConsequenceTrack(track) {
  const aspect = track?.aspect;
  return Boolean(aspect && typeof aspect === "object" && (aspect.when_marked || aspect.as_name))
    && Number(track.harm_can_absorb) > 0;
}

/** Stress-like tracks: enabled, boxes, no aspect. */
function isStressTrack(track) {
  return track?.enabled !== false && !isConsequenceTrack(track) && Number(track?.boxes) > 0
    && !(track?.aspect && typeof track.aspect === "object");
}

/**
 * Consequence tracks, in the sheet's order, with their wire ids.
 * @param {Actor} actor
 * @returns {{key: string, id: string, track: object}[]}
 */
export function consequenceTracks(actor) {
  return Object.entries(actor.system?.tracks ?? {})
    .filter(([, t]) => t?.enabled !== false && isConsequenceTrack(t))
    .map(([key, track]) => ({ key, id: toIdentifier(key), track }));
}

/**
 * Stress tracks in the sheet's order; their boxes, concatenated, are the bridge's stress list.
 * @param {Actor} actor
 * @returns {{key: string, track: object}[]}
 */
export function stressTracks(actor) {
  return Object.entries(actor.system?.tracks ?? {})
    .filter(([, t]) => isStressTrack(t))
    .map(([key, track]) => ({ key, track }));
}

function stunts(actor) {
  const out = [];
  for (const [key, stunt] of Object.entries(actor.system?.stunts ?? {})) {
    const name = toSkillName(stunt?.name || key);
    const skill = toSkillName(stunt?.linked_skill);
    const bonus = clampInt(stunt?.bonus, 0, 6);
    if (!name || !skill || skill === "None" || !bonus) continue;
    const actions = [...new Set(Object.entries(STUNT_ACTIONS).filter(([flag]) => stunt[flag]).flatMap(([, a]) => a))];
    if (actions.length === 0) continue; // a stunt with no action flag gives no roll bonus
    out.push({ name, skill, bonus, actions });
  }
  return out.slice(0, 60);
}

function aspects(actor) {
  const out = [];
  for (const [key, aspect] of Object.entries(actor.system?.aspects ?? {})) {
    const name = toAspectText(aspect?.value);
    if (name) out.push({ key: toIdentifier(key), name });
  }
  return out.slice(0, 40);
}

/**
 * @param {Actor} actor
 * @returns {import("../protocol.mjs").ActorData}
 */
export function toActorData(actor) {
  const fp = actor.system?.details?.fatePoints ?? {};
  const stress = stressTracks(actor).flatMap(({ track }) => boxValues(track)).slice(0, 20);
  return compact({
    id: characterId(actor),
    name: characterName(actor),
    owners: ownerIds(actor),
    skills: skills(actor),
    stunts: stunts(actor),
    aspects: aspects(actor),
    fate_points: clampInt(fp.current, 0, 99),
    refresh: clampInt(fp.refresh, 0, 20),
    consequences: consequenceTracks(actor).slice(0, 12).map(({ id, track }) => ({
      id,
      severity: clampInt(track.harm_can_absorb, 1, 12),
      name: toAspectText(track.aspect?.name)
    })).map(compact),
    stress
  });
}

function boxValues(track) {
  const n = Math.max(0, Math.trunc(Number(track.boxes) || 0));
  return Array.from({ length: n }, (_, i) => Boolean(track.box_values?.[i]));
}

/**
 * The update that writes an `actor.patch` into the actor's system data: fate points, consequence
 * names and marks, stress boxes; what the sheet has no place for goes to module flags.
 * @param {Actor} actor
 * @param {import("../protocol.mjs").ActorPatch} patch
 * @returns {object}
 */
export function patchUpdate(actor, patch) {
  const update = {
    "system.details.fatePoints.current": patch.fate_points,
    [`flags.${MODULE_ID}.pendingFatePoints`]: patch.pending_fate_points,
    [`flags.${MODULE_ID}.overwhelmed`]: patch.overwhelmed,
    [`flags.${MODULE_ID}.consequences`]: patch.consequences
  };
  const slots = new Map(patch.consequences.map((s) => [s.id, s]));
  for (const { key, id, track } of consequenceTracks(actor)) {
    const slot = slots.get(id);
    if (!slot) continue;
    const filled = Boolean(slot.name);
    update[`system.tracks.${key}.aspect.name`] = slot.name ?? "";
    update[`system.tracks.${key}.box_values`] = boxValues(track).map(() => filled);
  }
  let offset = 0;
  for (const { key, track } of stressTracks(actor)) {
    const n = boxValues(track).length;
    if (offset >= patch.stress.length) break;
    update[`system.tracks.${key}.box_values`] = Array.from({ length: n }, (_, i) => Boolean(patch.stress[offset + i]));
    offset += n;
  }
  return update;
}

/**
 * Whether an actor update touched something the bridge knows about.
 * @param {object} changed  the diff passed to `updateActor`
 */
export function isRelevantChange(changed) {
  const s = changed.system ?? {};
  const flat = Object.keys(changed).some((k) => /^system\.(skills|aspects|stunts|tracks|details\.fatePoints)/.test(k));
  return "name" in changed || "ownership" in changed || flat
    || Boolean(s.skills || s.aspects || s.stunts || s.tracks || s.details?.fatePoints);
}
