/**
 * Adapter for fate-core-official (4.7.x data, read from its data models): `system.skills`,
 * `system.aspects`, `system.stunts` and `system.tracks` are objects keyed by id/name;
 *  - skill `{name, rank}`;
 *  - aspect `{name: "High Concept", value: "the aspect's text"}`;
 *  - stunt `{name, linked_skill ("None" when unlinked), bonus, overcome, caa, attack, defend}`;
 *  - track `{name, category, enabled, label, harm_can_absorb, boxes, box_values: [bool],
 *    linked_skills, aspect}` where `aspect` is "No" (or another string) for stress-like tracks and
 *    `{name, when_marked, as_name}` for consequences; a stress track's kind comes from its
 *    category, linked skills and name (`trackKind`), each box's value from `label` and
 *    `harm_can_absorb` (`boxValues`);
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
  const ticked = boxMarks(track).some(Boolean);
  if (trackAspectMode(track) === "as_name") return ticked ? toAspectText(track.name) : null;
  const named = toAspectText(track.aspect?.name);
  if (named) return named;
  return ticked ? unnamedConsequence(track) : null;
}

/**
 * Stress-like tracks: enabled, with boxes (FCO's sheet draws one per `box_values` entry, which it
 * grows past `boxes` for linked skills), and no aspect.
 */
function isStressTrack(track) {
  return track?.enabled !== false && !isConsequenceTrack(track) && boxCount(track) > 0
    && !(track?.aspect && typeof track.aspect === "object");
}

/** How many boxes FCO shows for a track: its `box_values` (or, before FCO filled them, `boxes`). */
function boxCount(track) {
  if (Array.isArray(track?.box_values)) return track.box_values.length;
  return Math.max(0, Math.trunc(Number(track?.boxes) || 0));
}

/**
 * What each box of a track absorbs, as FCO's sheet labels it: `label: "escalating"` numbers the
 * boxes 1, 2, 3...; otherwise each box is worth `harm_can_absorb` (Condensed and DFA: 1), or a
 * one-digit label, or 1.
 * @param {object} track
 * @returns {number[]}
 */
export function boxValues(track) {
  const n = Math.min(boxCount(track), 20);
  const harm = Math.trunc(Number(track?.harm_can_absorb) || 0);
  const digit = /^[1-9]$/.test(String(track?.label ?? "")) ? Number(track.label) : 1;
  return Array.from({ length: n }, (_, i) => Math.min(12, track?.label === "escalating" ? i + 1 : harm > 0 ? harm : digit));
}

/**
 * FCO's track categories are "Combat" and "Other" by default (its Portuguese defaults say
 * "Combate"; German "Sonstige", Portuguese "Outro"); a Dresden Files world adds one per mantle.
 * Only Combat tracks are stress; every other category is kind "other", never touched by the bridge.
 */
const COMBAT_CATEGORIES = Object.freeze(["combat", "combate"]);
// FCO ties Physical Stress to Physique and Mental Stress to Will (linked_skills), and names them
// so; these are the names its own language files give those skills and tracks.
const PHYSICAL = Object.freeze({ skills: ["physique", "físico", "vigor"], words: /\b(physical|physisch\w*|físic\w*)/iu });
const MENTAL = Object.freeze({ skills: ["will", "voluntad", "vontade"], words: /\b(mental\w*|psychisch\w*)/iu });

/**
 * A stress track's kind, from FCO's own data: the category first (only Combat tracks are stress),
 * then the skills that add its boxes, then its name; a Combat track that names neither (Fate
 * Accelerated's and DFA's single "Stress") takes every kind of hit.
 * @param {object} track
 * @returns {"physical"|"mental"|"any"|"other"}
 */
export function trackKind(track) {
  if (!COMBAT_CATEGORIES.includes(String(track?.category ?? "Combat").trim().toLowerCase())) return "other";
  const linked = (Array.isArray(track?.linked_skills) ? track.linked_skills : []).map((l) => String(l?.linked_skill ?? "").trim().toLowerCase());
  if (linked.some((s) => PHYSICAL.skills.includes(s))) return "physical";
  if (linked.some((s) => MENTAL.skills.includes(s))) return "mental";
  const name = String(track?.name ?? "");
  if (PHYSICAL.words.test(name)) return "physical";
  if (MENTAL.words.test(name)) return "mental";
  return "any";
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
 * Stress tracks in the sheet's order, each with its wire id, kind and box values.
 * @param {Actor} actor
 * @returns {{key: string, id: string, track: object, kind: string, values: number[]}[]}
 */
export function stressTracks(actor) {
  return Object.entries(actor.system?.tracks ?? {})
    .filter(([, t]) => isStressTrack(t))
    .map(([key, track]) => ({ key, id: toIdentifier(key), track, kind: trackKind(track), values: boxValues(track) }))
    .slice(0, 12);
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
  const stress = stressTracks(actor).map(({ id, track, kind, values }) => ({
    id,
    name: toSkillName(track.name) ?? id,
    kind,
    boxes: values.map((value, i) => ({ value, marked: Boolean(track.box_values?.[i]) }))
  }));
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

function boxMarks(track) {
  return Array.from({ length: boxCount(track) }, (_, i) => Boolean(track.box_values?.[i]));
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
    // A consequence without boxes (FCO's defaults) gets none written.
    if (boxCount(track) > 0) update[`system.tracks.${key}.box_values`] = boxMarks(track).map(() => filled);
    // An "as_name" track's name is its aspect (and its key): only its boxes say it is taken;
    // the bridge's text stays in the module's flags.
    if (trackAspectMode(track) === "as_name") continue;
    const name = slot.name && slot.name !== unnamedConsequence(track) ? slot.name : "";
    if (track.aspect && typeof track.aspect === "object") update[`system.tracks.${key}.aspect.name`] = name;
    else update[`system.tracks.${key}.aspect`] = { name, when_marked: true, as_name: false };
  }
  // Only the tracks the bridge marks, and only when their marks changed: a patch never ticks
  // another track's boxes, nor any track of kind "other".
  const patched = new Map((patch.stress ?? []).map((t) => [t.id, t]));
  for (const { key, id, track, kind } of stressTracks(actor)) {
    const from = patched.get(id);
    if (!from || kind === "other" || from.kind === "other") continue;
    const marks = boxMarks(track);
    const next = marks.map((was, i) => (i < from.boxes.length ? Boolean(from.boxes[i].marked) : was));
    if (next.some((m, i) => m !== marks[i])) update[`system.tracks.${key}.box_values`] = next;
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
