/**
 * Fate Bridge: hooks only. `init` registers settings and templates; `ready` connects.
 * @module main
 */
import { onUpdateActor } from "./actions/start.mjs";
import { createApi } from "./api.mjs";
import { onUpdateUser } from "./net/binding.mjs";
import { renderControls } from "./cards/controls.mjs";
import { decorateMessage } from "./cards/chat.mjs";
import { ACTOR_SHEET_RENDER_HOOKS, CHAT_MESSAGE_RENDER_HOOK, PLAYERS_RENDER_HOOK, loadTemplates } from "./foundry/compat.mjs";
import { onUserConnected, startConnection } from "./net/session.mjs";
import { MODULE_ID } from "./protocol.mjs";
import { registerSettings } from "./net/settings.mjs";
import { followRuleset, onRulesetSetting } from "./net/ruleset.mjs";
import { onRenderActorSheet } from "./foundry/sheet.mjs";
import { showStatus } from "./net/status.mjs";
import { registerStatuses } from "./foundry/world-writes.mjs";
import { writeConflicts } from "./scene/combat.mjs";
import { addSceneControl } from "./foundry/compat.mjs";
import { openScenePanel } from "./scene/panel.mjs";
import { openHistory } from "./history/window.mjs";
import { addSceneWriter, onSceneState } from "./scene/state.mjs";
import { onCreateToken, onUpdateToken, syncSceneTokens } from "./scene/tokens.mjs";
import { onRenderFateUtilities, onUpdateScene, onUpdateUser as onFcoUpdateUser, writeFcoStores } from "./adapters/fco-utilities.mjs";

Hooks.once("init", () => {
  registerSettings(() => {
    if (game.ready) startConnection();
  }, { onRulesetChange: onRulesetSetting });
  registerStatuses();
  loadTemplates([
    `modules/${MODULE_ID}/templates/action-card.hbs`,
    `modules/${MODULE_ID}/templates/card-controls.hbs`,
    `modules/${MODULE_ID}/templates/invoke-picker.hbs`,
    `modules/${MODULE_ID}/templates/absorb-picker.hbs`,
    `modules/${MODULE_ID}/templates/roll-dialog.hbs`,
    `modules/${MODULE_ID}/templates/odds.hbs`,
    `modules/${MODULE_ID}/templates/skill-panel.hbs`,
    `modules/${MODULE_ID}/templates/skill-edit.hbs`,
    `modules/${MODULE_ID}/templates/contest-card.hbs`,
    `modules/${MODULE_ID}/templates/challenge-card.hbs`,
    `modules/${MODULE_ID}/templates/scene-end-card.hbs`,
    `modules/${MODULE_ID}/templates/scene-panel.hbs`,
    `modules/${MODULE_ID}/templates/history-window.hbs`,
    `modules/${MODULE_ID}/templates/check-connection.hbs`
  ]);
  addSceneWriter(writeConflicts);
  addSceneWriter(writeFcoStores);
  onSceneState(followRuleset);
  const module = game.modules.get(MODULE_ID);
  if (module) module.api = createApi();
});

Hooks.once("ready", () => {
  startConnection();
});

for (const hook of ACTOR_SHEET_RENDER_HOOKS) Hooks.on(hook, (app, html) => onRenderActorSheet(app, html));
Hooks.on(CHAT_MESSAGE_RENDER_HOOK, (message, html) => {
  decorateMessage(message, html);
  renderControls(message, html);
});
Hooks.on(PLAYERS_RENDER_HOOK, () => showStatus());
Hooks.on("updateActor", onUpdateActor);
Hooks.on("updateUser", onUpdateUser);
// fate-core-official's Fate Utilities: the GM's pool, situation aspects and roll tab.
Hooks.on("updateUser", onFcoUpdateUser);
Hooks.on("updateScene", onUpdateScene);
Hooks.on("renderFateUtilities", onRenderFateUtilities);
Hooks.on("userConnected", (user, connected) => onUserConnected(user, connected));
Hooks.on("canvasReady", () => syncSceneTokens());
Hooks.on("createToken", (token, options) => onCreateToken(token, options));
Hooks.on("updateToken", (token, changed, options) => onUpdateToken(token, changed, options));
Hooks.on("getSceneControlButtons", (controls) => {
  addSceneControl(controls, {
    name: "fate-bridge-scene",
    title: "FATEBRIDGE.Scene.Button",
    icon: "fa-solid fa-theater-masks",
    onClick: () => openScenePanel()
  });
  addSceneControl(controls, {
    name: "fate-bridge-history",
    title: "FATEBRIDGE.History.Open",
    icon: "fa-solid fa-clock-rotate-left",
    onClick: () => openHistory()
  });
});
