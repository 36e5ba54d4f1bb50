/**
 * The player trust handshake (DESIGN "Trust"): a player's client writes the bridge's one-time
 * nonce into its own User flag; the active GM's client sees the flag and asks the bridge to bind
 * that player's connection to that user.
 * @module binding
 */
import { MODULE_ID } from "../protocol.mjs";

const NONCE_FLAG = "bindNonce";

/** Player: write the hello's nonce into this user's flag (a user may update only itself). */
export async function publishNonce(hello) {
  if (game.user.isGM || hello?.bound || !hello?.bind_nonce) return;
  await game.user.setFlag(MODULE_ID, NONCE_FLAG, hello.bind_nonce);
}

/**
 * Active GM: tell the bridge about one user's nonce.
 * @param {import("./bridge.mjs").Bridge} bridge
 * @param {User} user
 */
async function bindUser(bridge, user) {
  const nonce = user?.flags?.[MODULE_ID]?.[NONCE_FLAG];
  if (!nonce || user.isGM || !bridge.isWritingGM() || !bridge.connected) return null;
  const ack = await bridge.connection.call("user.bind", { user_id: user.id, nonce });
  // A stale nonce (the player reconnected since) is expected; the new one will follow.
  if (!ack.ok && ack.error.code !== "not_found") console.warn("fate-bridge | user.bind failed", ack.error);
  return ack;
}

/**
 * Active GM after connecting: bind every player whose flag already holds a nonce.
 * @param {import("./bridge.mjs").Bridge} bridge
 */
export async function bindWaitingUsers(bridge) {
  if (!bridge.isWritingGM()) return;
  for (const user of game.users.contents) await bindUser(bridge, user);
}

/**
 * `updateUser` hook: the active GM binds when a player's nonce flag changes.
 * @param {import("./bridge.mjs").Bridge} bridge
 * @param {User} user
 * @param {object} changed
 */
export function onUpdateUser(bridge, user, changed) {
  const flat = Object.keys(changed ?? {}).some((k) => k.startsWith(`flags.${MODULE_ID}`));
  if (!changed?.flags?.[MODULE_ID]?.[NONCE_FLAG] && !flat) return;
  bindUser(bridge, user);
}
