/**
 * Every Foundry hook the module listens to, each handing this client's Bridge to the code it
 * calls: `init` registers settings, templates, the scene writers and the API; `ready` connects.
 * @module hooks
 */
import { onUpdateActor } from "./actions/start.mjs";
import { onRenderFateUtilities, onUpdateScene, onUpdateUser as onFcoUpdateUser, writeFcoStores } from "./adapters/fco-utilities.mjs";
import { createApi } from "./api.mjs";
import { decorateMessage } from "./cards/chat.mjs";
import { renderControls } from "./cards/controls.mjs";
import { ACTOR_SHEET_RENDER_HOOKS, CHAT_MESSAGE_RENDER_HOOK, PLAYERS_RENDER_HOOK, addSceneControl, loadTemplates } from "./foundry/compat.mjs";
import { onRenderActorSheet, refreshSheetStatus } from "./adapters/sheet.mjs";
import { registerStatuses } from "./foundry/world-writes.mjs";
import { openHistory } from "./history/window.mjs";
import { onUpdateUser } from "./net/binding.mjs";
import { checkWindowClass } from "./net/check-connection.mjs";
import { followRuleset, onRulesetSetting } from "./net/ruleset.mjs";
import { onUserConnected, startConnection } from "./net/session.mjs";
import { registerSettings } from "./net/settings.mjs";
import { showStatus } from "./net/status.mjs";
import { MODULE_ID } from "./protocol.mjs";
import { writeConflicts } from "./scene/combat.mjs";
import { openScenePanel } from "./scene/panel.mjs";
import { onCreateToken, onUpdateToken, syncSceneTokens } from "./scene/tokens.mjs";

const TEMPLATES = [
  "action-card", "card-controls", "invoke-picker", "absorb-picker", "roll-dialog", "odds", "skill-panel", "skill-edit",
  "contest-card", "challenge-card", "scene-end-card", "scene-panel", "history-window", "check-connection"
];

/**
 * Listen to Foundry's hooks for this client (main.mjs calls it once, with the client's Bridge).
 * @param {import("./net/bridge.mjs").Bridge} bridge
 */
export function connectHooks(bridge) {
  Hooks.once("init", () => {
    registerSettings({
      onConnectionChange: () => {
        if (game.ready) startConnection(bridge);
      },
      onRulesetChange: (value) => onRulesetSetting(bridge, value),
      checkWindow: checkWindowClass(bridge)
    });
    registerStatuses();
    loadTemplates(TEMPLATES.map((name) => `modules/${MODULE_ID}/templates/${name}.hbs`));
    bridge.scene.addWriter(writeConflicts);
    bridge.scene.addWriter(writeFcoStores);
    bridge.scene.onChange((state) => followRuleset(bridge, state));
    // An FCO sheet says whether its skill clicks reach the bridge.
    bridge.onStatus(() => refreshSheetStatus(bridge));
    const module = game.modules.get(MODULE_ID);
    if (module) module.api = createApi(bridge);
  });

  Hooks.once("ready", () => {
    startConnection(bridge);
  });

  for (const hook of ACTOR_SHEET_RENDER_HOOKS) Hooks.on(hook, (app, html) => onRenderActorSheet(bridge, app, html));
  Hooks.on(CHAT_MESSAGE_RENDER_HOOK, (message, html) => {
    decorateMessage(message, html);
    renderControls(bridge, message, html);
  });
  Hooks.on(PLAYERS_RENDER_HOOK, () => showStatus());
  Hooks.on("updateActor", (actor, changed, options) => onUpdateActor(bridge, actor, changed, options));
  Hooks.on("updateUser", (user, changed) => onUpdateUser(bridge, user, changed));
  // fate-core-official's Fate Utilities: the GM's pool, situation aspects and roll tab.
  Hooks.on("updateUser", (user, changed, options) => onFcoUpdateUser(bridge, user, changed, options));
  Hooks.on("updateScene", (scene, changed, options) => onUpdateScene(bridge, scene, changed, options));
  Hooks.on("renderFateUtilities", (app, html) => onRenderFateUtilities(bridge, app, html));
  Hooks.on("userConnected", (user, connected) => onUserConnected(bridge, user, connected));
  Hooks.on("canvasReady", () => syncSceneTokens(bridge));
  Hooks.on("createToken", (token, options) => onCreateToken(bridge, token, options));
  Hooks.on("updateToken", (token, changed, options) => onUpdateToken(bridge, token, changed, options));
  Hooks.on("getSceneControlButtons", (controls) => {
    addSceneControl(controls, {
      name: "fate-bridge-scene",
      title: "FATEBRIDGE.Scene.Button",
      icon: "fa-solid fa-theater-masks",
      onClick: () => openScenePanel(bridge)
    });
    addSceneControl(controls, {
      name: "fate-bridge-history",
      title: "FATEBRIDGE.History.Open",
      icon: "fa-solid fa-clock-rotate-left",
      onClick: () => openHistory(bridge)
    });
  });
}
