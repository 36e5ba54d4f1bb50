/**
 * The `hello` exchange: what this client says of itself, what it does with the answer's
 * version, and asking again (a ruleset switch changes hello's actions, costs and rules).
 * @module hello
 */
import { foundryVersion, moduleVersion } from "../foundry/compat.mjs";

/**
 * A GM whose module is not the bridge's version is told, in one line, to update: the bridge
 * and the module ship together, one version (a player cannot update modules, so only GMs).
 * @param {{role: string, bridge_version: string}} hello
 * @returns {boolean} whether the GM was told
 */
export function warnVersionMismatch(hello) {
  const installed = moduleVersion();
  if (hello.role !== "gm" || !installed || !hello.bridge_version || installed === hello.bridge_version) return false;
  ui.notifications.warn(game.i18n.format("FATEBRIDGE.Notify.VersionMismatch", { bridge: hello.bridge_version, module: installed }));
  return true;
}

/** The `hello` payload; fields the client does not know are left out. */
export function helloPayload() {
  const fields = {
    module_version: moduleVersion().slice(0, 40),
    foundry_version: foundryVersion().slice(0, 40),
    system: String(game.system?.id ?? "").slice(0, 80)
  };
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v));
}

/**
 * Ask hello again: a ruleset change changes its actions, costs and rules. Hello reads and
 * changes nothing on the bridge.
 * @param {import("./bridge.mjs").Bridge} bridge
 * @returns {Promise<object|null>} the new hello, or null
 */
export async function refreshHello(bridge) {
  const connection = bridge.connection;
  if (!connection?.connected) return null;
  const ack = await connection.call("hello", helloPayload());
  if (ack.ok && bridge.connection === connection) bridge.hello = ack.data;
  return ack.ok ? ack.data : null;
}
