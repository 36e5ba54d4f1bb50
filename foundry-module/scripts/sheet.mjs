/**
 * Roll controls on actor sheets: a die button beside each skill of a fate-core-official sheet, or
 * a compact "Fate Bridge" panel (skills kept in module flags) on any other system's sheet.
 * @module sheet
 */
import { startAction } from "./actions.mjs";
import { SYSTEM_ID as FCO } from "./adapters/fate-core-official.mjs";
import { setSkill, skills as flagSkills } from "./adapters/generic.mjs";
import { toRating, toSkillName } from "./adapters/common.mjs";
import { dialogClass, renderTemplate, sheetActor, sheetRoot } from "./compat.mjs";
import { ladderEntry, signed } from "./format.mjs";
import { MODULE_ID } from "./protocol.mjs";

export const PANEL_TEMPLATE = `modules/${MODULE_ID}/templates/skill-panel.hbs`;
export const SKILL_EDIT_TEMPLATE = `modules/${MODULE_ID}/templates/skill-edit.hbs`;

/** The skill name elements of fate-core-official's character sheet (class `fcoCharacter`). */
const FCO_SKILL_SELECTOR = ".mfate-skills-list__skill-name[data-skillname]";

/**
 * Render hook of actor sheets (v2 and legacy).
 * @param {object} app
 * @param {HTMLElement|object} html
 * @returns {Promise<void>}
 */
export async function onRenderActorSheet(app, html) {
  const root = sheetRoot(app, html);
  const actor = sheetActor(app);
  if (!root || !actor || actor.documentName !== "Actor") return;
  if (game.system.id === FCO) injectSkillButtons(root, actor);
  else await injectPanel(root, actor);
}

/**
 * A die button beside each skill the user may roll.
 * @param {HTMLElement} root
 * @param {Actor} actor
 */
export function injectSkillButtons(root, actor) {
  if (!actor.isOwner) return;
  for (const el of root.querySelectorAll(FCO_SKILL_SELECTOR)) {
    if (el.querySelector(".fate-bridge-roll")) continue;
    const skill = el.dataset.skillname;
    el.append(rollButton(actor, skill));
  }
}

/**
 * @param {Actor} actor
 * @param {string} skill
 */
function rollButton(actor, skill) {
  const button = document.createElement("button");
  button.type = "button";
  button.className = "fate-bridge-roll fate-bridge-roll--inline";
  button.dataset.skill = skill;
  const title = game.i18n.format("FATEBRIDGE.Roll.Button", { skill });
  button.title = title;
  button.setAttribute("aria-label", title);
  button.innerHTML = '<i class="fa-solid fa-dice" aria-hidden="true"></i>';
  button.addEventListener("click", (event) => {
    event.preventDefault();
    event.stopPropagation();
    startAction(actor, skill);
  });
  return button;
}

/**
 * The panel for systems without a dedicated adapter.
 * @param {HTMLElement} root
 * @param {Actor} actor
 */
export async function injectPanel(root, actor) {
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
    if (button.dataset.fateBridgeAction === "roll") startAction(actor, skill);
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
