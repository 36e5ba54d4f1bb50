/**
 * Asks for the passive opposition (and an optional description) before an overcome roll.
 * @module roll-dialog
 */
import { dialogClass, renderTemplate } from "./compat.mjs";
import { ladderEntry, signed } from "./format.mjs";
import { DEFAULT_OPPOSITION, LADDER_MAX, LADDER_MIN, MODULE_ID } from "./protocol.mjs";

export const DIALOG_TEMPLATE = `modules/${MODULE_ID}/templates/roll-dialog.hbs`;

/**
 * The ladder as select options, best first.
 * @param {number} selected
 */
export function ladderOptions(selected = DEFAULT_OPPOSITION) {
  const options = [];
  for (let value = LADDER_MAX; value >= LADDER_MIN; value--) {
    options.push({ value, label: ladderEntry(value), selected: value === selected });
  }
  return options;
}

/**
 * @typedef {object} RollAnswer
 * @property {number} opposition
 * @property {string} [description]
 */

/**
 * Show the dialog. Resolves to the answer, or null when the user cancels or closes it.
 * @param {{actorName: string, skill: string, rating: number}} subject
 * @returns {Promise<RollAnswer|null>}
 */
export async function askOpposition({ actorName, skill, rating }) {
  const content = await renderTemplate(DIALOG_TEMPLATE, {
    actorName,
    skill,
    ratingEntry: ladderEntry(rating),
    ladder: ladderOptions(),
    uid: globalThis.crypto.randomUUID().slice(0, 8)
  });
  const result = await dialogClass().wait({
    window: { title: game.i18n.format("FATEBRIDGE.Roll.DialogTitle", { skill, rating: signed(rating) }) },
    classes: ["fate-bridge-dialog"],
    content,
    buttons: [
      {
        action: "roll",
        label: "FATEBRIDGE.Roll.Confirm",
        icon: "fa-solid fa-dice",
        default: true,
        callback: (_event, button) => readForm(button.form)
      },
      { action: "cancel", label: "FATEBRIDGE.Roll.Cancel", icon: "fa-solid fa-xmark" }
    ],
    rejectClose: false
  });
  return result && typeof result === "object" ? result : null;
}

/**
 * @param {HTMLFormElement} form
 * @returns {RollAnswer}
 */
function readForm(form) {
  const opposition = Number(form.querySelector('[name="opposition"]')?.value);
  const description = String(form.querySelector('[name="description"]')?.value ?? "").trim();
  /** @type {RollAnswer} */
  const answer = { opposition: Number.isInteger(opposition) ? opposition : DEFAULT_OPPOSITION };
  if (description) answer.description = description;
  return answer;
}
