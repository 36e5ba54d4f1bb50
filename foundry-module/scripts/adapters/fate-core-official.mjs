/**
 * Adapter for fate-core-official (4.7.x data, read from its data models): `system.skills`,
 * `system.aspects`, `system.stunts` and `system.tracks` are objects keyed by id/name;
 *  - skill `{name, rank}`;
 *  - aspect `{name: "High Concept", value: "the aspect's text"}`;
 *  - stunt `{name, linked_skill ("None" when unlinked), bonus, overcome, caa, attack, defend}`;
 *  - track `{name, enabled, harm_can_absorb, boxes, box_values: [bool], aspect}` where `aspect` is
 *    "No" (or another string) for stress-like tracks and `{name, when_marked, as_name}` for
 *    consequences;
 *  - `details.fatePoints {current, refresh, boosts}` (boosts: a counter the bridge keeps showing
 *    the boosts the character holds; the bridge's boosts are named aspects, so the counter is
 *    not read);
 *  - skills with `hidden` are not on the sheet and not offered; actors of type "Thing" are not
 *    characters.
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
    // A hidden skill is not on FCO's sheet (templates/fate-core-officialSheet.html skips it):
    // the bridge does not offer it either.
    if (skill?.hidden) continue;
    const name = toSkillName(skill?.name || key);
    const rating = toRating(skill?.rank);
    if (name !== null && rating !== null) out[name] = rating;
  }
  return out;
}

/**
 * How a track names its aspect. FCO (FateCoreOfficialModels.js `trackAspectField`, fcoActor.js
 * when a character is set up) stores an object `{name, when_marked, as_name}` on actors, and
 * accepts the strings "when_marked" / "Defined when marked" and "as_name" / "Aspect as Name" /
 * "Name As Aspect" (and "No") in definitions.
 * @returns {"when_marked"|"as_name"|null}
 */
export function trackAspectMode(track) {
  const aspect = track?.aspect;
  if (aspect && typeof aspect === "object") return aspect.as_name ? "as_name" : aspect.when_marked ? "when_marked" : null;
  const text = String(aspect ?? "").trim().toLowerCase();
  if (["when_marked", "defined when marked"].includes(text)) return "when_marked";
  if (["as_name", "aspect as name", "name as aspect"].includes(text)) return "as_name";
  return null;
}

/** A track is a consequence when it absorbs harm and names an aspect (when marked, or its name). */
export function isConsequenceTrack(track) {
  return trackAspectMode(track) !== null && Number(track?.harm_can_absorb) > 0;
}

/** The name the bridge gets for a ticked consequence whose sheet gives it no name. */
function unnamedConsequence(track) {
  return toAspectText(game.i18n.format("FATEBRIDGE.Consequence.Unnamed", { track: track?.name ?? "" }));
}

/**
 * The consequence a track holds, as the bridge names it, or null when the slot is empty:
 *  - "as_name" tracks (the track's name is the aspect): filled while a box is ticked, named by
 *    the track's name;
 *  - "when_marked" tracks: named by `aspect.name`; a ticked box with no name still fills the
 *    slot (under a placeholder name that is never written back).
 * @param {object} track
 * @returns {string|null}
 */
export function consequenceName(track) {
  const ticked = boxValues(track).some(Boolean);
  if (trackAspectMode(track) === "as_name") return ticked ? toAspectText(track.name) : null;
  const named = toAspectText(track.aspect?.name);
  if (named) return named;
  return ticked ? unnamedConsequence(track) : null;
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
      name: consequenceName(track)
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
  // FCO's boost counter shows the boosts the bridge says the character holds.
  if (Number.isInteger(patch.boosts)) update["system.details.fatePoints.boosts"] = patch.boosts;
  const slots = new Map(patch.consequences.map((s) => [s.id, s]));
  for (const { key, id, track } of consequenceTracks(actor)) {
    const slot = slots.get(id);
    if (!slot) continue;
    const filled = Boolean(slot.name);
    update[`system.tracks.${key}.box_values`] = boxValues(track).map(() => filled);
    // An "as_name" track's name is its aspect (and its key): only its boxes say it is taken;
    // the bridge's text stays in the module's flags.
    if (trackAspectMode(track) === "as_name") continue;
    const name = slot.name && slot.name !== unnamedConsequence(track) ? slot.name : "";
    if (track.aspect && typeof track.aspect === "object") update[`system.tracks.${key}.aspect.name`] = name;
    else update[`system.tracks.${key}.aspect`] = { name, when_marked: true, as_name: false };
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
