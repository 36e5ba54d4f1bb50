/**
 * Every difference between Foundry generations (v13 minimum, v14 verified) lives here,
 * so the rest of the module calls one name for one thing.
 * @module compat
 */
import { tokenCharacterId } from "./characters.mjs";

/** @returns {number} the running core generation, e.g. 13 or 14 */
export function generation() {
  return Number(game.release?.generation ?? String(game.version ?? "13").split(".")[0]);
}

/** @returns {string} the running core version */
export function foundryVersion() {
  return String(game.version ?? game.release?.version ?? "");
}

/** @returns {string} the module's installed version */
export function moduleVersion() {
  return String(game.modules?.get("fate-bridge")?.version ?? "");
}

/**
 * Render a Handlebars template (the global `renderTemplate` is deprecated since v13).
 * @param {string} path
 * @param {object} data
 * @returns {Promise<string>}
 */
export function renderTemplate(path, data) {
  return foundry.applications.handlebars.renderTemplate(path, data);
}

/**
 * Preload templates (the global `loadTemplates` is deprecated since v13).
 * @param {string[]} paths
 */
export function loadTemplates(paths) {
  return foundry.applications.handlebars.loadTemplates(paths);
}

/** @returns {typeof foundry.applications.api.DialogV2} */
export function dialogClass() {
  return foundry.applications.api.DialogV2;
}

/**
 * Whether this client is the one active GM (assistants and other GMs are not).
 * @param {User} [user]
 */
export function isActiveGM(user = game.user) {
  if (typeof user?.isActiveGM === "boolean") return user.isActiveGM;
  return Boolean(user?.isGM) && game.users?.activeGM?.id === user.id;
}

/**
 * The scene the table is playing (`game.scenes.active`), whatever scene this user is looking
 * at; the viewed one only when no scene is active.
 * @returns {Scene|null}
 */
export function playedScene() {
  return game.scenes?.active ?? game.scenes?.viewed ?? null;
}

/**
 * Hooks fired when an actor sheet renders: ApplicationV2 sheets (`renderActorSheetV2`, with an
 * HTMLElement) and the legacy Application sheets some systems still ship (`renderActorSheet`,
 * with jQuery).
 */
export const ACTOR_SHEET_RENDER_HOOKS = Object.freeze(["renderActorSheetV2", "renderActorSheet"]);

/**
 * The root element of a rendered sheet, whatever the hook passed.
 * @param {object} app
 * @param {HTMLElement|{0: HTMLElement}} html
 * @returns {HTMLElement|null}
 */
export function sheetRoot(app, html) {
  if (app?.element instanceof HTMLElement) return app.element;
  if (html instanceof HTMLElement) return html;
  if (html && html[0] instanceof HTMLElement) return html[0].closest(".app") ?? html[0];
  return null;
}

/**
 * The actor a rendered sheet shows.
 * @param {object} app
 * @returns {Actor|null}
 */
export function sheetActor(app) {
  return app?.actor ?? app?.document ?? app?.object ?? null;
}

/**
 * Whether this user may update a document as Foundry's server would allow it (a ChatMessage:
 * its author or a GM; an Actor: an owner or a GM).
 * @param {ClientDocument} doc
 * @param {User} [user]
 */
export function mayUpdate(doc, user = game.user) {
  if (typeof doc?.canUserModify === "function") return doc.canUserModify(user, "update");
  return Boolean(user?.isGM) || doc?.author?.id === user?.id;
}

/** The numeric OWNER permission level. */
export function ownerLevel() {
  return CONST?.DOCUMENT_OWNERSHIP_LEVELS?.OWNER ?? 3;
}

/** The dice sound for a roll message, if the core defines one. */
export function diceSound() {
  return CONFIG?.sounds?.dice;
}

/** The chat message hook that passes an HTMLElement (v13+; `renderChatMessage` is gone). */
export const CHAT_MESSAGE_RENDER_HOOK = "renderChatMessageHTML";

/** The players list application's render hook and its root element id. */
export const PLAYERS_RENDER_HOOK = "renderPlayers";
export const PLAYERS_ELEMENT_ID = "players";

/**
 * An update fragment that deletes `key` from the object it is merged into. v14 has a deletion
 * operator, the global `_del` (a ForcedDeletion; fate-core-official 4.7.14 writes
 * `{[key]: _del}`), and deprecates the v13 form `{"-=key": null}`, which v13 still needs.
 * @param {string} key
 * @returns {Record<string, unknown>}
 */
export function deletionKey(key) {
  const del = generation() >= 14 ? globalThis._del : undefined;
  if (del !== undefined) return { [key]: del };
  return { [`-=${key}`]: null };
}

/**
 * Register status effects. v13 keeps `CONFIG.statusEffects` as an array of `{id, name, img}`;
 * v14 keys it by id. Registering twice changes nothing.
 * @param {{id: string, name: string, img: string}[]} effects
 */
export function registerStatusEffects(effects) {
  const config = CONFIG.statusEffects;
  for (const effect of effects) {
    if (Array.isArray(config)) {
      const i = config.findIndex((e) => e.id === effect.id);
      if (i >= 0) config[i] = { ...config[i], ...effect };
      else config.push({ ...effect });
    } else if (config && typeof config === "object") {
      config[effect.id] = { ...(config[effect.id] ?? {}), ...effect };
    }
  }
}

/**
 * Whether an actor currently shows a status: an active effect of the actor carries it. Read from
 * `actor.effects`, as `toggleStatusEffect` itself does: `actor.statuses` is derived data that a
 * system may never fill (fate-core-official 4.7.14 on v14 overrides `applyActiveEffects` with a
 * no-op, so there it stays empty while the effects and their token icons are there).
 * @param {Actor} actor
 * @param {string} id
 */
export function hasStatus(actor, id) {
  const effects = actor?.effects;
  if (effects) {
    const list = effects.contents ?? [...effects.values()];
    return list.some((e) => !e?.disabled && Boolean(e?.statuses?.has?.(id)));
  }
  return Boolean(actor?.statuses?.has?.(id));
}

/**
 * Animate a roll with Dice So Nice when it is installed (a message update does not animate).
 * @param {Roll} roll
 */
export function showDice(roll) {
  return globalThis.game?.dice3d?.showForRoll?.(roll, game.user, true) ?? null;
}

/**
 * Character ids of the tokens this user targets (v13/v14: `game.user.targets` is a Set of
 * Tokens); an unlinked token is its own character.
 * @returns {string[]}
 */
export function targetedActorIds() {
  return [...(game.user?.targets ?? [])].map((t) => tokenCharacterId(t)).filter(Boolean);
}

/**
 * Character ids of the tokens on the viewed scene this user sees, once each: a Token placeable's
 * `isVisible` (false for a player on a hidden token or one outside the player's vision), or, for
 * a TokenDocument, not hidden unless the user is a GM.
 * @returns {string[]}
 */
export function sceneActorIds() {
  const tokens = globalThis.canvas?.tokens?.placeables ?? game.scenes?.viewed?.tokens?.contents ?? [];
  const seen = (t) => {
    const shown = t?.isVisible ?? (t?.document ? t.visible : undefined);
    if (typeof shown === "boolean") return shown;
    return !(t?.document ?? t)?.hidden || Boolean(game.user?.isGM);
  };
  return [...new Set([...tokens].filter(seen).map((t) => tokenCharacterId(t)).filter(Boolean))];
}

/**
 * Whether this user may see an actor's sheet data (skills): a GM, or at least Observer.
 * @param {Actor} actor
 */
export function mayObserve(actor, user = game.user) {
  if (user?.isGM) return true;
  if (typeof actor?.testUserPermission === "function") return actor.testUserPermission(user, "OBSERVER");
  return Boolean(actor?.isOwner);
}

/**
 * Add a button tool to the token controls. v13+ passes controls as an object keyed by name with
 * `tools` keyed by name and `onChange(event, active)`; older cores passed arrays with `onClick`.
 * @param {object|object[]} controls
 * @param {{name: string, title: string, icon: string, onClick: () => unknown}} tool
 */
export function addSceneControl(controls, { name, title, icon, onClick }) {
  if (Array.isArray(controls)) {
    const tokens = controls.find((c) => c.name === "token") ?? controls[0];
    tokens?.tools?.push({ name, title, icon, button: true, visible: true, onClick });
    return;
  }
  const tokens = controls?.tokens ?? controls?.token;
  if (!tokens?.tools) return;
  tokens.tools[name] = { name, title, icon, button: true, visible: true, order: Object.keys(tokens.tools).length, onChange: () => onClick() };
}

/**
 * Download `data` as a file: v13+ `foundry.utils.saveDataToFile`, the older global otherwise.
 * @param {string} data
 * @param {string} type  a MIME type
 * @param {string} filename
 */
export function saveFile(data, type, filename) {
  const save = globalThis.foundry?.utils?.saveDataToFile ?? globalThis.saveDataToFile;
  return save?.(data, type, filename);
}
