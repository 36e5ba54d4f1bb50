/**
 * Intents a user starts: syncing an actor to the bridge and rolling an overcome.
 * @module actions
 */
import { adapterFor } from "./adapters/index.mjs";
import { isActiveGM } from "./compat.mjs";
import { askOpposition } from "./roll-dialog.mjs";
import { runtime } from "./runtime.mjs";

/** Marker in update options for writes that came from the bridge: never sent back (no echo). */
export const BRIDGE_WRITE = "fateBridgeWrite";

/**
 * Send an actor's current data to the bridge (GM connections only).
 * @param {Actor} actor
 * @returns {Promise<import("./protocol.mjs").Ack>}
 */
export function syncActor(actor) {
  return runtime.connection.call("actor.sync", { actor: adapterFor().toActorData(actor) });
}

/**
 * The `action.start` payload of an overcome against passive opposition.
 * @param {Actor} actor
 * @param {string} skill
 * @param {{opposition: number, description?: string}} answer
 */
export function overcomePayload(actor, skill, { opposition, description }) {
  const payload = {
    type: "overcome",
    actor_id: actor.id,
    skill,
    opposition: { kind: "passive", rating: opposition }
  };
  if (description) payload.description = description;
  return payload;
}

/**
 * Roll an overcome for an actor's skill through the bridge. Without an opposition the roll dialog
 * asks for one. Resolves to the `action.start` data, or null if cancelled or refused (the user is
 * told why). The chat card arrives separately, as the bridge's `card` emit.
 * @param {Actor} actor
 * @param {string} skill
 * @param {{opposition?: number, description?: string}} [options]
 */
export async function rollOvercome(actor, skill, options = {}) {
  const i18n = game.i18n;
  const connection = runtime.connection;
  if (!connection?.connected) {
    const status = connection?.status;
    const reason = status?.message ?? i18n.localize(`FATEBRIDGE.Status.${status?.state ?? "offline"}`);
    ui.notifications.error(i18n.format("FATEBRIDGE.Notify.Offline", { reason }));
    return null;
  }
  const skills = adapterFor().skills(actor);
  if (!(skill in skills)) {
    ui.notifications.warn(i18n.format("FATEBRIDGE.Notify.SkillNotFound", { actor: actor.name, skill }));
    return null;
  }
  let answer = options.opposition === undefined ? null : { opposition: options.opposition, description: options.description };
  if (!answer) {
    answer = await askOpposition({ actorName: actor.name, skill, rating: skills[skill] });
    if (!answer) return null;
  }
  if (game.user.isGM) {
    const synced = await syncActor(actor);
    if (!synced.ok) {
      ui.notifications.error(i18n.format("FATEBRIDGE.Notify.SyncFailed", { actor: actor.name, message: synced.error.message }));
      return null;
    }
  }
  const ack = await connection.call("action.start", overcomePayload(actor, skill, answer));
  if (!ack.ok) {
    ui.notifications.warn(i18n.format("FATEBRIDGE.Notify.ActionFailed", { message: ack.error.message }));
    return null;
  }
  return ack.data;
}

/**
 * `updateActor` hook: the active GM's client tells the bridge about relevant changes, except the
 * bridge's own writes.
 * @param {Actor} actor
 * @param {object} changed
 * @param {object} options
 */
export function onUpdateActor(actor, changed, options) {
  if (options?.[BRIDGE_WRITE]) return;
  if (!runtime.connection?.connected || !isActiveGM()) return;
  if (!adapterFor().isRelevantChange(changed)) return;
  syncActor(actor).then((ack) => {
    if (!ack.ok) console.warn("fate-bridge | actor.sync failed", ack.error);
  });
}
