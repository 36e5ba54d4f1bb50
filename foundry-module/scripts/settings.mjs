/**
 * Module settings. World settings reach every client, so the GM key is client-scoped.
 * @module settings
 */
import { MODULE_ID } from "./protocol.mjs";

export const SETTINGS = Object.freeze({
  bridgeUrl: "bridgeUrl",
  worldId: "worldId",
  gmKey: "gmKey",
  lastSeq: "lastSeq",
  nativeFcoRolls: "nativeFcoRolls"
});

/**
 * Register the settings; called from the `init` hook.
 * @param {() => void} onConnectionChange  called when a setting that shapes the connection changes
 */
export function registerSettings(onConnectionChange) {
  const onChange = () => onConnectionChange?.();
  game.settings.register(MODULE_ID, SETTINGS.bridgeUrl, {
    name: "FATEBRIDGE.Settings.BridgeUrl.Name",
    hint: "FATEBRIDGE.Settings.BridgeUrl.Hint",
    scope: "world",
    config: true,
    type: String,
    default: "http://127.0.0.1:8765",
    onChange
  });
  game.settings.register(MODULE_ID, SETTINGS.worldId, {
    name: "FATEBRIDGE.Settings.WorldId.Name",
    hint: "FATEBRIDGE.Settings.WorldId.Hint",
    scope: "world",
    config: true,
    type: String,
    default: "default",
    onChange
  });
  game.settings.register(MODULE_ID, SETTINGS.gmKey, {
    name: "FATEBRIDGE.Settings.GmKey.Name",
    hint: "FATEBRIDGE.Settings.GmKey.Hint",
    scope: "client",
    config: true,
    type: String,
    default: "",
    onChange
  });
  // Per browser: one user may prefer fate-core-official's own rolls on its sheets.
  game.settings.register(MODULE_ID, SETTINGS.nativeFcoRolls, {
    name: "FATEBRIDGE.Settings.NativeFcoRolls.Name",
    hint: "FATEBRIDGE.Settings.NativeFcoRolls.Hint",
    scope: "client",
    config: true,
    type: Boolean,
    default: false
  });
  game.settings.register(MODULE_ID, SETTINGS.lastSeq, {
    scope: "client",
    config: false,
    type: Object,
    default: {}
  });
}

/**
 * The connection's parameters as the settings give them.
 * @returns {{url: string, world: string, key: string}}
 */
export function connectionSettings() {
  return {
    url: String(game.settings.get(MODULE_ID, SETTINGS.bridgeUrl) ?? "").replace(/\/+$/, ""),
    world: String(game.settings.get(MODULE_ID, SETTINGS.worldId) ?? ""),
    key: String(game.settings.get(MODULE_ID, SETTINGS.gmKey) ?? "")
  };
}

/** Whether fate-core-official's sheets roll skills natively on this client (not through the bridge). */
export function nativeFcoRolls() {
  return Boolean(game.settings.get(MODULE_ID, SETTINGS.nativeFcoRolls));
}

/** Key of this Foundry world + bridge world in the client-side `lastSeq` record. */
function seqKey() {
  return `${game.world?.id ?? ""}/${game.settings.get(MODULE_ID, SETTINGS.worldId)}`;
}

/**
 * The last card seq this client processed for the current world, or null if none.
 * @returns {number|null}
 */
export function getLastSeq() {
  const record = game.settings.get(MODULE_ID, SETTINGS.lastSeq) ?? {};
  const seq = record[seqKey()];
  return Number.isInteger(seq) ? seq : null;
}

/** @param {number} seq */
export async function setLastSeq(seq) {
  const record = { ...(game.settings.get(MODULE_ID, SETTINGS.lastSeq) ?? {}) };
  record[seqKey()] = seq;
  await game.settings.set(MODULE_ID, SETTINGS.lastSeq, record);
}
