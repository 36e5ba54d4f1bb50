/**
 * fate-core-official's Fate Utilities and the bridge showing the same numbers (issue 25). FCO
 * keeps, outside its actors:
 *  - the GM's fate points: each GM user's flag `fate-core-official.gmfatepoints` (Fate Utilities'
 *    `gmfp` field per GM; its invoke buttons take one off the rolling GM's own flag, written by
 *    that GM's client). The bridge has one GM budget per world (`scene.state` `gm_fate_points`,
 *    set with `fate.gm_budget`): every GM's flag shows it, and a change to any GM's flag moves
 *    it by the same difference (two GMs spending one each at once spend two; a spend lands once).
 *  - situation aspects: the scene being played's (`game.scenes.active`) flag `fate-core-official.situation_aspects`, an array
 *    of `{name, free_invokes}` (free invokes as a count anyone at the table may use, written as
 *    the field's string when edited; `linked: true` marks a line Fate Utilities copied from a
 *    track). The bridge's situation aspects (`kind: "situation"`) have ids and free invokes held
 *    by someone: FCO's count is their sum; a count set in Fate Utilities changes the GM's share
 *    (holder "gm"), the other holders keep theirs. A line the bridge knows carries the bridge's
 *    aspect id (`fate_bridge_id`).
 * Only the writing GM's client (the relay host, relay.mjs) writes: a `scene.state` writes FCO's stores (marked BRIDGE_WRITE,
 * and only what differs), and the GM's edits of them (not so marked) are sent with the existing
 * intents (`fate.gm_budget`, `scene.aspect`); the bridge's answer then writes nothing back.
 *
 * Fate Utilities' roll tab rolls a token's skill or stunt natively from a `select.skill_select`
 * (option "<name> (<rank>)", or "stunt_<name>_<skill>_<bonus>"); while the bridge can be
 * reached, the choice is the bridge's action instead (a stunt as on the sheet).
 * @module fco-utilities
 */
import { startAction } from "../actions/start.mjs";
import { SYSTEM_ID as FCO, sheetSkill, skills as fcoSkills, stuntNamed, stuntRoll } from "./fate-core-official.mjs";
import { clampInt, toAspectText } from "./common.mjs";
import { startableActions } from "../actions/roll-dialog.mjs";
import { addAspect, editAspect, removeAspect, setGmBudget } from "../scene/actions.mjs";
import { mayUpdate } from "../foundry/compat.mjs";
import { BRIDGE_WRITE } from "../foundry/world-writes.mjs";

const SCOPE = "fate-core-official";
const GM_POOL_FLAG = "gmfatepoints";
const SITUATION_FLAG = "situation_aspects";
/** The key a Fate Utilities line carries the bridge's aspect id under. */
const LINK_KEY = "fate_bridge_id";
/** The bridge's holder id for the GM's free invokes. */
const GM_HOLDER = "gm";

const inFco = () => game.system?.id === FCO;
const total = (aspect) => Object.values(aspect?.free_invokes ?? {}).reduce((n, v) => n + (Number(v) || 0), 0);
const situationAspects = (state) => (state?.aspects ?? []).filter((a) => a?.kind === "situation");

/** scene id -> the bridge ids of the Fate Utilities lines last seen or written there */
const linkedSeen = new Map();
const linkedIds = (list) => new Set(list.map((e) => e?.[LINK_KEY]).filter(Boolean));

// ---- the bridge -> FCO ----------------------------------------------------------------

/**
 * The scene writer (the writing GM's client, on every new `scene.state`): the GM budget into
 * every GM's pool, the situation aspects into the played scene's list.
 * @param {object} state  SceneState
 */
export async function writeFcoStores(state) {
  if (!inFco() || !state) return;
  await writeGmPools(state.gm_fate_points);
  await writeSituationAspects(state);
}

/** GM user id -> the pool this client last wrote or saw there (a change is measured from it). */
const poolSeen = new Map();
/** The budget this client asked for last, until the bridge's next scene state says it. */
let budgetAsked = null;

async function writeGmPools(points) {
  if (!Number.isInteger(points)) return;
  budgetAsked = null;
  for (const user of game.users?.filter?.((u) => u.isGM) ?? []) {
    poolSeen.set(user.id, points);
    if (user.getFlag?.(SCOPE, GM_POOL_FLAG) === points || !mayUpdate(user)) continue;
    // A GM may update other users (Foundry's rule): one budget, shown in every GM's pool; a
    // refused write leaves that pool as it was and the others still follow.
    try {
      await user.update({ [`flags.${SCOPE}.${GM_POOL_FLAG}`]: points }, { [BRIDGE_WRITE]: true });
    } catch (err) {
      console.warn(`fate-bridge | could not show the GM budget in ${user.name}'s pool`, err);
    }
  }
}

/**
 * Fate Utilities' list with the bridge's situation aspects: a line the bridge knows takes its
 * name and free invoke count, or goes when the bridge's aspect is gone; a line of Fate
 * Utilities' own that names a new bridge aspect becomes its line; other new aspects are added;
 * Fate Utilities' own lines (unnamed, copied from tracks, not sent yet) stay as they are.
 * @param {object[]} list  the scene's flag
 * @param {object[]} aspects  the bridge's aspects
 * @returns {object[]}
 */
function mergeSituationAspects(list, aspects) {
  const bridge = new Map(aspects.filter((a) => a?.kind === "situation").map((a) => [a.id, a]));
  const out = [];
  for (const entry of Array.isArray(list) ? list : []) {
    const id = entry?.[LINK_KEY];
    if (!id) out.push(entry);
    else if (bridge.has(id)) out.push({ ...entry, name: bridge.get(id).name, free_invokes: total(bridge.get(id)) });
  }
  const shown = linkedIds(out);
  for (const aspect of bridge.values()) {
    if (shown.has(aspect.id)) continue;
    const line = { name: aspect.name, free_invokes: total(aspect), [LINK_KEY]: aspect.id };
    const same = out.findIndex((e) => !e?.[LINK_KEY] && !e?.linked && toAspectText(e?.name) === aspect.name);
    if (same >= 0) out[same] = { ...out[same], ...line };
    else out.push(line);
  }
  return out;
}

async function writeSituationAspects(state) {
  // The scene being played, whichever one this GM is looking at.
  const scene = game.scenes?.active;
  if (!scene) return;
  const list = scene.getFlag(SCOPE, SITUATION_FLAG) ?? [];
  const next = mergeSituationAspects(list, state.aspects ?? []);
  linkedSeen.set(scene.id, linkedIds(next));
  if (JSON.stringify(next) === JSON.stringify(list)) return;
  await scene.update({ [`flags.${SCOPE}.${SITUATION_FLAG}`]: next }, { [BRIDGE_WRITE]: true });
}

// ---- FCO -> the bridge ----------------------------------------------------------------

/** Whether this client sends FCO's edits: the writing GM's, connected, in an FCO world. */
function sends(bridge, options) {
  return !options?.[BRIDGE_WRITE] && inFco() && bridge.connected && bridge.isWritingGM();
}

/** The value at `flags.<scope>.<key>` of an update's diff, expanded or dotted; undefined if untouched. */
function flagChange(changed, key) {
  const nested = changed?.flags?.[SCOPE];
  if (nested && key in nested) return nested[key];
  const dotted = `flags.${SCOPE}.${key}`;
  return changed && dotted in changed ? changed[dotted] : undefined;
}

/**
 * `updateUser` hook (it runs on every client, whichever GM's client made the change): a GM's
 * pool changed in Fate Utilities (set, or a point spent on an invoke): the bridge's GM budget
 * moves by the same difference, once, sent by the writing GM's client.
 * @param {import("../net/bridge.mjs").Bridge} bridge
 * @param {User} user
 * @param {object} changed
 * @param {object} options
 */
export function onUpdateUser(bridge, user, changed, options) {
  if (!sends(bridge, options) || !user?.isGM) return;
  const value = flagChange(changed, GM_POOL_FLAG);
  if (value === undefined) return;
  const points = clampInt(value, 0, 99);
  if (points === null) return;
  const budget = budgetAsked ?? bridge.scene.current?.gm_fate_points;
  const before = poolSeen.get(user.id) ?? budget;
  poolSeen.set(user.id, points);
  // With no budget known yet, the pool set is the budget.
  const target = Number.isInteger(budget) && Number.isInteger(before) ? Math.min(99, Math.max(0, budget + points - before)) : points;
  if (target === budget) return;
  budgetAsked = target;
  budgetQueue = budgetQueue.then(() => setGmBudget(bridge, target)).catch((err) => console.error("fate-bridge | GM budget", err));
}
/** Budget changes go out one at a time, in order. */
let budgetQueue = Promise.resolve();

/**
 * `updateScene` hook: a GM edited the played scene's situation aspects in Fate Utilities (an
 * edit on another scene a GM is looking at is that scene's own, and changes nothing here).
 * @param {import("../net/bridge.mjs").Bridge} bridge
 * @param {Scene} scene
 * @param {object} changed
 * @param {object} options
 */
export function onUpdateScene(bridge, scene, changed, options) {
  if (!sends(bridge, options) || !scene?.id || scene.id !== game.scenes?.active?.id) return;
  if (flagChange(changed, SITUATION_FLAG) === undefined) return;
  queue = queue.then(() => pushSituationAspects(bridge, scene)).catch((err) => console.error("fate-bridge | situation aspects", err));
}
/** Edits go out one update at a time, in order. */
let queue = Promise.resolve();

/**
 * Send what Fate Utilities' list says and the bridge's scene does not: a renamed line, a changed
 * count, a new named line (then linked to the aspect made), a line deleted there.
 * @param {import("../net/bridge.mjs").Bridge} bridge
 * @param {Scene} scene
 */
async function pushSituationAspects(bridge, scene) {
  const state = bridge.scene.current;
  if (!state) return;
  const list = scene.getFlag(SCOPE, SITUATION_FLAG) ?? [];
  const known = new Map(situationAspects(state).map((a) => [a.id, a]));
  const before = linkedSeen.get(scene.id) ?? new Set();
  for (const [index, entry] of list.entries()) {
    const name = toAspectText(entry?.name);
    const count = clampInt(entry?.free_invokes, 0, 10) ?? 0;
    const id = entry?.[LINK_KEY];
    const aspect = id ? known.get(id) : null;
    if (aspect) {
      if (name && name !== aspect.name) await editAspect(bridge, id, { name });
      if (count !== total(aspect)) await editAspect(bridge, id, { freeInvokes: withGmShare(aspect.free_invokes, count) });
    } else if (!id && name && !entry?.linked) {
      const made = await addAspect(bridge, name, count ? { [GM_HOLDER]: count } : {});
      if (made?.created_id) await link(scene, index, made.created_id);
    }
  }
  const now = linkedIds(scene.getFlag(SCOPE, SITUATION_FLAG) ?? []);
  for (const id of before) if (!now.has(id) && known.has(id)) await removeAspect(bridge, id);
  linkedSeen.set(scene.id, now);
}

/**
 * Free invoke holders for a new total: the others keep theirs, the GM's share makes up the
 * rest; a total under the others' is taken from the last holders.
 * @param {Record<string, number>} holders
 * @param {number} count
 */
function withGmShare(holders, count) {
  const out = {};
  let left = count;
  for (const [holder, n] of Object.entries(holders ?? {})) {
    if (holder === GM_HOLDER) continue;
    const kept = Math.min(Number(n) || 0, left);
    if (kept > 0) out[holder] = kept;
    left -= kept;
  }
  if (left > 0) out[GM_HOLDER] = left;
  return out;
}

/** Write the bridge's id into the line that made it (if the line is still there, unlinked). */
async function link(scene, index, id) {
  const list = structuredClone(scene.getFlag(SCOPE, SITUATION_FLAG) ?? []);
  if (list.some((e) => e?.[LINK_KEY] === id) || !list[index] || list[index][LINK_KEY]) return;
  list[index] = { ...list[index], [LINK_KEY]: id };
  linkedSeen.get(scene.id)?.add(id);
  await scene.update({ [`flags.${SCOPE}.${SITUATION_FLAG}`]: list }, { [BRIDGE_WRITE]: true });
}

// ---- Fate Utilities' roll tab -----------------------------------------------------------

/** Fate Utilities windows whose roll selects this module already listens to. */
const takenOver = new WeakSet();

/**
 * `renderFateUtilities` hook: a choice in a token's roll select is the bridge's action while the
 * bridge can be reached (a capture listener sees the change before Fate Utilities' own); a
 * macro, a stunt the bridge cannot roll, or no bridge: Fate Utilities rolls it.
 * @param {import("../net/bridge.mjs").Bridge} bridge
 * @param {object} app
 * @param {HTMLElement} html
 */
export function onRenderFateUtilities(bridge, app, html) {
  const root = app?.element instanceof HTMLElement ? app.element : html instanceof HTMLElement ? html : null;
  if (!root || takenOver.has(root)) return;
  takenOver.add(root);
  root.addEventListener("change", (event) => {
    const select = event.target?.closest?.("select.skill_select");
    if (!select || !bridge.connected) return;
    const token = game.scenes?.viewed?.tokens?.get?.(String(select.id).split("_")[0]);
    const actor = token?.actor;
    const roll = actor ? rollFor(actor, String(select.value ?? ""), startableActions(bridge.hello)) : null;
    if (!roll) return;
    event.stopPropagation();
    event.stopImmediatePropagation?.();
    select.selectedIndex = 0;
    startAction(bridge, actor, roll.skill, roll.request);
  }, { capture: true });
}

/**
 * A roll select's value as the bridge's action, or null when Fate Utilities keeps it.
 * @param {Actor} actor
 * @param {string} value
 * @param {string[]} actions  the actions a character may start (hello's)
 * @returns {{skill: string, request: object}|null}
 */
function rollFor(actor, value, actions) {
  if (value.startsWith("stunt_")) {
    const name = stuntNamed(actor, value.slice("stunt_".length));
    const roll = name ? stuntRoll(actor, name, actions) : null;
    return roll ? { skill: roll.skill, request: { type: roll.type, stunts: [roll.stunt] } } : null;
  }
  if (value.startsWith("macro_")) return null;
  const skills = fcoSkills(actor);
  // Fate Utilities names a skill as the sheet does: an approach in the world's language.
  const named = value.split("(")[0].trim();
  const skill = Object.keys(skills).find((name) => value === `${name} (${skills[name]})`) ?? sheetSkill(named) ?? named;
  return skill in skills ? { skill, request: {} } : null;
}
