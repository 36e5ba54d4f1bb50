/**
 * Stunts a roll names (R13.8): the roller's stunts that match the skill and the action, a list
 * of checkboxes in the roll dialog and under a card's oppose/defend prompt. Under the SRD
 * rulesets (hello `rules.stunts_chosen`) none is ticked until the roller says it applies; under
 * Unwritten every matching stunt is ticked, as the bridge counted them before.
 * @module stunts
 */
import { adapterFor } from "../adapters/index.mjs";
import { signed } from "../foundry/format.mjs";

/**
 * @typedef {{name: string, skill: string, bonus: number, actions: string[]}} Stunt  ActorData's
 */

/**
 * @typedef {object} StuntOption  One checkbox of the list.
 * @property {string} name
 * @property {string} label     "Name (+2)"
 * @property {boolean} checked
 */

/**
 * Whether the roll's stunts are the roller's choice (hello `rules.stunts_chosen`); false under
 * Unwritten and with a bridge that does not say.
 * @param {object|null|undefined} rules  hello's RulesetInfo
 */
export function stuntsChosen(rules) {
  return Boolean(rules?.stunts_chosen);
}

/**
 * The stunts that may apply to a roll of `skill` for `action` (R13.8): the stunt's skill, and its
 * actions (none listed: any action). One per name, in the sheet's order.
 * @param {Stunt[]|null|undefined} stunts
 * @param {string} skill
 * @param {string} action  overcome, create_advantage, ..., or "defend"/"oppose" for an opposer
 * @returns {Stunt[]}
 */
export function matchingStunts(stunts, skill, action) {
  const seen = new Set();
  return (stunts ?? []).filter((s) => {
    if (!s?.name || seen.has(s.name) || s.skill !== skill) return false;
    if (s.actions?.length && !s.actions.includes(action)) return false;
    seen.add(s.name);
    return true;
  });
}

/**
 * The checkboxes for a roll: the matching stunts, each ticked as `ticks` says for those the
 * roller has seen, the others ticked by default only where the roller does not choose them
 * (Unwritten).
 * @param {Stunt[]|null|undefined} stunts
 * @param {string} skill
 * @param {string} action
 * @param {{ticks?: Record<string, boolean>, chosen?: boolean}} [options]  `ticks`: stunt name ->
 *   ticked, for the stunts the roller has seen or a roll button named; `chosen`: hello's
 *   `stunts_chosen`
 * @returns {StuntOption[]}
 */
export function stuntOptions(stunts, skill, action, { ticks = {}, chosen = false } = {}) {
  return matchingStunts(stunts, skill, action).map((s) => ({
    name: s.name,
    label: s.bonus ? `${s.name} (${signed(s.bonus)})` : s.name,
    checked: Object.hasOwn(ticks, s.name) ? Boolean(ticks[s.name]) : !chosen
  }));
}

/**
 * Ticks for the names a roll button (FCO's stunt roll) or macro gave: each ticked.
 * @param {string[]|undefined} names
 * @returns {Record<string, boolean>}
 */
export function tickedNames(names) {
  return Object.fromEntries((names ?? []).map((n) => [n, true]));
}

/**
 * An actor's stunts as the bridge knows them (the adapter's ActorData).
 * @param {Actor|null|undefined} actor
 * @returns {Stunt[]}
 */
export function actorStunts(actor) {
  if (!actor) return [];
  try {
    return adapterFor().toActorData(actor).stunts ?? [];
  } catch {
    return [];
  }
}

/**
 * The opposition's action for an opposer's stunts: "defend" against an attack, else "oppose".
 * @param {string|null|undefined} actionType  the card's `action_type`
 */
export function opposeAction(actionType) {
  return actionType === "attack" ? "defend" : "oppose";
}

/**
 * Whether a checkbox is ticked: its checkedness, else its `checked` attribute (what a box
 * rendered from the template starts as, in a DOM that does not reflect it).
 * @param {HTMLInputElement} input
 */
function isTicked(input) {
  return Boolean(input.checked ?? input.hasAttribute("checked"));
}

/**
 * The ticked stunt names of a list (`[data-stunts]`), none ticked being an empty list; undefined
 * when there is no list or no stunt matches (then the roll names none either way).
 * @param {ParentNode} root
 * @returns {string[]|undefined}
 */
export function readStunts(root) {
  const list = root?.querySelector?.("[data-stunts]");
  if (!list || !list.querySelector("input[data-stunt]")) return undefined;
  return [...list.querySelectorAll("input[data-stunt]")].filter(isTicked).map((i) => i.value);
}

/**
 * Rebuild a list (`[data-stunts]`) for a new skill or action: the stunts that match now, each
 * tick the roller gave or took kept (also for a stunt shown again later: `data-ticks`), the list
 * hidden when nothing matches.
 * @param {ParentNode} root
 * @param {Stunt[]} stunts
 * @param {string} skill
 * @param {string} action
 * @param {{chosen?: boolean}} [options]
 * @returns {StuntOption[]}
 */
export function syncStunts(root, stunts, skill, action, { chosen = false } = {}) {
  const list = root?.querySelector?.("[data-stunts]");
  const items = list?.querySelector("[data-stunt-items]");
  if (!list || !items) return [];
  const ticks = JSON.parse(list.dataset.ticks || "{}");
  for (const input of items.querySelectorAll("input[data-stunt]")) ticks[input.value] = isTicked(input);
  list.dataset.ticks = JSON.stringify(ticks);
  const options = stuntOptions(stunts, skill, action, { ticks, chosen });
  const doc = list.ownerDocument;
  items.replaceChildren(...options.map((o) => {
    const label = doc.createElement("label");
    label.className = "fate-bridge-stunts__item";
    const input = doc.createElement("input");
    input.type = "checkbox";
    input.name = "stunt";
    input.value = o.name;
    input.dataset.stunt = "";
    input.checked = o.checked;
    label.append(input, doc.createTextNode(` ${o.label}`));
    return label;
  }));
  list.hidden = options.length === 0;
  return options;
}
