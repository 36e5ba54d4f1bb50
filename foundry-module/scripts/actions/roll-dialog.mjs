/**
 * The one compact action dialog: action type, skill, opposition (passive rating or an active
 * opposer), target, target aspect, aspect name, situation, helpers, danger (GM) and description.
 * @module roll-dialog
 */
import { characterActor, characterId, characterName } from "../foundry/characters.mjs";
import { adapterFor } from "../adapters/index.mjs";
import { dialogClass, mayObserve, renderTemplate, sceneActorIds, targetedActorIds } from "../foundry/compat.mjs";
import { actionName, ladderEntry, skillName } from "../foundry/format.mjs";
import { DEFAULT_OPPOSITION, LADDER_MAX, LADDER_MIN, MODULE_ID } from "../protocol.mjs";
import { showRollOdds } from "../cards/odds.mjs";
import { actorStunts, readStunts, stuntOptions, stuntsChosen, syncStunts, tickedNames } from "./stunts.mjs";

const DIALOG_TEMPLATE = `modules/${MODULE_ID}/templates/roll-dialog.hbs`;

/** Which fields each action type shows (the rest stay hidden). */
const FIELDS_FOR = Object.freeze({
  overcome: ["situation"],
  create_advantage: ["aspect", "target", "situation"],
  take_advantage: ["targetAspect"],
  discover: ["situation"],
  attack: ["target", "attackKind"]
});

/**
 * The ladder as select options, best first.
 * @param {number|null} selected
 */
function ladderOptions(selected = DEFAULT_OPPOSITION) {
  const options = [];
  for (let value = LADDER_MAX; value >= LADDER_MIN; value--) {
    options.push({ value, label: ladderEntry(value), selected: value === selected });
  }
  return options;
}

/**
 * What a character may roll: its skills; R13.1, under a ruleset of approaches (Fate
 * Accelerated), the six approaches only, each at the character's rating (Mediocre without one).
 * @param {Actor} actor
 * @param {object|null} rules  the world's rules (`Bridge#rules`)
 * @returns {Record<string, number>}
 */
export function rollableRatings(actor, rules) {
  const skills = adapterFor().skills(actor);
  const approaches = rules?.approaches ?? [];
  if (!approaches.length) return skills;
  return Object.fromEntries(approaches.map((name) => [name, skills[name] ?? 0]));
}

/**
 * The ids of the actions a character may start under the bridge's ruleset, else overcome.
 * @param {object|null} hello
 */
export function startableActions(hello) {
  return hello?.actions?.length ? hello.actions.map((a) => a.id) : ["overcome"];
}

/** The ruleset's actions from hello, else overcome only. */
function actionOptions(hello, selected) {
  return startableActions(hello).map((id) => ({ id, label: actionName(id), selected: id === selected }));
}

/**
 * Other characters the user may pick: targeted tokens first, then the scene's tokens the user
 * sees (a player is not offered a hidden token); without a scene, every actor the user can see.
 * @param {Actor} actor
 */
export function candidates(actor) {
  const targeted = targetedActorIds();
  let ids = [...targeted, ...sceneActorIds()];
  if (ids.length === 0) ids = game.actors.contents.filter((a) => a.visible !== false).map((a) => a.id);
  const seen = new Set([characterId(actor)]);
  const out = [];
  for (const id of ids) {
    if (seen.has(id)) continue;
    seen.add(id);
    const other = characterActor(id);
    if (other && adapterFor().isCharacter(other)) out.push({ actor: other, id, name: characterName(other), targeted: targeted.includes(id) });
  }
  return out;
}

/**
 * Everything the template shows.
 * @param {import("../net/bridge.mjs").Bridge} bridge
 * @param {{actor: Actor, skill?: string, request?: object, state?: object|null}} subject
 */
export function dialogContext(bridge, { actor, skill, request = {}, state = null }) {
  const rules = bridge.rules;
  const chosen = stuntsChosen(bridge.hello?.rules);
  const skills = rollableRatings(actor, rules);
  const others = candidates(actor);
  const firstTarget = others.find((o) => o.targeted)?.id ?? null;
  const type = request.type ?? "overcome";
  const opposerId = request.opposerId ?? (request.opposition === undefined ? firstTarget : null);
  const sorted = Object.entries(skills).sort(([a, ra], [b, rb]) => rb - ra || a.localeCompare(b));
  // R13.8: the stunts of the skill the select shows (the asked one, else its first option).
  const shownSkill = skill && skill in skills ? skill : sorted[0]?.[0] ?? "";
  const actions = actionOptions(bridge.hello, type);
  const shownType = actions.find((a) => a.selected)?.id ?? actions[0]?.id ?? type;
  const ticks = tickedNames(request.stunts);
  return {
    uid: globalThis.crypto.randomUUID().slice(0, 8),
    actorName: characterName(actor),
    isGM: Boolean(game.user.isGM),
    actions,
    skills: sorted.map(([name, rating]) => ({ name, label: `${skillName(name)} ${ladderEntry(rating)}`, selected: name === skill })),
    stunts: stuntOptions(actorStunts(actor), shownSkill, shownType, { ticks, chosen }),
    stuntTicks: JSON.stringify(ticks),
    stuntsHint: game.i18n.localize(chosen ? "FATEBRIDGE.Stunts.HintChosen" : "FATEBRIDGE.Stunts.HintAll"),
    ladder: ladderOptions(opposerId ? null : request.opposition ?? DEFAULT_OPPOSITION),
    opposers: others.map(({ id, name }) => ({ id, name, selected: id === opposerId })),
    targets: others.map(({ id, name }) => ({ id, name, selected: id === (request.targetId ?? firstTarget) })),
    targetAspects: (state?.aspects ?? []).map((a) => ({
      id: a.id,
      label: a.attached_to ? `${a.name} (${a.attached_to.name})` : a.name,
      selected: a.id === request.targetAspectId
    })),
    // A helper's skills are sheet data: a player sees those of characters it may observe only.
    helpers: others.filter(({ actor: o }) => mayObserve(o)).map(({ actor: o, id, name }) => {
      const theirs = rollableRatings(o, rules);
      return {
        id,
        name,
        skills: Object.entries(theirs).sort(([, a], [, b]) => b - a).map(([name, rating]) => ({ name, label: `${skillName(name)} ${ladderEntry(rating)}`, selected: name === skill }))
      };
    }).filter((h) => h.skills.length),
    attackKinds: ["physical", "mental"].map((kind) => ({ kind, label: game.i18n.localize(`FATEBRIDGE.Conflict.Kind.${kind}`), selected: kind === request.attackKind })),
    aspectName: request.aspectName ?? "",
    situation: request.situation ?? "",
    description: request.description ?? ""
  };
}

/** Show only the fields of the selected action type. */
function syncVisibility(form) {
  const type = form.querySelector('[name="type"]')?.value ?? "overcome";
  const shown = new Set(FIELDS_FOR[type] ?? []);
  for (const el of form.querySelectorAll("[data-field]")) el.hidden = !shown.has(el.dataset.field);
}

/**
 * Show the dialog. Resolves to `{skill, ...ActionRequest}`, or null when cancelled or closed.
 * @param {import("../net/bridge.mjs").Bridge} bridge
 * @param {{actor: Actor, skill?: string, request?: object}} subject
 */
export async function askAction(bridge, { actor, skill, request = {} }) {
  const state = await bridge.worldState();
  const context = dialogContext(bridge, { actor, skill, request, state });
  const chosen = stuntsChosen(bridge.hello?.rules);
  const content = await renderTemplate(DIALOG_TEMPLATE, context);
  const result = await dialogClass().wait({
    window: { title: game.i18n.format("FATEBRIDGE.Roll.DialogTitle", { actor: actor.name }) },
    classes: ["fate-bridge-dialog"],
    position: { width: 420 },
    content,
    render: (_event, dialog) => {
      const form = (dialog?.element ?? dialog)?.querySelector?.("form") ?? dialog?.element;
      if (!form) return;
      syncVisibility(form);
      form.querySelector('[name="type"]')?.addEventListener("change", () => syncVisibility(form));
      // R13.8: the stunts that match the skill and action, again whenever either changes.
      const stunts = actorStunts(actor);
      const refreshStunts = (event) => {
        if (!["type", "skill"].includes(event?.target?.name)) return;
        syncStunts(form, stunts, form.querySelector('[name="skill"]')?.value ?? "", form.querySelector('[name="type"]')?.value ?? "overcome", { chosen });
      };
      form.addEventListener("change", refreshStunts);
      // Odds before rolling: asked again whenever the skill, opposition, type or helpers change.
      const refreshOdds = () => showRollOdds(bridge, form.querySelector("[data-odds]"), readForm(form), actor);
      form.addEventListener("change", refreshOdds);
      refreshOdds();
    },
    buttons: [
      { action: "roll", label: "FATEBRIDGE.Roll.Confirm", icon: "fa-solid fa-dice", default: true, callback: (_e, button) => readForm(button.form) },
      { action: "cancel", label: "FATEBRIDGE.Roll.Cancel", icon: "fa-solid fa-xmark" }
    ],
    rejectClose: false
  });
  return result && typeof result === "object" ? result : null;
}

/**
 * @param {HTMLFormElement} form
 * @returns {{skill: string} & import("./start.mjs").ActionRequest}
 */
export function readForm(form) {
  const value = (name) => String(form.querySelector(`[name="${name}"]`)?.value ?? "").trim();
  const checked = (name) => Boolean(form.querySelector(`[name="${name}"]`)?.checked);
  const type = value("type") || "overcome";
  const shown = new Set(FIELDS_FOR[type] ?? []);
  const answer = { type, skill: value("skill") };
  const opposition = value("opposition");
  if (opposition.startsWith("actor:")) answer.opposerId = opposition.slice(6);
  else answer.opposition = Number.isInteger(Number(opposition)) && opposition !== "" ? Number(opposition) : DEFAULT_OPPOSITION;
  if (shown.has("target") && value("target")) answer.targetId = value("target");
  if (shown.has("attackKind") && value("attackKind")) answer.attackKind = value("attackKind");
  if (shown.has("targetAspect") && value("targetAspect")) answer.targetAspectId = value("targetAspect");
  if (shown.has("aspect") && value("aspectName")) answer.aspectName = value("aspectName");
  if (shown.has("situation") && value("situation")) answer.situation = value("situation");
  const helpers = [];
  for (const row of form.querySelectorAll("[data-helper]")) {
    if (!row.querySelector('input[type="checkbox"]')?.checked) continue;
    const helperSkill = String(row.querySelector("select")?.value ?? "").trim();
    helpers.push(helperSkill ? { character_id: row.dataset.helper, skill: helperSkill } : { character_id: row.dataset.helper });
  }
  if (helpers.length) answer.helpers = helpers;
  // R13.8: the stunts the roller ticked (none: an empty list); left out when none matches.
  const stunts = readStunts(form);
  if (stunts) answer.stunts = stunts;
  if (checked("dangerActor") || checked("dangerOpposition")) answer.dangerous = { actor: checked("dangerActor"), opposition: checked("dangerOpposition") };
  if (value("description")) answer.description = value("description");
  return answer;
}
