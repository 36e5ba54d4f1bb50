/**
 * A sheet that is out of date must not undo the bridge's writes. fate-core-official's sheet is a
 * form submitted whole on every change and on close, and it holds its re-render while a field has
 * focus: a player typing in one field while the bridge spends a fate point or names a
 * consequence re-submits the fate points and names the form was rendered with. Foundry's diff
 * then turns them into a change, and the module would send it to the bridge, which adopts
 * sheet data.
 *
 * So the module keeps, per actor (in its flags, written with each `actor.patch`), the value the
 * bridge last wrote into each field a form re-submits, and the values that field had before the
 * bridge's writes. An update that sets such a field back to one of those older values is a
 * stale re-submit: the bridge's value is put back and never sent. Any other change in the same
 * update is the user's and is sent as usual. (A user who deliberately types back an older value
 * sees it restored: fate points and consequences are the bridge's to change, through its
 * intents.)
 * @module stale-guard
 */
import { MODULE_ID } from "../protocol.mjs";

/** Module flag holding `{[fieldId]: {value, older: unknown[]}}`. */
const WRITTEN_FLAG = "written";
/** How many older values of a field are kept. */
const KEEP = 8;

/** @typedef {{id: string, path: string}} GuardedField  a stable id and the field's data path */

function read(obj, path) {
  return path.split(".").reduce((o, k) => (o && typeof o === "object" ? o[k] : undefined), obj);
}

/**
 * Add to a patch's update what the bridge writes into the guarded fields, and what it overwrites.
 * @param {Actor} actor  before the update
 * @param {Record<string, unknown>} update  flat keys (the adapter's patchUpdate)
 * @param {GuardedField[]} fields
 */
export function recordWritten(actor, update, fields) {
  const before = actor.flags?.[MODULE_ID]?.[WRITTEN_FLAG] ?? {};
  const written = {};
  for (const { id, path } of fields) {
    if (!(path in update)) continue;
    const value = update[path];
    const entry = before[id] ?? { value: undefined, older: [] };
    // What the field held (the sheet may show it) and what the bridge had written before.
    const candidates = [read(actor, path), entry.value];
    let older = (Array.isArray(entry.older) ? entry.older : []).filter((v) => v !== value);
    for (const v of candidates) {
      if (v === undefined || v === null || v === value || older.includes(v)) continue;
      older = [v, ...older];
    }
    written[id] = { value, older: older.slice(0, KEEP) };
  }
  if (Object.keys(written).length) update[`flags.${MODULE_ID}.${WRITTEN_FLAG}`] = written;
  return update;
}

/**
 * Foundry's `changed` as flat dotted paths (Foundry passes it expanded; some writers pass dotted
 * keys). v13's `-=`/`==` key prefixes are dropped from the path.
 * @param {object} changed
 * @returns {Record<string, unknown>}
 */
export function flatten(changed, prefix = "", out = {}) {
  for (const [rawKey, value] of Object.entries(changed ?? {})) {
    const key = rawKey.replace(/(^|\.)(-=|==)/g, "$1");
    const path = prefix ? `${prefix}.${key}` : key;
    if (value && typeof value === "object" && !Array.isArray(value) && Object.getPrototypeOf(value) === Object.prototype && Object.keys(value).length) {
      flatten(value, path, out);
    } else {
      out[path] = value;
    }
  }
  return out;
}

/**
 * Split an actor update into the stale re-submits of guarded fields (with the value to put
 * back) and the rest of the change.
 * @param {Actor} actor  after the update
 * @param {object} changed  the diff passed to `updateActor`
 * @param {GuardedField[]} fields
 * @returns {{restore: Record<string, unknown>, rest: Record<string, unknown>}}  flat paths
 */
export function staleChanges(actor, changed, fields) {
  const written = actor.flags?.[MODULE_ID]?.[WRITTEN_FLAG] ?? {};
  const flat = flatten(changed);
  const restore = {};
  for (const { id, path } of fields) {
    if (!(path in flat)) continue;
    const entry = written[id];
    const value = flat[path];
    if (!entry || value === entry.value) continue;
    if (Array.isArray(entry.older) && entry.older.includes(value)) restore[path] = entry.value;
  }
  const rest = Object.fromEntries(Object.entries(flat).filter(([path]) => !(path in restore)));
  return { restore, rest };
}

/**
 * Flat dotted paths back into an object (for the adapters' `isRelevantChange`).
 * @param {Record<string, unknown>} flat
 */
export function expand(flat) {
  const out = {};
  for (const [path, value] of Object.entries(flat)) {
    const keys = path.split(".");
    let node = out;
    for (const k of keys.slice(0, -1)) node = node[k] && typeof node[k] === "object" ? node[k] : (node[k] = {});
    node[keys.at(-1)] = value;
  }
  return out;
}
