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
 *  - `details.fatePoints {current, refresh, boosts}` (boosts: a counter that Fate Utilities and
 *    the sheet edit too; the bridge adds the boosts it says the character holds to the ones given
 *    in FCO, and never reads the counter: the bridge's boosts are named aspects);
 *  - keys: FCO keys every block by `tob64(name)` (base64 of the name, no "=") and re-keys the
 *    blocks of every actor to that at each world load (`rationaliseKeys`) and at creation; a
 *    character default applied to an actor brings name keys until then. Wire ids are therefore
 *    derived from the name's tob64, not the key, and a track the bridge wrote into keeps its id
 *    in the track itself (`fate_bridge_id`), so a renamed track (FCO's track editor writes a copy
 *    of it under the new name's key) is still the same slot;
 *  - skills with `hidden` are not on the sheet and not offered; actors of type "Thing" are not
 *    characters.
 * @module adapters/fate-core-official
 */
import { characterId, characterName } from "../foundry/characters.mjs";
import { MODULE_ID } from "../protocol.mjs";
import { canonicalSkill } from "./fco-frameworks.mjs";
import { clampInt, compact, ownerIds, toAspectText, toIdentifier, toRating, toSkillName } from "./common.mjs";

export const SYSTEM_ID = "fate-core-official";

/** Stunt flags -> the bridge's action names. */
const STUNT_ACTIONS = Object.freeze({
  overcome: ["overcome"],
  caa: ["create_advantage", "take_advantage"],
  attack: ["attack"],
  defend: ["defend", "oppose"]
});

/** Where a track keeps the wire id the bridge knows it by, once the bridge has written into it. */
const TRACK_ID_FIELD = "fate_bridge_id";

/**
 * FCO's key for a name (its fcoConstants.tob64): the name's UTF-8 bytes in base64, without "=".
 * @param {string} name
 */
function fcoKey(name) {
  const bytes = new TextEncoder().encode(String(name));
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return globalThis.btoa(binary).replace(/=/g, "");
}

/**
 * Wire ids for keyed entries that survive FCO's re-keying: an id the entry carries (a track the
 * bridge wrote into), else the id of the key FCO gives its name (the key itself after
 * FCO's `rationaliseKeys`), else the key. An id two entries would share falls back to the key.
 * @param {[string, object][]} entries
 * @returns {Map<string, string>} key -> id
 */
function stableIds(entries) {
  const ids = new Map();
  const used = new Set();
  for (const [key, entry] of entries) {
    const pinned = typeof entry?.[TRACK_ID_FIELD] === "string" && entry[TRACK_ID_FIELD] ? entry[TRACK_ID_FIELD] : null;
    const named = typeof entry?.name === "string" && entry.name !== "" ? toIdentifier(fcoKey(entry.name)) : null;
    let id = pinned ?? named ?? toIdentifier(key);
    if (used.has(id)) id = toIdentifier(key);
    used.add(id);
    ids.set(key, id);
  }
  return ids;
}

/**
 * Whether an actor is a character the bridge should know: FCO's "Thing" actors (containers and
 * objects, system.json `documentTypes.Actor`) have no skills or aspects and are never synced.
 * @param {Actor} actor
 */
export function isCharacter(actor) {
  return actor?.type !== "Thing";
}

/**
 * The actor's skills, name -> rating. An approach is named as the bridge knows it (R13.1): FCO
 * names a Fate Accelerated character's approaches in the world's language ("Sorgfältig").
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
    const name = sheetSkill(skill?.name || key);
    const rating = toRating(skill?.rank);
    if (name !== null && rating !== null) out[name] = rating;
  }
  return out;
}

/**
 * A skill name from FCO's data as the bridge knows it (an approach by its canonical name).
 * @param {unknown} name
 * @returns {string|null}
 */
export function sheetSkill(name) {
  const skill = toSkillName(name);
  return skill === null ? null : canonicalSkill(skill);
}

/**
 * How a track names its aspect. FCO (FateCoreOfficialModels.js `trackAspectField`, fcoActor.js
 * when a character is set up) stores an object `{name, when_marked, as_name}` on actors, and
 * accepts the strings "when_marked" / "Defined when marked" and "as_name" / "Aspect as Name" /
 * "Name As Aspect" (and "No") in definitions.
 * @returns {"when_marked"|"as_name"|null}
 */
function trackAspectMode(track) {
  const aspect = track?.aspect;
  if (aspect && typeof aspect === "object") return aspect.as_name ? "as_name" : aspect.when_marked ? "when_marked" : null;
  const text = String(aspect ?? "").trim().toLowerCase();
  if (["when_marked", "defined when marked"].includes(text)) return "when_marked";
  if (["as_name", "aspect as name", "name as aspect"].includes(text)) return "as_name";
  return null;
}

/** A track is a consequence when it absorbs harm and names an aspect (when marked, or its name). */
function isConsequenceTrack(track) {
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
function consequenceName(track) {
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
function boxValues(track) {
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
 * R13.3: the kind of harm a consequence slot alone takes: FCO's Core and Condensed extra mild
 * slots are enabled by Physique (or Will) at Superb and named "Physical"/"Mental"; every other
 * consequence takes any harm (undefined, left out of the wire).
 * @param {object} track
 * @returns {"physical"|"mental"|undefined}
 */
export function consequenceHarm(track) {
  const kind = trackKind(track);
  return kind === "physical" || kind === "mental" ? kind : undefined;
}

/**
 * Consequence tracks, in the sheet's order, with their wire ids.
 * @param {Actor} actor
 * @returns {{key: string, id: string, track: object}[]}
 */
export function consequenceTracks(actor) {
  const entries = Object.entries(actor.system?.tracks ?? {}).filter(([, t]) => t?.enabled !== false && isConsequenceTrack(t));
  const ids = stableIds(entries);
  return entries.map(([key, track]) => ({ key, id: ids.get(key), track }));
}

/**
 * Stress tracks in the sheet's order, each with its wire id, kind and box values.
 * @param {Actor} actor
 * @returns {{key: string, id: string, track: object, kind: string, values: number[]}[]}
 */
export function stressTracks(actor) {
  const entries = Object.entries(actor.system?.tracks ?? {}).filter(([, t]) => isStressTrack(t));
  const ids = stableIds(entries);
  return entries
    .map(([key, track]) => ({ key, id: ids.get(key), track, kind: trackKind(track), values: boxValues(track) }))
    .slice(0, 12);
}

function stunts(actor) {
  const out = [];
  for (const [key, stunt] of Object.entries(actor.system?.stunts ?? {})) {
    const name = toSkillName(stunt?.name || key);
    const skill = sheetSkill(stunt?.linked_skill);
    const bonus = clampInt(stunt?.bonus, 0, 6);
    if (!name || !skill || skill === "None" || !bonus) continue;
    const actions = [...new Set(Object.entries(STUNT_ACTIONS).filter(([flag]) => stunt[flag]).flatMap(([, a]) => a))];
    if (actions.length === 0) continue; // a stunt with no action flag gives no roll bonus
    out.push({ name, skill, bonus, actions });
  }
  return out.slice(0, 60);
}

function aspects(actor) {
  const entries = Object.entries(actor.system?.aspects ?? {});
  const ids = stableIds(entries);
  const out = [];
  for (const [key, aspect] of entries) {
    const name = toAspectText(aspect?.value);
    if (name) out.push({ key: ids.get(key), name });
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
      name: consequenceName(track),
      harm: consequenceHarm(track)
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
  // FCO's boost counter: the boosts given in FCO (Fate Utilities, the sheet) stay; the bridge's
  // own count replaces the one it wrote last.
  if (Number.isInteger(patch.boosts)) {
    update["system.details.fatePoints.boosts"] = fcoOwnBoosts(actor) + patch.boosts;
    update[`flags.${MODULE_ID}.boosts`] = patch.boosts;
  }
  const slots = new Map(patch.consequences.map((s) => [s.id, s]));
  for (const { key, id, track } of consequenceTracks(actor)) {
    pinTrackId(update, key, id, track);
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
    pinTrackId(update, key, id, track);
    const from = patched.get(id);
    if (!from || kind === "other" || from.kind === "other") continue;
    const marks = boxMarks(track);
    const next = marks.map((was, i) => (i < from.boxes.length ? Boolean(from.boxes[i].marked) : was));
    if (next.some((m, i) => m !== marks[i])) update[`system.tracks.${key}.box_values`] = next;
  }
  return update;
}

/**
 * A track the bridge knows keeps its wire id from now on: FCO moves the whole track object when
 * it re-keys or renames it (EditEntityTrack saves a copy), so the id goes along.
 */
function pinTrackId(update, key, id, track) {
  if (track?.[TRACK_ID_FIELD] !== id) update[`system.tracks.${key}.${TRACK_ID_FIELD}`] = id;
}

/**
 * The boosts given in FCO itself: the counter less what the bridge wrote last. An actor the
 * bridge wrote before it kept that count (patchSeq, no count) had a counter that was the bridge's.
 * @param {Actor} actor
 */
function fcoOwnBoosts(actor) {
  const counter = Math.max(0, Math.trunc(Number(actor.system?.details?.fatePoints?.boosts) || 0));
  const flags = actor.flags?.[MODULE_ID] ?? {};
  const bridge = Number.isInteger(flags.boosts) ? flags.boosts : Number.isInteger(flags.patchSeq) ? counter : 0;
  return Math.max(0, counter - bridge);
}

/**
 * Whether an actor update touched something the bridge knows about. FCO's boost counter alone is
 * not: the bridge never reads it.
 * @param {object} changed  the diff passed to `updateActor`
 */
export function isRelevantChange(changed) {
  const s = changed.system ?? {};
  const flat = Object.keys(changed).some((k) => /^(name|ownership)(\.|$)|^system\.(skills|aspects|stunts|tracks)(\.|$)/.test(k)
    || (/^system\.details\.fatePoints(\.|$)/.test(k) && !/\.boosts$/.test(k)));
  const fatePoints = s.details?.fatePoints;
  const points = fatePoints && typeof fatePoints === "object" && Object.keys(fatePoints).some((k) => k !== "boosts");
  return "name" in changed || "ownership" in changed || flat
    || Boolean(s.skills || s.aspects || s.stunts || s.tracks || points);
}

/**
 * FCO's writes that are halfway: its editors empty a block (`system.tracks: null`, or a
 * replacement by `{}` marked with its own `noHook` option) and write it back in the next update;
 * the actor is not in the state the sheet means until then.
 * @param {object} changed
 * @param {object} [options]
 */
export function isTransientChange(changed, options) {
  if (options?.noHook) return true;
  const blocks = ["skills", "aspects", "stunts", "tracks"];
  return blocks.some((b) => changed?.system?.[b] === null || changed?.[`system.${b}`] === null);
}

/**
 * The fields FCO's sheet form re-submits whole on every change and on close that the bridge
 * writes: fate points and the names of consequences named when marked. A stale sheet sends the
 * values it was rendered with (stale-guard.mjs).
 * @param {Actor} actor
 * @returns {{id: string, path: string}[]}
 */
export function guardedFields(actor) {
  const out = [{ id: "fate_points", path: "system.details.fatePoints.current" }];
  for (const { key, id, track } of consequenceTracks(actor)) {
    if (trackAspectMode(track) === "as_name" || !track.aspect || typeof track.aspect !== "object") continue;
    out.push({ id: `consequence:${id}`, path: `system.tracks.${key}.aspect.name` });
  }
  return out;
}

/** A stunt's action flags in the order its roll button picks an action to start. */
const STUNT_START = Object.freeze([["overcome", "overcome"], ["caa", "create_advantage"], ["attack", "attack"]]);

/**
 * What FCO's roll button of a stunt (the sheet's, or Fate Utilities' "Stunt:" roll) becomes on
 * the bridge: the stunt's linked skill, the first of its actions the ruleset lets a character
 * start (overcome, create an advantage, attack), and the stunt itself. Null when the bridge cannot
 * roll it: a "Special" or missing skill (FCO asks for one), no startable action (defend-only: a
 * defense is rolled against someone's action), or no stunt of that name.
 * @param {Actor} actor
 * @param {string} name
 * @param {string[]} startable  action ids the ruleset offers
 * @returns {{skill: string, type: string, stunt: string}|null}
 */
export function stuntRoll(actor, name, startable) {
  const stunt = Object.values(actor.system?.stunts ?? {}).find((s) => s?.name === name);
  if (!stunt) return null;
  const skill = sheetSkill(stunt.linked_skill);
  if (!skill || !(skill in skills(actor))) return null;
  const type = STUNT_START.find(([flag, action]) => stunt[flag] && startable.includes(action))?.[1];
  return type ? { skill, type, stunt: stunt.name } : null;
}

/**
 * The stunt a roll button names: FCO's `data-linkedskill` (sheet) and Fate Utilities' option
 * value ("stunt_" first) are "<name>_<linked skill>_<bonus>"; names may hold "_", so the whole
 * string is matched against each stunt.
 * @param {Actor} actor
 * @param {string} text
 * @returns {string|null} the stunt's name
 */
export function stuntNamed(actor, text) {
  const wanted = String(text ?? "");
  return Object.values(actor.system?.stunts ?? {}).find((s) => `${s?.name}_${s?.linked_skill}_${s?.bonus}` === wanted)?.name ?? null;
}
