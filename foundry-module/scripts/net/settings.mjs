/**
 * Module settings. World settings reach every client, so the GM key is client-scoped.
 * @module settings
 */
import { MODULE_ID } from "../protocol.mjs";

export const SETTINGS = Object.freeze({
  bridgeUrl: "bridgeUrl",
  worldId: "worldId",
  gmKey: "gmKey",
  lastSeq: "lastSeq",
  connectionMode: "connectionMode",
  ruleset: "ruleset"
});

/** The rulesets the bridge plays (R13) and their names, as the setting offers them. */
export const RULESET_LABELS = Object.freeze({
  unwritten: "FATEBRIDGE.Ruleset.Choice.unwritten",
  "fate-core": "FATEBRIDGE.Ruleset.Choice.fate-core",
  "fate-condensed": "FATEBRIDGE.Ruleset.Choice.fate-condensed",
  "fate-accelerated": "FATEBRIDGE.Ruleset.Choice.fate-accelerated"
});

/** How players reach the bridge (DESIGN "Reach and trust"). */
export const CONNECTION_MODES = Object.freeze({ relay: "relay", direct: "direct" });

/**
 * Register the settings; called from the `init` hook.
 * @param {{onConnectionChange: () => void, onRulesetChange: (value: string) => unknown, checkWindow: Function}} with
 *   `onConnectionChange`: a setting that shapes the connection changed; `onRulesetChange`: the
 *   GM's ruleset choice changed; `checkWindow`: the "Check connection" menu's window class
 */
export function registerSettings({ onConnectionChange, onRulesetChange, checkWindow }) {
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
  // World-wide: relayed through the GM's client, or every browser connects itself.
  game.settings.register(MODULE_ID, SETTINGS.connectionMode, {
    name: "FATEBRIDGE.Settings.ConnectionMode.Name",
    hint: "FATEBRIDGE.Settings.ConnectionMode.Hint",
    scope: "world",
    config: true,
    type: String,
    choices: {
      [CONNECTION_MODES.relay]: "FATEBRIDGE.Settings.ConnectionMode.Relay",
      [CONNECTION_MODES.direct]: "FATEBRIDGE.Settings.ConnectionMode.Direct"
    },
    default: CONNECTION_MODES.relay,
    onChange
  });
  // R13.9: the world's rules, set by its GM; empty: whatever the bridge's world plays.
  game.settings.register(MODULE_ID, SETTINGS.ruleset, {
    name: "FATEBRIDGE.Settings.Ruleset.Name",
    hint: "FATEBRIDGE.Settings.Ruleset.Hint",
    scope: "world",
    config: true,
    restricted: true,
    type: String,
    choices: {
      "": "FATEBRIDGE.Settings.Ruleset.Bridge",
      ...RULESET_LABELS
    },
    default: "",
    onChange: (value) => onRulesetChange?.(value)
  });
  // "Check connection": every check between this browser and the bridge, each with its result.
  game.settings.registerMenu(MODULE_ID, "checkConnection", {
    name: "FATEBRIDGE.Reach.Check.Menu",
    label: "FATEBRIDGE.Reach.Check.MenuLabel",
    hint: "FATEBRIDGE.Reach.Check.MenuHint",
    icon: "fa-solid fa-plug-circle-check",
    type: checkWindow,
    restricted: false
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
 * @returns {{url: string, world: string, key: string, mode: "relay"|"direct"}}
 */
export function connectionSettings() {
  const mode = game.settings.get(MODULE_ID, SETTINGS.connectionMode);
  return {
    url: String(game.settings.get(MODULE_ID, SETTINGS.bridgeUrl) ?? "").replace(/\/+$/, ""),
    world: String(game.settings.get(MODULE_ID, SETTINGS.worldId) ?? ""),
    key: String(game.settings.get(MODULE_ID, SETTINGS.gmKey) ?? ""),
    mode: mode === CONNECTION_MODES.direct ? CONNECTION_MODES.direct : CONNECTION_MODES.relay
  };
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
