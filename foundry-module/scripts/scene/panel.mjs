/**
 * The scene panel (ApplicationV2): situation aspects and boosts, the GM's budget, compels, the
 * contest tracker, the challenge board, conflicts (where the ruleset has them) and the scene/session/scenario
 * end. Re-rendered on every `scene.state`. The GM sees controls and set-up forms; a player a
 * read-only scene plus what it may answer or roll.
 * @module scene-panel
 */
import { characterActor } from "../foundry/characters.mjs";
import { adapterFor } from "../adapters/index.mjs";
import { dialogClass, renderTemplate } from "../foundry/compat.mjs";
import { escapeHtml, fieldValue } from "../foundry/forms.mjs";
import { buttonActions, madeOnce } from "../foundry/windows.mjs";
import { ladderEntry, skillName } from "../foundry/format.mjs";
import { exportHistoryAnchors, verifyHistory } from "../history/anchors.mjs";
import { askGive } from "../cards/pickers.mjs";
import { MODULE_ID } from "../protocol.mjs";
import * as act from "./actions.mjs";
import { SIDE_SLOTS, ladder, readZones, scenePanelContext } from "./view.mjs";

export const PANEL_TEMPLATE = `modules/${MODULE_ID}/templates/scene-panel.hbs`;
const PANEL_ID = "fate-bridge-scene-panel";

const checked = (root, name) => Boolean(root.querySelector(`[name="${name}"]`)?.checked);
const notify = (key, data) => ui.notifications.warn(game.i18n.format(key, data ?? {}));

/**
 * Sides from a set-up form: each actor's side select, the side names; empty sides dropped.
 * @param {HTMLElement} form
 * @param {string} prefix  "contest" or "conflict"
 */
function readSides(form, prefix) {
  const sides = Array.from({ length: SIDE_SLOTS }, (_, i) => ({ name: fieldValue(form, `${prefix}Side${i + 1}`) || game.i18n.format("FATEBRIDGE.Setup.SideName", { n: i + 1 }), members: [] }));
  for (const select of form.querySelectorAll(`select[name^="${prefix}Member-"]`)) {
    const slot = Number(select.value);
    if (slot >= 1 && slot <= SIDE_SLOTS) sides[slot - 1].members.push(select.dataset.member);
  }
  return sides.filter((s) => s.members.length);
}

/** Everything a form holds, to put back after a re-render (the GM may be typing). */
function captureForms(root) {
  const saved = { fields: [], open: [] };
  for (const el of root.querySelectorAll("form[data-form] [name]")) {
    // A field drawn from the state (the zone map) is kept only once edited: else the next
    // render draws the state's new value.
    if (el.dataset.drawn !== undefined && el.value === el.dataset.drawn) continue;
    const form = el.closest("form").dataset.form;
    saved.fields.push({ form, name: el.name, index: [...el.closest("form").querySelectorAll(`[name="${el.name}"]`)].indexOf(el), value: el.value, checked: el.checked, type: el.type });
  }
  const extra = [...root.querySelectorAll("form[data-form] [data-task-row]")].length;
  saved.taskRows = extra;
  for (const d of root.querySelectorAll("details[data-key]")) if (d.open) saved.open.push(d.dataset.key);
  return saved;
}

function restoreForms(root, saved) {
  if (!saved) return;
  const tasks = root.querySelector('form[data-form="challenge"] .fate-bridge-setup__tasks');
  while (tasks && tasks.querySelectorAll("[data-task-row]").length < saved.taskRows) addTaskRow(tasks);
  for (const f of saved.fields) {
    const el = root.querySelectorAll(`form[data-form="${f.form}"] [name="${f.name}"]`)[f.index];
    if (!el) continue;
    if (f.type === "checkbox") el.checked = f.checked;
    else if (el.tagName === "SELECT") {
      selectValue(el, f.value);
    } else el.value = f.value;
  }
  for (const key of saved.open) root.querySelector(`details[data-key="${key}"]`)?.setAttribute("open", "");
}

/** Select an option (setting `selected` too, for DOMs whose select.value is read-only). */
function selectValue(select, v) {
  for (const o of select.querySelectorAll("option")) {
    o.toggleAttribute("selected", o.value === v);
    o.selected = o.value === v;
  }
  try {
    select.value = v;
  } catch {
    // the selected attribute already says it
  }
}

/** A copy of the last task row, emptied. */
function addTaskRow(holder) {
  const rows = holder.querySelectorAll("[data-task-row]");
  const row = rows[rows.length - 1].cloneNode(true);
  const name = row.querySelector('[name="taskName"]');
  if (name) name.value = "";
  holder.append(row);
  return row;
}

/** Show environment-only fields only for environment contests. */
function syncContestForm(root) {
  const form = root.querySelector('form[data-form="contest"]');
  if (!form) return;
  const env = fieldValue(form, "contestMode") === "environment";
  for (const el of form.querySelectorAll('[data-when="environment"]')) el.hidden = !env;
}

/** "actorId|skill" options: each actor the user acts for, with its skills, best first. */
function actorSkillOptions(actorIds) {
  const out = [];
  for (const id of actorIds) {
    const actor = characterActor(id);
    if (!actor || !(game.user.isGM || actor.isOwner)) continue;
    const skills = Object.entries(adapterFor().skills(actor)).sort(([a, ra], [b, rb]) => rb - ra || a.localeCompare(b));
    for (const [skill, rating] of skills) out.push({ value: `${id}|${skill}`, label: `${actor.name} \u2014 ${skillName(skill)} ${ladderEntry(rating)}` });
  }
  return out;
}

const option = (o) => `<option value="${escapeHtml(o.value)}"${o.selected ? " selected" : ""}>${escapeHtml(o.label)}</option>`;

/** A small form dialog; resolves to the form element's values via `read`, or null. */
async function formDialog({ title, content, confirm, read }) {
  const result = await dialogClass().wait({
    window: { title },
    classes: ["fate-bridge-dialog"],
    content: `<div class="fate-bridge-form-dialog">${content}</div>`,
    buttons: [
      { action: "ok", label: confirm, icon: "fa-solid fa-check", default: true, callback: (_e, button) => read(button.form) },
      { action: "cancel", label: "FATEBRIDGE.Roll.Cancel", icon: "fa-solid fa-xmark" }
    ],
    rejectClose: false
  });
  return result && typeof result === "object" ? result : null;
}

/** Ask for a create-an-advantage inside a contest (opposition: ladder or an opposer) or a challenge (ladder). */
async function askAdvantage({ title, actorIds, opposers = [], targets = [] }) {
  const i18n = game.i18n;
  const pairs = actorSkillOptions(actorIds);
  if (!pairs.length) {
    notify("FATEBRIDGE.Invoke.NobodyToInvoke");
    return null;
  }
  const opp = ladder().map(option).join("");
  const active = opposers.length ? `<optgroup label="${escapeHtml(i18n.localize("FATEBRIDGE.Roll.Active"))}">${opposers.map((o) => option({ value: `actor:${o.id}`, label: o.name })).join("")}</optgroup>` : "";
  const targetSelect = targets.length
    ? `<label>${escapeHtml(i18n.localize("FATEBRIDGE.Roll.Target"))} <select name="target"><option value="">${escapeHtml(i18n.localize("FATEBRIDGE.Roll.NoTarget"))}</option>${targets.map((t) => option({ value: t.id, label: t.name })).join("")}</select></label>`
    : "";
  const content = `<label>${escapeHtml(i18n.localize("FATEBRIDGE.Contest.WhoAndSkill"))} <select name="actorSkill">${pairs.map(option).join("")}</select></label>`
    + `<label>${escapeHtml(i18n.localize("FATEBRIDGE.Roll.AspectName"))} <input type="text" name="aspectName" maxlength="120" placeholder="${escapeHtml(i18n.localize("FATEBRIDGE.Roll.AspectNamePlaceholder"))}"></label>`
    + `<label>${escapeHtml(i18n.localize("FATEBRIDGE.Roll.Opposition"))} <select name="opposition"><optgroup label="${escapeHtml(i18n.localize("FATEBRIDGE.Roll.Passive"))}">${opp}</optgroup>${active}</select></label>`
    + targetSelect;
  return formDialog({
    title,
    content,
    confirm: "FATEBRIDGE.Roll.Confirm",
    read: (form) => {
      const [actorId, skill] = fieldValue(form, "actorSkill").split("|");
      const opposition = fieldValue(form, "opposition");
      const answer = { actorId, skill, aspectName: fieldValue(form, "aspectName") };
      if (opposition.startsWith("actor:")) answer.opposerId = opposition.slice(6);
      else answer.opposition = Number(opposition);
      if (fieldValue(form, "target")) answer.targetId = fieldValue(form, "target");
      return answer;
    }
  });
}

/**
 * Which situation aspects stay, and a confirmation, before ending the scene/session/scenario.
 * @param {"scene"|"session"|"scenario"} scope
 * @param {object|null} state  the scene as this client has it (SceneState)
 */
export async function askSceneEnd(scope, state) {
  const i18n = game.i18n;
  const situation = (state?.aspects ?? []).filter((a) => a.kind === "situation");
  const list = situation.length
    ? situation.map((a) => `<label class="fate-bridge-form-dialog__check"><input type="checkbox" name="keep" value="${escapeHtml(a.id)}"> ${escapeHtml(a.name)}</label>`).join("")
    : `<p>${escapeHtml(i18n.localize("FATEBRIDGE.Scene.NoAspects"))}</p>`;
  const content = `<p>${escapeHtml(i18n.localize(`FATEBRIDGE.Scene.EndExplain.${scope}`))}</p><fieldset><legend>${escapeHtml(i18n.localize("FATEBRIDGE.Scene.Keep"))}</legend>${list}</fieldset>`;
  return formDialog({
    title: i18n.localize(`FATEBRIDGE.Scene.End.${scope}`),
    content,
    confirm: `FATEBRIDGE.Scene.End.${scope}`,
    read: (form) => ({ keep: [...form.querySelectorAll('[name="keep"]')].filter((c) => c.checked).map((c) => c.value) })
  });
}

/** Rename an aspect and set its free invokes per character. */
async function askEditAspect(aspect) {
  const i18n = game.i18n;
  const rows = game.actors.contents.map((a) => `<label class="fate-bridge-form-dialog__row">${escapeHtml(a.name)} <input type="number" min="0" max="10" name="free" data-holder="${escapeHtml(a.id)}" value="${aspect.free_invokes?.[a.id] ?? 0}"></label>`).join("");
  const content = `<label>${escapeHtml(i18n.localize("FATEBRIDGE.Setup.Name"))} <input type="text" name="name" maxlength="120" value="${escapeHtml(aspect.name)}"></label><fieldset><legend>${escapeHtml(i18n.localize("FATEBRIDGE.Scene.FreeInvokes"))}</legend>${rows}</fieldset>`;
  return formDialog({
    title: i18n.format("FATEBRIDGE.Scene.EditTitle", { name: aspect.name }),
    content,
    confirm: "FATEBRIDGE.Panel.Save",
    read: (form) => {
      const free = {};
      for (const input of form.querySelectorAll('[name="free"]')) {
        const n = Number(input.value);
        if (Number.isInteger(n) && n > 0) free[input.dataset.holder] = n;
      }
      return { name: fieldValue(form, "name"), freeInvokes: free };
    }
  });
}

/** The panel's buttons: `this` is the panel (its `bridge`: this client's Bridge). */
const PANEL_ACTIONS = {
  async verifyHistory() {
    await verifyHistory(this.bridge);
    this.render();
  },
  exportAnchors() {
    exportHistoryAnchors();
  },
  async setBudget(_event, target) {
    const points = Number(fieldValue(target.closest("form"), "budget"));
    if (!Number.isInteger(points) || points < 0) return notify("FATEBRIDGE.Scene.BadBudget");
    // The bridge emits scene.state for the new budget: the panel follows that.
    await act.setGmBudget(this.bridge, points);
  },
  async addAspect(_event, target) {
    const form = target.closest("form");
    const name = fieldValue(form, "aspectName");
    if (!name) return notify("FATEBRIDGE.Scene.NeedName");
    const holder = fieldValue(form, "aspectHolder");
    await act.addAspect(this.bridge, name, holder ? { [holder]: 1 } : {});
  },
  async editAspect(_event, target) {
    const aspect = this.bridge.scene.current?.aspects.find((a) => a.id === target.dataset.aspect);
    if (!aspect) return;
    const answer = await askEditAspect(aspect);
    if (answer) await act.editAspect(this.bridge, aspect.id, answer);
  },
  async giveInvokes(_event, target) {
    const aspect = this.bridge.scene.current?.aspects.find((a) => a.id === target.dataset.aspect);
    if (!aspect) return;
    const recipients = game.actors.contents.map((a) => ({ id: a.id, name: a.name }));
    const answer = await askGive(aspect, target.dataset.from, recipients);
    if (answer) await act.giveInvokes(this.bridge, answer);
  },
  async removeAspect(_event, target) {
    await act.removeAspect(this.bridge, target.dataset.aspect);
  },
  async offerCompel(_event, target) {
    const form = target.closest("form");
    const text = fieldValue(form, "compelText");
    if (!text) return notify("FATEBRIDGE.Scene.NeedCompelText");
    const who = fieldValue(form, "compelCharacter");
    await act.offerCompel(this.bridge, who, text, fieldValue(form, "compelAspect") || null);
  },
  async answerCompel(_event, target) {
    await act.answerCompel(this.bridge, target.dataset.compel, target.dataset.accept === "true");
  },
  async endScene(_event, target) {
    const scope = target.dataset.scope;
    const answer = await askSceneEnd(scope, this.bridge.scene.current);
    if (answer) await act.endScene(this.bridge, scope, answer.keep);
  },
  async startContest(_event, target) {
    const form = target.closest("form");
    const mode = fieldValue(form, "contestMode");
    const sides = readSides(form, "contest");
    const name = fieldValue(form, "contestName");
    if (!name) return notify("FATEBRIDGE.Scene.NeedName");
    if (sides.length < (mode === "direct" ? 2 : 1)) return notify("FATEBRIDGE.Contest.NeedSides");
    const data = await act.startContest(this.bridge, { name, mode, skill: fieldValue(form, "contestSkill"), sides, passiveRating: Number(fieldValue(form, "contestPassive")) });
    if (data) this.clearForm("contest");
  },
  async contestRoll(_event, target) {
    await act.contestRoll(this.bridge, target.dataset.contest, target.dataset.side);
  },
  async contestAdvantage(_event, target) {
    const contest = this.bridge.scene.current?.contests.find((c) => c.id === target.dataset.contest);
    const side = contest?.sides.find((s) => s.id === target.dataset.side);
    if (!side) return;
    const others = contest.sides.filter((s) => s.id !== side.id).flatMap((s) => s.members);
    const answer = await askAdvantage({ title: game.i18n.format("FATEBRIDGE.Contest.AdvantageTitle", { side: side.name }), actorIds: side.members.map((m) => m.id), opposers: others, targets: others });
    if (answer) await act.contestAdvantage(this.bridge, contest.id, side.id, answer);
  },
  async contestConcede(_event, target) {
    await act.concedeContest(this.bridge, target.dataset.contest, target.dataset.side);
  },
  async nameTwist(_event, target) {
    const name = fieldValue(target.closest("form"), "twistName");
    if (!name) return notify("FATEBRIDGE.Scene.NeedName");
    await act.nameTwist(this.bridge, target.dataset.contest, name);
  },
  addTask(_event, target) {
    addTaskRow(target.closest("form").querySelector(".fate-bridge-setup__tasks"));
  },
  async startChallenge(_event, target) {
    const form = target.closest("form");
    const name = fieldValue(form, "challengeName");
    const tasks = [...form.querySelectorAll("[data-task-row]")].map((row) => ({ name: fieldValue(row, "taskName"), skill: fieldValue(row, "taskSkill"), rating: Number(fieldValue(row, "taskRating")) })).filter((t) => t.name);
    if (!name) return notify("FATEBRIDGE.Scene.NeedName");
    if (!tasks.length) return notify("FATEBRIDGE.Challenge.NeedTasks");
    const data = await act.startChallenge(this.bridge, { name, tasks });
    if (data) this.clearForm("challenge");
  },
  async challengeRoll(_event, target) {
    const actorId = fieldValue(target.closest("form"), "roller");
    if (actorId) await act.challengeRoll(this.bridge, target.dataset.challenge, target.dataset.task, actorId);
  },
  async challengeAdvantage(_event, target) {
    const ids = game.actors.contents.filter((a) => game.user.isGM || a.isOwner).map((a) => a.id);
    const answer = await askAdvantage({ title: game.i18n.localize("FATEBRIDGE.Challenge.AdvantageTitle"), actorIds: ids });
    if (answer) await act.challengeAdvantage(this.bridge, target.dataset.challenge, { ...answer, rating: answer.opposition ?? 0 });
  },
  async toggleTrustRatings(_event, target) {
    await act.trustPlayerRatings(this.bridge, target.checked);
  },
  async toggleFullDefense(_event, target) {
    await act.fullDefenseOption(this.bridge, target.checked);
  },
  async toggleCarry(_event, target) {
    await act.carryBoosts(this.bridge, target.dataset.challenge, target.checked);
  },
  async startConflict(_event, target) {
    const form = target.closest("form");
    const sides = readSides(form, "conflict");
    const name = fieldValue(form, "conflictName");
    if (!name) return notify("FATEBRIDGE.Scene.NeedName");
    if (sides.length < 2) return notify("FATEBRIDGE.Contest.NeedSides");
    const zones = readZones(form.querySelector('[name="conflictZones"]')?.value);
    const positions = zones.length ? Object.fromEntries(sides.flatMap((s) => s.members).map((id) => [id, zones[0].name])) : {};
    const first = fieldValue(form, "conflictFirst");
    const firstId = first && sides.some((sd) => sd.members.includes(first)) ? first : null;
    const data = await act.startConflict(this.bridge, { name, kind: fieldValue(form, "conflictKind"), sides, zones, positions, groupNpcs: checked(form, "groupNpcs"), firstId });
    if (data) this.clearForm("conflict");
  },
  async conflictOrder(_event, target) {
    const conflict = this.bridge.scene.current?.conflicts.find((c) => c.id === target.dataset.conflict);
    if (!conflict) return;
    const order = conflict.order.map((t) => t.character.id);
    const i = order.indexOf(target.dataset.character);
    const j = i + Number(target.dataset.dir);
    if (i < 0 || j < 0 || j >= order.length) return;
    [order[i], order[j]] = [order[j], order[i]];
    await act.conflictOrder(this.bridge, conflict.id, order);
  },
  async conflictNext(_event, target) {
    const conflict = this.bridge.scene.current?.conflicts.find((c) => c.id === target.dataset.conflict);
    if (conflict?.order_method !== "elective") return act.conflictNext(this.bridge, target.dataset.conflict);
    // R13.5: whoever acted names who goes next, among the choices the panel offers.
    const nextId = fieldValue(target.closest("form"), "nextId");
    if (!nextId) return notify("FATEBRIDGE.Conflict.NeedNext");
    await act.conflictNext(this.bridge, conflict.id, nextId);
  },
  async conflictFullDefense(_event, target) {
    await act.conflictFullDefense(this.bridge, target.dataset.conflict, target.dataset.character);
  },
  async conflictConcede(_event, target) {
    await act.conflictConcede(this.bridge, target.dataset.conflict, target.dataset.character);
  },
  async conflictMove(_event, target) {
    await act.conflictMove(this.bridge, target.dataset.conflict, target.dataset.character, fieldValue(target.closest("form"), "zone"));
  },
  async conflictZones(_event, target) {
    // R11.3: the GM redraws an open conflict's zones; whoever stood in a zone the new map
    // drops goes to its first zone (as at the start), an empty map clears every position.
    const conflict = this.bridge.scene.current?.conflicts.find((c) => c.id === target.dataset.conflict);
    if (!conflict) return;
    const zones = readZones(target.closest("form")?.querySelector('[name="conflictMap"]')?.value);
    const kept = new Set(zones.map((z) => z.name));
    const positions = {};
    if (zones.length) {
      for (const z of conflict.zones) {
        if (kept.has(z.name)) continue;
        for (const o of z.occupants) positions[o.id] = zones[0].name;
      }
    }
    const data = await act.conflictZones(this.bridge, conflict.id, zones, positions);
    if (data) this.resetForm(`zones-${conflict.id}`);
  },
  async conflictEnd(_event, target) {
    await act.conflictEnd(this.bridge, target.dataset.conflict);
  }
};

let instance = null;

/** The ApplicationV2 subclass, made on first use. */
const scenePanelClass = madeOnce((ApplicationV2) => class FateBridgeScenePanel extends ApplicationV2 {
  /** @param {import("../net/bridge.mjs").Bridge} bridge */
  constructor(bridge, options = {}) {
    super(options);
    this.bridge = bridge;
    // Re-rendered on every scene change while open.
    this.unfollow = bridge.scene.onChange(() => {
      if (this.rendered) this.render();
    });
  }

  static DEFAULT_OPTIONS = {
    id: PANEL_ID,
    classes: ["fate-bridge-scene-panel"],
    tag: "section",
    window: { title: "FATEBRIDGE.Scene.Title", icon: "fa-solid fa-theater-masks", resizable: true },
    position: { width: 460, height: 640 },
    actions: buttonActions(PANEL_ACTIONS)
  };

  async _prepareContext() {
    const { scene, connected, hello, lastVerify } = this.bridge;
    return scenePanelContext(scene.current, { connected, helloRules: hello?.rules ?? null, lastVerify });
  }

  async _renderHTML(context) {
    return renderTemplate(PANEL_TEMPLATE, context);
  }

  _replaceHTML(result, content) {
    const saved = content.firstElementChild ? captureForms(content) : null;
    content.innerHTML = result;
    restoreForms(content, saved);
    syncContestForm(content);
    content.querySelector('[name="contestMode"]')?.addEventListener("change", () => syncContestForm(content));
  }

  /** Empty a set-up form after its procedure started. */
  clearForm(form) {
    const el = this.element?.querySelector(`form[data-form="${form}"]`);
    if (!el) return;
    for (const input of el.querySelectorAll('input[type="text"], textarea')) input.value = "";
    for (const select of el.querySelectorAll("select[data-member]")) {
      selectValue(select, "");
    }
    el.closest("details")?.removeAttribute("open");
  }

  /**
   * Put an edit form's fields back to what the panel drew (`data-drawn`, e.g. a zone map)
   * and close it: the next render draws the state's new value, not what was typed.
   */
  resetForm(form) {
    const el = this.element?.querySelector(`form[data-form="${form}"]`);
    if (!el) return;
    for (const input of el.querySelectorAll("[data-drawn]")) input.value = input.dataset.drawn;
    el.closest("details")?.removeAttribute("open");
  }

  async close(options) {
    if (instance === this) instance = null;
    this.unfollow();
    return super.close(options);
  }
});

/**
 * Open (or bring back) the scene panel; reads the scene first when none is known yet.
 * @param {import("../net/bridge.mjs").Bridge} bridge
 */
export async function openScenePanel(bridge) {
  const Panel = scenePanelClass();
  instance ??= new Panel(bridge);
  await instance.render({ force: true });
  if (!bridge.scene.current) await bridge.readScene();
  return instance;
}
