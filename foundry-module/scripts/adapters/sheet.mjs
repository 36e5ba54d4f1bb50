/**
 * Roll controls on actor sheets: a die button beside each skill of a fate-core-official sheet, or
 * a compact "Fate Bridge" panel (skills kept in module flags) on any other system's sheet.
 * @module sheet
 */
import { startAction } from "../actions/start.mjs";
import { SYSTEM_ID as FCO, stuntNamed, stuntRoll } from "./fate-core-official.mjs";
import { setSkill, skills as flagSkills } from "./generic.mjs";
import { toRating, toSkillName } from "./common.mjs";
import { dialogClass, renderTemplate, sheetActor, sheetRoot } from "../foundry/compat.mjs";
import { ladderEntry, signed } from "../foundry/format.mjs";
import { MODULE_ID } from "../protocol.mjs";
import { startableActions } from "../actions/roll-dialog.mjs";
import { statusText } from "../net/status.mjs";

export const PANEL_TEMPLATE = `modules/${MODULE_ID}/templates/skill-panel.hbs`;
const SKILL_EDIT_TEMPLATE = `modules/${MODULE_ID}/templates/skill-edit.hbs`;

/**
 * fate-core-official's sheet (class `fcoCharacter`, template fate-core-officialSheet.html): each
 * shown skill is a `div[name="skill"][data-skillname]` holding, for owners, FCO's own die icon
 * (`i.fa-dice[data-skillname]`). `fcoCharacter._onRender` gives every such div a click listener
 * (owners only) that rolls the skill natively (`_onSkill_name` -> `rollSkill`) after a 300 ms
 * double-click guard: the second click of a double click (`event.detail > 1`) cancels the roll,
 * and the double click itself shares the skill to chat (its `.mf_draggable` dblclick listener).
 * Hidden skills (`skill.hidden`) are not rendered at all. A stunt with a linked skill has, for
 * owners, a roll button `button[name="stunt_name"][data-linkedskill="<name>_<skill>_<bonus>"]`
 * (`_on_stunt_roll_click` -> `rollStunt`).
 */
const FCO_SKILL_SELECTOR = 'div[name="skill"][data-skillname]';
const FCO_DIE_SELECTOR = "i.fa-dice[data-skillname]";
const FCO_EXTRA_SELECTOR = "[data-extra_id]";
const FCO_STUNT_SELECTOR = 'button[name="stunt_name"][data-linkedskill]';

/** FCO's wait to tell a click from a double click (fcoCharacter `_onSkill_name`), in ms. */
const DOUBLE_CLICK_MS = 300;

/**
 * Render hook of actor sheets (v2 and legacy).
 * @param {import("../net/bridge.mjs").Bridge} bridge
 * @param {object} app
 * @param {HTMLElement|object} html
 * @returns {Promise<void>}
 */
export async function onRenderActorSheet(bridge, app, html) {
  const root = sheetRoot(app, html);
  const actor = sheetActor(app);
  if (!root || !actor || actor.documentName !== "Actor") return;
  if (game.system.id === FCO) injectSkillButtons(bridge, root, actor);
  else await injectPanel(bridge, root, actor);
}

/** Sheets whose root already has the module's click listener (roots survive re-renders). */
const takenOver = new WeakSet();

/**
 * One click, one roll. While the bridge can be reached, the sheet's own die icon becomes the
 * bridge's control and a click anywhere on a skill name goes to the bridge: a capture listener
 * on the sheet's root sees the click before FCO's listener on the skill div and stops it there,
 * so FCO's native roll never runs for that click. While it cannot (unreachable, refused, no GM
 * to relay), the click goes on to FCO, which rolls it natively, and a notice says why the
 * bridge did not resolve it: a bridge that is down never takes a roll away.
 * @param {import("../net/bridge.mjs").Bridge} bridge
 * @param {HTMLElement} root
 * @param {Actor} actor
 */
function injectSkillButtons(bridge, root, actor) {
  if (!actor.isOwner) return;
  for (const el of root.querySelectorAll(FCO_SKILL_SELECTOR)) {
    const skill = el.dataset.skillname;
    const title = game.i18n.format("FATEBRIDGE.Roll.Button", { skill });
    let die = el.querySelector(FCO_DIE_SELECTOR);
    if (!die) {
      die = document.createElement("i");
      die.className = "fas fa-dice";
      die.dataset.skillname = skill;
      el.append(die);
    }
    die.classList.add("fate-bridge-roll", "fate-bridge-roll--inline");
    die.dataset.skill = skill;
    die.title = title;
    die.setAttribute("role", "button");
    die.setAttribute("aria-label", title);
    el.title = title;
  }
  showSheetStatus(bridge, root);
  if (takenOver.has(root)) return;
  takenOver.add(root);
  root.addEventListener("click", (event) => onSkillClick(bridge, event, actor), { capture: true });
}

/** Sheet root -> the timer of a single click waiting to be told from a double click. */
const pendingClicks = new WeakMap();

/**
 * The capture listener: a click on a skill (not on an extra's plug icon) or on a stunt's roll
 * button is the bridge's while the bridge can be reached, and FCO's own otherwise. Like FCO, a
 * skill click waits DOUBLE_CLICK_MS: the second click of a double click cancels it, so a double
 * click starts no roll and FCO's share to chat (its dblclick listener, left alone) runs.
 * @param {import("../net/bridge.mjs").Bridge} bridge
 * @param {MouseEvent} event
 * @param {Actor} actor
 */
function onSkillClick(bridge, event, actor) {
  const stunt = event.target?.closest?.(FCO_STUNT_SELECTOR);
  if (stunt) return onStuntClick(bridge, event, actor, stunt);
  const row = event.target?.closest?.(FCO_SKILL_SELECTOR);
  if (!row || event.target.closest(FCO_EXTRA_SELECTOR)) return;
  const skill = row.dataset.skillname;
  if (!bridge.connected) {
    // FCO's listener rolls it (after its own double-click guard); say why once per click.
    if (event.detail > 1) return;
    showSheetStatus(bridge, row.closest(".fate-bridge-sheet") ?? event.currentTarget);
    ui.notifications.info(game.i18n.format("FATEBRIDGE.Sheet.OfflineClick", { skill, ...offlineWords(bridge) }));
    return;
  }
  event.stopPropagation();
  event.preventDefault();
  const root = event.currentTarget;
  clearTimeout(pendingClicks.get(root));
  pendingClicks.delete(root);
  // The second click of a double click: no roll (the dblclick that follows is FCO's).
  if (event.detail > 1) return;
  // A click without a count (keyboard, a script) cannot become a double click.
  if (event.detail !== 1) return void startAction(bridge, actor, skill);
  pendingClicks.set(root, setTimeout(() => {
    pendingClicks.delete(root);
    startAction(bridge, actor, skill);
  }, DOUBLE_CLICK_MS));
}

/**
 * FCO's stunt roll button: the bridge's action with the stunt's linked skill and action, naming
 * the stunt, when the bridge can roll it (adapter `stuntRoll`); otherwise (offline, a "Special"
 * or missing skill, a defend-only stunt) FCO rolls it.
 * @param {import("../net/bridge.mjs").Bridge} bridge
 * @param {MouseEvent} event
 * @param {Actor} actor
 * @param {HTMLElement} button
 */
function onStuntClick(bridge, event, actor, button) {
  if (!bridge.connected) return;
  const name = stuntNamed(actor, button.dataset.linkedskill);
  const roll = name ? stuntRoll(actor, name, startableActions(bridge.hello)) : null;
  if (!roll) return;
  event.stopPropagation();
  event.preventDefault();
  startAction(bridge, actor, roll.skill, { type: roll.type, stunts: [roll.stunt] });
}

/** The connection's state in words, and why, as the status badge says it. */
function offlineWords(bridge) {
  const { label, detail } = statusText(bridge.status);
  // The cause is a sentence of its own after the line's (it may hold parentheses itself).
  const said = String(detail ?? "").trim();
  const reason = said && said[0].toLocaleUpperCase() + said.slice(1);
  return { state: label.toLowerCase(), detail: reason ? ` ${/[.!?…]$/.test(reason) ? reason : `${reason}.`}` : "" };
}

/**
 * Say on the sheet whether skill clicks reach the bridge: a line above FCO's skill list,
 * shown only while the bridge is not connected.
 * @param {import("../net/bridge.mjs").Bridge} bridge
 * @param {HTMLElement} root
 */
function showSheetStatus(bridge, root) {
  root.classList.add("fate-bridge-sheet");
  const list = root.querySelector(".mfate-skills-list") ?? root.querySelector(FCO_SKILL_SELECTOR)?.parentElement;
  if (!list) return;
  let note = root.querySelector(".fate-bridge-sheet-status");
  if (!note) {
    note = document.createElement("p");
    note.className = "fate-bridge-sheet-status";
    note.setAttribute("role", "status");
    list.before(note);
  }
  const online = bridge.connected;
  note.hidden = online;
  note.textContent = online ? "" : game.i18n.format("FATEBRIDGE.Sheet.Offline", offlineWords(bridge));
}

/**
 * Connection status changed: update the line on every open FCO sheet.
 * @param {import("../net/bridge.mjs").Bridge} bridge
 */
export function refreshSheetStatus(bridge) {
  if (typeof document === "undefined") return;
  for (const root of document.querySelectorAll(".fate-bridge-sheet")) showSheetStatus(bridge, root);
}

/**
 * The panel for systems without a dedicated adapter.
 * @param {import("../net/bridge.mjs").Bridge} bridge
 * @param {HTMLElement} root
 * @param {Actor} actor
 */
export async function injectPanel(bridge, root, actor) {
  const target = root.querySelector(".window-content") ?? root;
  const skills = flagSkills(actor);
  const html = await renderTemplate(PANEL_TEMPLATE, {
    actorId: actor.id,
    canRoll: actor.isOwner,
    canEdit: actor.isOwner,
    skills: Object.entries(skills)
      .sort(([a, ra], [b, rb]) => rb - ra || a.localeCompare(b))
      .map(([name, rating]) => ({
        name,
        rating: signed(rating),
        word: ladderEntry(rating),
        rollTitle: game.i18n.format("FATEBRIDGE.Roll.Button", { skill: name }),
        editTitle: game.i18n.format("FATEBRIDGE.Panel.EditSkill", { skill: name })
      }))
  });
  const holder = document.createElement("div");
  holder.innerHTML = html.trim();
  const panel = holder.firstElementChild;
  target.querySelector(":scope > .fate-bridge-panel")?.remove();
  target.append(panel);
  panel.addEventListener("click", (event) => {
    const button = event.target.closest("[data-fate-bridge-action]");
    if (!button) return;
    event.preventDefault();
    event.stopPropagation();
    const skill = button.dataset.skill;
    if (button.dataset.fateBridgeAction === "roll") startAction(bridge, actor, skill);
    else if (button.dataset.fateBridgeAction === "edit") editSkill(actor, skill, skills[skill]);
    else if (button.dataset.fateBridgeAction === "add") editSkill(actor, null, 0);
  });
}

/**
 * Add, rename, re-rate or remove one flag skill.
 * @param {Actor} actor
 * @param {string|null} skill  null to add a new one
 * @param {number} rating
 */
export async function editSkill(actor, skill, rating) {
  const content = await renderTemplate(SKILL_EDIT_TEMPLATE, {
    name: skill ?? "",
    rating,
    uid: globalThis.crypto.randomUUID().slice(0, 8)
  });
  const read = (_event, button) => {
    const form = button.form;
    return {
      name: toSkillName(form.querySelector('[name="name"]')?.value),
      rating: toRating(form.querySelector('[name="rating"]')?.value)
    };
  };
  const buttons = [{ action: "save", label: "FATEBRIDGE.Panel.Save", icon: "fa-solid fa-check", default: true, callback: read }];
  if (skill !== null) buttons.push({ action: "remove", label: "FATEBRIDGE.Panel.Remove", icon: "fa-solid fa-trash" });
  const title = skill === null
    ? game.i18n.localize("FATEBRIDGE.Panel.AddSkill")
    : game.i18n.format("FATEBRIDGE.Panel.EditSkill", { skill });
  const result = await dialogClass().wait({ window: { title }, classes: ["fate-bridge-dialog"], content, buttons, rejectClose: false });
  if (result === "remove" && skill !== null) {
    await setSkill(actor, skill, null);
    return;
  }
  if (!result || typeof result !== "object") return;
  if (result.name === null || result.rating === null) {
    ui.notifications.warn(game.i18n.localize("FATEBRIDGE.Notify.InvalidSkill"));
    return;
  }
  if (skill !== null && skill !== result.name) await setSkill(actor, skill, null);
  await setSkill(actor, result.name, result.rating);
}
