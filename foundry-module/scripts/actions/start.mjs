/**
 * Intents a user starts: syncing actors to the bridge and starting actions.
 * @module actions
 */
import { characterActor, characterId } from "../foundry/characters.mjs";
import { adapterFor } from "../adapters/index.mjs";
import { refusalText } from "../foundry/format.mjs";
import { askAction } from "./roll-dialog.mjs";
import { expand, staleChanges } from "../foundry/stale-guard.mjs";
import { BRIDGE_WRITE } from "../foundry/world-writes.mjs";

/**
 * Send an actor's current data to the bridge (GM connections only).
 * @param {import("../net/bridge.mjs").Bridge} bridge
 * @param {Actor} actor
 * @returns {Promise<import("../protocol.mjs").Ack>}
 */
function syncActor(bridge, actor) {
  return bridge.connection.call("actor.sync", { actor: adapterFor().toActorData(actor) });
}

/**
 * @typedef {object} ActionRequest  What the dialog (or a macro) asks for.
 * @property {string} [type]              overcome (default), create_advantage, take_advantage, discover, attack
 * @property {number} [opposition]        passive rating
 * @property {string} [opposerId]         an actor id: active opposition
 * @property {string} [targetId]
 * @property {string} [targetAspectId]
 * @property {string} [aspectName]
 * @property {string} [situation]
 * @property {{character_id: string, skill?: string}[]} [helpers]
 * @property {{actor?: boolean, opposition?: boolean}} [dangerous]
 * @property {{character_id: string, slot_id: string}} [recovery]
 * @property {boolean} [allowRepeat]
 * @property {string} [description]
 * @property {"physical"|"mental"} [attackKind]  an attack's kind of harm (R11.3; in a conflict, the
 *   conflict's kind is used and a different one refused)
 * @property {string[]} [stunts]  stunts the roll names (R13.8): FCO's stunt roll buttons name
 *   theirs, for the dialog to tick; the dialog's answer is what the roller ticked
 */

/**
 * The `action.start` payload (schemas/client/action_start.json), without the request id.
 * @param {Actor} actor
 * @param {string} skill
 * @param {ActionRequest} request
 */
export function startPayload(actor, skill, request) {
  const payload = { type: request.type ?? "overcome", actor_id: characterId(actor), skill };
  if (request.recovery) payload.recovery = request.recovery;
  else if (request.opposerId) payload.opposition = { kind: "active", opposer_id: request.opposerId };
  else payload.opposition = { kind: "passive", rating: request.opposition ?? 0 };
  if (request.targetId) payload.target_id = request.targetId;
  if (request.targetAspectId) payload.target_aspect_id = request.targetAspectId;
  if (request.aspectName) payload.aspect_name = request.aspectName;
  if (request.situation) payload.situation = request.situation;
  if (request.helpers?.length) payload.helpers = request.helpers.map((h) => (h.skill ? { character_id: h.character_id, skill: h.skill } : { character_id: h.character_id }));
  if (request.dangerous?.actor || request.dangerous?.opposition) {
    payload.dangerous = { actor: Boolean(request.dangerous.actor), opposition: Boolean(request.dangerous.opposition) };
  }
  if (request.allowRepeat && game.user.isGM) payload.allow_repeat = true;
  if (request.description) payload.description = request.description;
  if (request.attackKind) payload.attack_kind = request.attackKind;
  // R13.8: the stunts the roll names (an empty list: none; omitted, Unwritten counts every match).
  if (Array.isArray(request.stunts)) payload.stunts = [...new Set(request.stunts)].slice(0, 20);
  return payload;
}

/**
 * Sync every actor an action involves (GM only; a player's client never syncs).
 * @param {import("../net/bridge.mjs").Bridge} bridge
 * @param {(string|undefined)[]} ids
 * @returns {Promise<boolean>}
 */
export async function syncInvolved(bridge, ids) {
  if (!game.user.isGM) return true;
  for (const id of new Set(ids.filter(Boolean))) {
    const actor = characterActor(id);
    if (!actor) continue;
    const ack = await syncActor(bridge, actor);
    if (!ack.ok) {
      ui.notifications.error(game.i18n.format("FATEBRIDGE.Notify.SyncFailed", { actor: actor.name, message: refusalText(ack.error) }));
      return false;
    }
  }
  return true;
}

/**
 * Start an action for an actor's skill. Without a complete request (`opposition`, `opposerId`
 * or `recovery`) the action dialog asks. Resolves to the `action.start` data, or null if
 * cancelled or refused (the user is told why). The chat card arrives as the bridge's `card` emit.
 * @param {import("../net/bridge.mjs").Bridge} bridge
 * @param {Actor} actor
 * @param {string} skill
 * @param {ActionRequest} [request]
 */
export async function startAction(bridge, actor, skill, request = {}) {
  if (!bridge.ensureConnected()) return null;
  const adapter = adapterFor();
  const skills = adapter.skills(actor);
  // A sheet, a macro or Fate Utilities may name an approach as the sheet shows it (R13.1).
  if (skill) skill = adapter.sheetSkill?.(skill) ?? skill;
  if (skill && !(skill in skills)) {
    ui.notifications.warn(game.i18n.format("FATEBRIDGE.Notify.SkillNotFound", { actor: actor.name, skill }));
    return null;
  }
  const complete = request.opposition !== undefined || request.opposerId || request.recovery;
  if (!complete) {
    const answer = await askAction(bridge, { actor, skill, request });
    if (!answer) return null;
    ({ skill, ...request } = { ...answer });
  }
  const ids = [characterId(actor), request.opposerId, request.targetId, ...(request.helpers ?? []).map((h) => h.character_id)];
  if (!(await syncInvolved(bridge, ids))) return null;
  return bridge.send("action.start", startPayload(actor, skill, request));
}

/**
 * `updateActor` hook: the active GM's client tells the bridge about a user's edits, never about
 * the bridge's own writes (the BRIDGE_WRITE option marks them), never about a system's halfway
 * write (fate-core-official empties a block before writing it back), and never the values a
 * stale sheet re-submits: those are put back to what the bridge wrote (stale-guard.mjs), and
 * only the rest of the update, if any of it matters, is sent.
 * @param {import("../net/bridge.mjs").Bridge} bridge
 * @param {Actor} actor
 * @param {object} changed
 * @param {object} options
 */
export function onUpdateActor(bridge, actor, changed, options) {
  if (options?.[BRIDGE_WRITE]) return;
  if (!bridge.connected || !bridge.isWritingGM()) return;
  const adapter = adapterFor();
  if (!adapter.isCharacter(actor) || adapter.isTransientChange?.(changed, options)) return;
  const { restore, rest } = staleChanges(actor, changed, adapter.guardedFields?.(actor) ?? []);
  const stale = Object.keys(restore).length > 0;
  const relevant = adapter.isRelevantChange(stale ? expand(rest) : changed);
  if (!stale && !relevant) return;
  (async () => {
    if (stale) await actor.update(restore, { [BRIDGE_WRITE]: true });
    if (!relevant) return;
    const ack = await syncActor(bridge, actor);
    if (!ack.ok) console.warn("fate-bridge | actor.sync failed", ack.error);
  })().catch((err) => console.error("fate-bridge | actor update failed", err));
}
