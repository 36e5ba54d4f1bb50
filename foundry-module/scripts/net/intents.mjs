/**
 * Sending intents to the bridge and telling the user when one is refused.
 * @module intents
 */
import { refusalText } from "../foundry/format.mjs";
import { runtime } from "./runtime.mjs";

/**
 * Whether the connection is up; otherwise the user is told why not.
 * @returns {boolean}
 */
export function ensureConnected() {
  const connection = runtime.connection;
  if (connection?.connected) return true;
  const status = connection?.status;
  const reason = status?.message ?? game.i18n.localize(`FATEBRIDGE.Status.${status?.state ?? "offline"}`);
  ui.notifications.error(game.i18n.format("FATEBRIDGE.Notify.Offline", { reason }));
  return false;
}

/**
 * Send one intent. Resolves to the ack's data, or null when it was refused (the bridge's message
 * is shown as a warning) or the connection is down.
 * @param {string} event
 * @param {object} payload
 * @returns {Promise<object|null>}
 */
export async function send(event, payload) {
  if (!ensureConnected()) return null;
  const ack = await runtime.connection.call(event, payload);
  if (!ack.ok) {
    ui.notifications.warn(game.i18n.format("FATEBRIDGE.Notify.ActionFailed", { message: refusalText(ack.error) }));
    return null;
  }
  return ack.data;
}

/**
 * `world.state`: characters, aspects and free invokes, for pickers. Null when unavailable.
 * @returns {Promise<object|null>}
 */
export async function worldState() {
  if (!runtime.connection?.connected) return null;
  const ack = await runtime.connection.call("world.state", {});
  return ack.ok ? ack.data : null;
}
