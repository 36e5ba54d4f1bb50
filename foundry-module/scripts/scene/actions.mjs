/**
 * Intents on the scene and its procedures (R11, R12): the scene panel's buttons and the macro API
 * both call these, with this client's Bridge first. Intents answered with the SceneState
 * refresh every view at once (the bridge's `scene.state` emit follows and changes nothing
 * more). The GM's client first sends the actors a procedure involves, so NPCs are known to the
 * bridge.
 * @module scene-actions
 */
import { syncInvolved } from "../actions/start.mjs";

const trimmed = (s) => String(s ?? "").trim();

/** Situation aspects (R12.1): add one, with free invokes for someone if given. */
export function addAspect(bridge, name, freeInvokes = {}) {
  const payload = { op: "add", name: trimmed(name) };
  const free = Object.fromEntries(Object.entries(freeInvokes).filter(([, n]) => n > 0));
  if (Object.keys(free).length) payload.free_invokes = free;
  return bridge.sendScene("scene.aspect", payload);
}

/** Rename an aspect and/or set who holds its free invokes. */
export function editAspect(bridge, aspectId, { name, freeInvokes } = {}) {
  const payload = { op: "edit", aspect_id: aspectId };
  if (trimmed(name)) payload.name = trimmed(name);
  if (freeInvokes) payload.free_invokes = freeInvokes;
  return bridge.sendScene("scene.aspect", payload);
}

export function removeAspect(bridge, aspectId) {
  return bridge.sendScene("scene.aspect", { op: "remove", aspect_id: aspectId });
}

/**
 * R10.2: hand free invokes on an aspect from one character to another. The answer is the
 * aspect's new holders; the scene panel follows the bridge's `scene.state` emit.
 * @param {{aspect_id: string, from_id: string, to_id: string, count?: number}} give
 */
export async function giveInvokes(bridge, { aspect_id, from_id, to_id, count = 1 }) {
  if (!(await syncInvolved(bridge, [to_id]))) return null;
  return bridge.send("aspect.give", { aspect_id, from_id, to_id, count: Number(count) || 1 });
}

/** R12.2: the GM's fate point budget for this scene. */
export function setGmBudget(bridge, points) {
  return bridge.send("fate.gm_budget", { fate_points: Number(points) });
}

/** GM: offer a compel to a character (optionally on an aspect). */
export async function offerCompel(bridge, characterId, text, aspectId = null) {
  if (!(await syncInvolved(bridge, [characterId]))) return null;
  const payload = { character_id: characterId, text: trimmed(text) };
  if (aspectId) payload.aspect_id = aspectId;
  return bridge.sendScene("fate.compel", payload);
}

/** The character's owner accepts (gains a fate point) or refuses (pays one). */
export function answerCompel(bridge, compelId, accept) {
  return bridge.sendScene("fate.compel_answer", { compel_id: compelId, accept: Boolean(accept) });
}

/**
 * End the scene, session or scenario; resolves to the SceneEndData. The scene-end card follows.
 * @param {"scene"|"session"|"scenario"} scope
 * @param {string[]} keepAspects  situation aspect ids that stay
 */
export function endScene(bridge, scope = "scene", keepAspects = []) {
  return bridge.send("scene.end", { scope, keep_aspects: keepAspects });
}

/**
 * GM: a contest (R11.2).
 * @param {{name: string, mode: "direct"|"environment", skill: string, sides: {name: string, members: string[]}[], passiveRating?: number}} spec
 */
export async function startContest(bridge, { name, mode, skill, sides, passiveRating }) {
  if (!(await syncInvolved(bridge, sides.flatMap((s) => s.members)))) return null;
  const payload = { name: trimmed(name), mode, skill, sides: sides.map((s) => ({ name: trimmed(s.name), members: s.members })) };
  if (mode === "environment") payload.passive_rating = Number(passiveRating);
  return bridge.sendScene("contest.start", payload);
}

/** A side's contest roll: the normal action card follows (invoke, pass). */
export function contestRoll(bridge, contestId, sideId, skill = null) {
  const payload = { contest_id: contestId, side_id: sideId };
  if (skill) payload.skill = skill;
  return bridge.send("contest.roll", payload);
}

/**
 * Before its roll, a side tries to create an advantage; a fumble forfeits its roll.
 * @param {string} contestId
 * @param {string} sideId
 * @param {{actorId: string, skill: string, aspectName: string, opposition?: number, opposerId?: string, targetId?: string}} request
 */
export async function contestAdvantage(bridge, contestId, sideId, { actorId, skill, aspectName, opposition, opposerId, targetId }) {
  if (!(await syncInvolved(bridge, [actorId, opposerId, targetId]))) return null;
  const payload = {
    contest_id: contestId, side_id: sideId, actor_id: actorId, skill, aspect_name: trimmed(aspectName),
    opposition: opposerId ? { kind: "active", opposer_id: opposerId } : { kind: "passive", rating: Number(opposition ?? 0) }
  };
  if (targetId) payload.target_id = targetId;
  return bridge.send("contest.advantage", payload);
}

/** GM: name the twist after a tie at the top; the bridge places it on the scene. */
export function nameTwist(bridge, contestId, name) {
  return bridge.sendScene("contest.twist", { contest_id: contestId, name: trimmed(name) });
}

export function concedeContest(bridge, contestId, sideId) {
  return bridge.sendScene("contest.concede", { contest_id: contestId, side_id: sideId });
}

/**
 * GM: a challenge (R11.1).
 * @param {{name: string, tasks: {name: string, skill: string, rating: number}[]}} spec
 */
export function startChallenge(bridge, { name, tasks }) {
  return bridge.sendScene("challenge.start", { name: trimmed(name), tasks: tasks.map((t) => ({ name: trimmed(t.name), skill: t.skill, rating: Number(t.rating) })) });
}

/** Roll a task for an actor: the normal action card follows. */
export async function challengeRoll(bridge, challengeId, taskId, actorId, { skill, helpers } = {}) {
  if (!(await syncInvolved(bridge, [actorId, ...(helpers ?? []).map((h) => h.character_id)]))) return null;
  const payload = { challenge_id: challengeId, task_id: taskId, actor_id: actorId };
  if (skill) payload.skill = skill;
  if (helpers?.length) payload.helpers = helpers;
  return bridge.send("challenge.roll", payload);
}

/** An advantage inside a challenge: completes no task. */
export async function challengeAdvantage(bridge, challengeId, { actorId, skill, aspectName, rating }) {
  if (!(await syncInvolved(bridge, [actorId]))) return null;
  return bridge.send("challenge.advantage", { challenge_id: challengeId, actor_id: actorId, skill, aspect_name: trimmed(aspectName), rating: Number(rating) });
}

/** GM: R2.1 Decision: whether players' passive ratings go through without confirmation. */
export function trustPlayerRatings(bridge, trust) {
  return bridge.sendScene("world.settings", { trust_player_ratings: Boolean(trust) });
}

/** R13.7: turn Fate Condensed's optional full defense on or off for the world (GM). */
export function fullDefenseOption(bridge, on) {
  return bridge.sendScene("world.settings", { full_defense: Boolean(on) });
}

/** GM: keep the challenge's unused boosts for the next scene. */
export function carryBoosts(bridge, challengeId, carry) {
  return bridge.sendScene("challenge.carry", { challenge_id: challengeId, carry: Boolean(carry) });
}

/**
 * GM: a conflict (R11.3, R13.5); the bridge decides the turn order, or under elective order
 * (Fate Condensed) starts with `firstId` (default: the first member of the first side).
 * @param {{name: string, kind: "physical"|"mental", sides: {name: string, members: string[]}[], zones?: {name: string, adjacent: string[]}[], positions?: Record<string, string>, groupNpcs?: boolean, tieBreak?: string[], firstId?: string}} spec
 */
export async function startConflict(bridge, { name, kind, sides, zones = [], positions = {}, groupNpcs = false, tieBreak = [], firstId = null }) {
  if (!(await syncInvolved(bridge, sides.flatMap((s) => s.members)))) return null;
  const payload = {
    name: trimmed(name), kind, sides: sides.map((s) => ({ name: trimmed(s.name), members: s.members })),
    zones, positions, group_npcs: Boolean(groupNpcs), tie_break: tieBreak
  };
  if (firstId) payload.first_id = firstId;
  return bridge.sendScene("conflict.start", payload);
}

/** GM breaks ties: the whole order, only tied characters moved. */
export function conflictOrder(bridge, conflictId, order) {
  return bridge.sendScene("conflict.order", { conflict_id: conflictId, order });
}

/**
 * Hand the turn on: ranked order to the next in line; elective order (R13.5) to `nextId`.
 * @param {string} conflictId
 * @param {string|null} [nextId]
 */
export function conflictNext(bridge, conflictId, nextId = null) {
  const payload = { conflict_id: conflictId };
  if (nextId) payload.next_id = nextId;
  return bridge.sendScene("conflict.next", payload);
}

/** R13.7: on its turn, instead of acting, the character takes +2 on every defend roll until its next turn. */
export function conflictFullDefense(bridge, conflictId, characterId) {
  return bridge.sendScene("conflict.full_defense", { conflict_id: conflictId, character_id: characterId });
}

/** R13.6: the character concedes: out now, paid 1 + its consequences when the conflict ends. */
export function conflictConcede(bridge, conflictId, characterId) {
  return bridge.sendScene("conflict.concede", { conflict_id: conflictId, character_id: characterId });
}

export function conflictMove(bridge, conflictId, characterId, zone, force = false) {
  const payload = { conflict_id: conflictId, character_id: characterId, zone };
  if (force) payload.force = true;
  return bridge.sendScene("conflict.move", payload);
}

/**
 * GM (R11.3): redraw an open conflict's zones mid-conflict: the new map replaces the old one
 * whole. Whoever stands in a zone the new map drops must be placed anew in `positions`; the
 * others keep their zone. No zones: a conflict without a map (every position cleared).
 * @param {string} conflictId
 * @param {{name: string, adjacent?: string[]}[]} zones
 * @param {Record<string, string>} [positions] character id -> zone name
 */
export function conflictZones(bridge, conflictId, zones, positions = {}) {
  return bridge.sendScene("conflict.zones", { conflict_id: conflictId, zones, positions });
}

export function conflictEnd(bridge, conflictId) {
  return bridge.sendScene("conflict.end", { conflict_id: conflictId });
}
