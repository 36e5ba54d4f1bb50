/**
 * A stand-in for the parts of fate-core-official (FCO) the module meets, written from what FCO
 * 4.7.14.8 (and 4.7.13.6) does and keys on; none of its code.
 *
 * Chat (scripts/FateUtilities.js):
 * - `createChatMessage`: only on the first active GM's client; a message with rolls that is not
 *   whispered, not blind and whose flavor does not start a reroll ("<h1>Reroll"), and whose first
 *   roll is a Fate roll, is appended to the viewed scene's flag `fate-core-official.rolls` (Fate
 *   Utilities then offers buttons that re-total the message and spend fate points).
 * - `renderChatMessageHTML`: for a visible message whose first roll is a Fate roll, appends the
 *   ladder word to the message's `.dice-total` — which Foundry's roll markup has and a card of
 *   custom content has not, so it throws there — and adds its invoke buttons to `.flavor-text`
 *   for the speaker's user or a GM.
 *
 * The actor (scripts/fcoActor.js, `fcoActorClass` below): 4.7.14.1+ overrides
 * `applyActiveEffects` to do nothing (for a Foundry 14 error), so `actor.statuses` stays empty
 * under Foundry 14 while the effects are there; `rationaliseKeys` (run for every actor by the
 * active GM at every world load, and the same re-key in `_preCreate`) re-keys skills, aspects,
 * tracks and stunts to `tob64(name)` with a forced replacement; `rollSkill`, `rollStunt`,
 * `rollTrack` roll natively (recorded in `log.fcoNativeRolls` instead).
 *
 * The character sheet (scripts/fcoCharacter.js `_onRender`, markup in fake-foundry.mjs
 * fcoSheetBody): a form submitted whole on every change and on close (ActorSheetV2 with
 * `submitOnChange`/`submitOnClose`); while a text or number field has focus the sheet is
 * "editing" and holds re-renders until the field loses focus (`renderBanked`). For an owner:
 * a click on a skill name rolls it after 300 ms unless a second click came (its double-click
 * guard, `_onSkill_name`: `event.detail > 1` sets `clickPending`, only `detail == 1` starts the
 * timer); a double click on any `.mf_draggable` (skill, aspect, track, stunt) shares it to chat
 * (`log.fcoShared`); the stunt button rolls `rollStunt(<data-linkedskill before the first "_">)`;
 * a track's roll icon rolls `rollTrack`. A track rename (EditEntityTrack) clears the tracks
 * (`system.tracks: null`) and writes them back with the renamed track, a copy of the old one.
 *
 * Fate Utilities (FateUtilities.js, `renderFateUtilities` below): the GM's fate points are each
 * GM user's flag `fate-core-official.gmfatepoints` (field `gmfp`); situation aspects are the
 * viewed scene's flag `fate-core-official.situation_aspects`, an array of `{name, free_invokes}`
 * (free invokes as the number field's string when edited); each token's `select.skill_select`
 * rolls a skill ("<name> (<rank>)") or a stunt ("stunt_<name>_<skill>_<bonus>") natively on
 * change.
 *
 * A Fate roll, for both chat hooks: a formula starting with "4df" or "4dF", or a dice formula (the roll's
 * `options.fco_formula` when set, else the formula's head before the first "+" or "-") that is
 * one of the world setting `fu-roll-formulae` (comma separated, default "4dF"), compared
 * trimmed and lower-cased.
 */

const SYSTEM = "fate-core-official";
const LADDER = { "-2": "Terrible", "-1": "Poor", 0: "Mediocre", 1: "Average", 2: "Fair", 3: "Good", 4: "Great", 5: "Superb", 6: "Fantastic", 7: "Epic", 8: "Legendary" };
/** FCO's double-click guard on a skill name, in ms. */
export const FCO_CLICK_GUARD_MS = 300;

/** FCO's keys: a name's UTF-8 bytes in base64 without "=" padding. */
export function tob64(text) {
  const bytes = new TextEncoder().encode(String(text));
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replace(/=/g, "");
}

/** An entry of a keyed block by name: the tob64 key first, then any entry of that name. */
function byName(block, name) {
  return block?.[tob64(name)] ?? Object.values(block ?? {}).find((e) => e?.name === name);
}

/**
 * fate-core-official's Actor document class on top of the fake's Actor.
 * @param {typeof Actor} Base
 * @param {number} generation  Foundry's; FCO 4.7.14 (for Foundry 14) drops active effects
 */
export function fcoActorClass(Base, generation) {
  return class FcoActor extends Base {
    applyActiveEffects() {
      // 4.7.14.1+: "This system doesn't use active effects"; 4.7.13 kept Foundry's.
      if (generation < 14) super.applyActiveEffects();
    }
    /** Re-key every block to tob64(name), each block in one forced replacement. */
    async rationaliseKeys() {
      if (this.type !== SYSTEM) return;
      for (const type of ["aspects", "tracks", "stunts", "skills"]) {
        const block = this.system[type] ?? {};
        const output = {};
        for (const entry of Object.values(block)) output[tob64(entry.name)] = entry;
        if (JSON.stringify(Object.keys(block)) === JSON.stringify(Object.keys(output))) continue;
        const change = generation >= 14 ? { [type]: globalThis._replace(output) } : { [`==${type}`]: output };
        await this.update({ system: change });
      }
    }
    /** EditEntityTrack saving a renamed track: clear the tracks, write them back renamed. */
    async renameTrack(oldName, newName) {
      const tracks = structuredClone(this.system.tracks ?? {});
      const key = Object.keys(tracks).find((k) => tracks[k].name === oldName);
      const track = { ...structuredClone(tracks[key]), name: newName };
      delete tracks[key];
      await this.update({ "system.tracks": null });
      tracks[tob64(newName)] = track;
      await this.update({ "system.tracks": tracks });
    }
    async rollSkill(name) {
      const skill = byName(this.system.skills, name);
      if (skill) nativeRoll({ actor: this.id, skill: skill.name });
    }
    async rollStunt(name) {
      const stunt = byName(this.system.stunts, name);
      if (stunt) nativeRoll({ actor: this.id, stunt: stunt.name, skill: stunt.linked_skill, bonus: Number(stunt.bonus) });
    }
    async rollTrack(name) {
      const track = byName(this.system.tracks, name);
      if (track && ["full", "empty"].includes(track.rollable)) nativeRoll({ actor: this.id, track: track.name });
    }
  };
}

let nativeLog = null;
function nativeRoll(entry) {
  nativeLog?.push(entry);
}

/** @returns {string} the dice formula FCO would read off a roll */
function diceFormula(roll) {
  return roll?.options?.fco_formula || String(roll?.formula ?? "").split("+")[0].split("-")[0].trim();
}

/** Whether FCO would treat this roll as one of its Fate rolls. */
export function isFcoFateRoll(roll, game) {
  const formula = String(roll?.formula ?? "");
  if (formula.startsWith("4df") || formula.startsWith("4dF")) return true;
  const wanted = diceFormula(roll).trim().toLowerCase();
  return String(game.settings.get(SYSTEM, "fu-roll-formulae")).split(",").some((f) => f.trim().toLowerCase() === wanted);
}

/**
 * A user's click: a browser gives `detail` (1, then 2 for the second click of a double click);
 * linkedom's `click()` gives none.
 * @param {HTMLElement} el
 * @param {number} [detail]
 */
export function userClick(el, detail = 1) {
  const event = domEvent("click");
  Object.defineProperty(event, "detail", { value: detail });
  el.dispatchEvent(event);
  return event;
}

/** A user's double click: click (detail 1), click (detail 2), dblclick. */
export function userDoubleClick(el) {
  userClick(el, 1);
  userClick(el, 2);
  el.dispatchEvent(domEvent("dblclick"));
}

/** A DOM event of the page's own kind (linkedom's in Node: node-foundry.mjs sets DomEvent). */
export function domEvent(type, init = { bubbles: true, cancelable: true }) {
  const EventClass = globalThis.DomEvent ?? globalThis.Event;
  return new EventClass(type, init);
}

/** FormDataExtended's reading of a form control: numbers as numbers (empty: null). */
function fieldValue(el) {
  if (el.type === "checkbox") return Boolean(el.checked);
  if (el.type === "number") return el.value === "" || el.value === undefined ? null : Number(el.value);
  return el.tagName === "TEXTAREA" ? (el.value ?? el.textContent) : el.value;
}

/**
 * Register the stand-in on the fake Foundry.
 * @param {object} foundry  the fake's handle
 * @param {{formulae?: string}} [options]  the world's `fu-roll-formulae`
 */
export function installFcoStandIn(foundry, { formulae = "4dF" } = {}) {
  const { Hooks, game, log, sheetRenderers } = foundry;
  log.fcoNativeRolls = [];
  log.fcoShared = [];
  log.fcoSubmits = [];
  nativeLog = log.fcoNativeRolls;

  // ---- the character sheet ------------------------------------------------------------
  /** root element -> {actor, editing, renderBanked, clickPending} */
  const sheets = new Map();
  const submit = async (root) => {
    const state = sheets.get(root);
    const data = {};
    for (const el of root.querySelectorAll("input[name], textarea[name], select[name]")) {
      if (el.disabled || !el.name.startsWith("system.")) continue;
      data[el.name] = fieldValue(el);
    }
    log.fcoSubmits.push({ actor: state.actor.id, data: structuredClone(data) });
    await state.actor.update(data);
  };
  const render = (root) => {
    const state = sheets.get(root);
    if (state.editing) state.renderBanked = true;
    else foundry.renderActorSheet(state.actor, { element: root });
  };
  Hooks.on("updateActor", (actor) => {
    for (const [root, state] of sheets) {
      if (!root.isConnected) sheets.delete(root);
      else if (state.actor === actor) render(root);
    }
  });

  sheetRenderers.push((root, actor) => {
    if (!sheets.has(root)) {
      sheets.set(root, { actor, editing: false, renderBanked: false, clickPending: false });
      // ActorSheetV2 with submitOnChange: any field's change submits the whole form.
      root.addEventListener("change", (event) => {
        if (event.target?.name?.startsWith?.("system.")) submit(root);
      });
    }
    const state = sheets.get(root);
    // Double click on a name: FCO shares it to chat (owners or not).
    for (const el of root.querySelectorAll(".mf_draggable")) {
      el.addEventListener("dblclick", async () => {
        const type = el.dataset.mfdtype;
        const name = el.dataset.mfname;
        log.fcoShared.push({ actor: actor.id, type, name });
        await ChatMessage.create({ content: `<strong>Shared from ${actor.name}</strong><br/><hr><strong>Name: </strong> ${name}`, speaker: ChatMessage.getSpeaker({ actor }) });
      });
    }
    if (!actor.isOwner) return;
    for (const el of root.querySelectorAll('div[name="skill"]')) {
      el.addEventListener("click", (event) => {
        if (event.detail > 1) {
          state.clickPending = true;
          return;
        }
        if (event.detail !== 1) return;
        const name = event.target.dataset.skillname ?? el.dataset.skillname;
        setTimeout(() => {
          if (state.clickPending) {
            state.clickPending = false;
            return;
          }
          actor.rollSkill(name);
        }, FCO_CLICK_GUARD_MS);
      });
    }
    for (const el of root.querySelectorAll('button[name="stunt_name"]')) {
      el.addEventListener("click", (event) => actor.rollStunt(event.target.dataset.linkedskill.split("_")[0]));
    }
    for (const el of root.querySelectorAll('i[name="roll_track"]')) {
      el.addEventListener("click", (event) => actor.rollTrack(event.target.dataset.trackname));
    }
    for (const el of root.querySelectorAll('input[type="text"], input[type="number"], textarea')) {
      el.addEventListener("focus", () => {
        state.editing = true;
      });
      el.addEventListener("blur", () => {
        state.editing = false;
        if (state.renderBanked) {
          state.renderBanked = false;
          render(root);
        }
      });
    }
  });

  // ---- Fate Utilities -----------------------------------------------------------------
  const esc = (t) => String(t ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
  let fu = null;
  const aspectsFlag = () => structuredClone(game.scenes.viewed?.getFlag(SYSTEM, "situation_aspects") ?? []);
  const setAspects = (list) => game.scenes.viewed.setFlag(SYSTEM, "situation_aspects", list);
  /**
   * Render (or re-render) Fate Utilities' GM fate points, situation aspects and per-token roll
   * selects, with its listeners, and fire its render hooks.
   */
  function renderFateUtilities() {
    const el = fu ?? document.createElement("section");
    if (!fu) {
      el.id = "FateUtilities";
      el.className = "application fate-utilities";
      (document.getElementById("apps") ?? document.body).append(el);
      fu = el;
    }
    const gm = game.user.isGM;
    const gmInputs = game.users.filter((u) => u.isGM).map((u) => `<label>${esc(u.name)} <input class="fu_notes" name="gmfp" type="number" min="0" data-gmid="${u.id}" value="${u.getFlag(SYSTEM, "gmfatepoints") ?? ""}"${gm ? "" : " disabled"}></label>`).join("");
    const aspects = aspectsFlag().map((a, i) => `<div class="fu-aspect"><input class="fu_aspect_box" name="sit_aspect" type="text" value="${esc(a.name)}" id="${i}_sit_aspect"${gm ? "" : " disabled"}>`
      + `<input type="number" name="free_i" id="${i}_free_invokes" value="${esc(a.free_invokes)}"${gm ? "" : " disabled"}><button type="button" name="del_sit_aspect" id="delete_${i}">×</button></div>`).join("");
    const tokens = game.scenes.viewed?.tokens?.contents ?? [];
    const selects = tokens.filter((t) => t.actor && t.actor.type !== "Thing").map((t) => {
      const sys = t.actor.system ?? {};
      const skills = Object.values(sys.skills ?? {}).map((s) => `<option value="${esc(s.name)} (${esc(s.rank)})">${esc(s.name)} (${esc(s.rank)})</option>`).join("");
      const stunts = Object.values(sys.stunts ?? {}).filter((s) => s.linked_skill !== "None").map((s) => `<option value="stunt_${esc(s.name)}_${esc(s.linked_skill)}_${esc(s.bonus)}">Stunt: ${esc(s.name)} (${esc(s.linked_skill)} +${esc(s.bonus)})</option>`).join("");
      return `<div class="fu-token">${esc(t.name)} <select class="skill_select" id="${t.id}_selectSkill"><option disabled selected>Pick a skill</option>${skills}${stunts}</select></div>`;
    }).join("");
    el.innerHTML = `<header class="window-header"><h1 class="window-title">Fate Utilities</h1></header><section class="window-content">`
      + `<div class="fu-gm-points">${gmInputs}</div>`
      + `<div id="fu_scene_sit_aspects_container"><button type="button" id="add_sit_aspect">Add aspect</button>${aspects}</div>`
      + `<div id="fu_rolls_tab">${selects}</div></section>`;
    el.querySelectorAll('input[name="gmfp"]').forEach((input) => input.addEventListener("change", (event) => {
      const user = game.users.get(event.target.dataset.gmid);
      user.setFlag(SYSTEM, "gmfatepoints", parseInt(event.target.value));
    }));
    el.querySelectorAll('input[name="sit_aspect"]').forEach((input) => input.addEventListener("change", (event) => {
      const index = Number(event.target.id.split("_")[0]);
      const list = aspectsFlag();
      list[index].name = event.target.value;
      setAspects(list);
    }));
    el.querySelectorAll('input[name="free_i"]').forEach((input) => input.addEventListener("change", (event) => {
      const index = Number(event.target.id.split("_")[0]);
      const list = aspectsFlag();
      // Fate Utilities stores the field's value as it is: a string.
      list[index].free_invokes = event.target.value;
      setAspects(list);
    }));
    el.querySelector("#add_sit_aspect").addEventListener("click", () => setAspects([...aspectsFlag(), { name: "", free_invokes: 0 }]));
    el.querySelectorAll('button[name="del_sit_aspect"]').forEach((button) => button.addEventListener("click", (event) => {
      const list = aspectsFlag();
      list.splice(Number(event.target.id.split("_")[1]), 1);
      setAspects(list);
    }));
    el.querySelectorAll("select.skill_select").forEach((select) => select.addEventListener("change", (event) => {
      const token = game.scenes.viewed.tokens.get(event.target.id.split("_")[0]);
      const value = String(event.target.value);
      if (value.startsWith("stunt")) {
        const [, stunt, skill, bonus] = value.split("_");
        nativeRoll({ actor: token.actor.id, token: token.id, fu: true, stunt, skill, bonus: Number(bonus) });
      } else {
        nativeRoll({ actor: token.actor.id, token: token.id, fu: true, skill: value.split("(")[0].trim() });
      }
    }));
    const app = { id: "FateUtilities", element: el, rendered: true };
    app.constructor = { name: "FateUtilities" };
    Hooks.callAll("renderFateUtilities", app, el, {}, {});
    Hooks.callAll("renderApplicationV2", app, el, {}, {});
    return el;
  }
  // FCO re-renders Fate Utilities when users and scenes change.
  Hooks.on("updateScene", () => fu?.isConnected && renderFateUtilities());
  Hooks.on("updateUser", () => fu?.isConnected && renderFateUtilities());

  foundry.fco = {
    renderFateUtilities,
    /** The sheet's state (editing, renderBanked) for a rendered sheet's root. */
    sheetState: (root) => sheets.get(root),
    /** Close a sheet as fcoCharacter.close does: submit the form (submitOnClose), then close. */
    async closeSheet(root) {
      await submit(root);
      sheets.delete(root);
      root.remove();
    }
  };

  game.settings.register(SYSTEM, "fu-roll-formulae", { scope: "world", config: true, type: String, default: formulae });

  Hooks.on("createChatMessage", async (message) => {
    const flavor = String(message.flavor ?? "");
    if (message.rolls.length === 0 || flavor.startsWith("<h1>Reroll") || message.blind || (message.whisper ?? []).length > 0) return;
    if (game.users.contents.find((u) => u.active && u.isGM) !== game.user) return;
    const roll = message.rolls[0];
    if (!isFcoFateRoll(roll, game)) return;
    const scene = game.scenes.viewed;
    const rolls = structuredClone(scene?.getFlag(SYSTEM, "rolls") ?? []);
    rolls.push({ message_id: message.id, speaker: message.speaker?.alias, formula: roll.formula, total: roll.total, dice: roll.dice[0]?.results.map((r) => r.result), user: { name: message.author?.name, _id: message.author?.id } });
    await scene?.setFlag(SYSTEM, "rolls", rolls);
  });

  Hooks.on("renderChatMessageHTML", (message, html) => {
    if (message.rolls.length < 1 || message.isContentVisible === false) return;
    const roll = message.rolls[0];
    if (!isFcoFateRoll(roll, game)) return;
    const word = LADDER[roll.total];
    // FCO does not look before it writes: null here throws, as in FCO on a custom card.
    if (word) html.querySelector(".dice-total").insertAdjacentHTML("beforeend", `<span> (${word})</span>`);
    if (!String(message.flavor ?? "").startsWith("<h1>Reroll") && (message.speaker?.actor === game.user.character?.id || game.user.isGM)) {
      html.querySelector(".flavor-text")?.insertAdjacentHTML("beforeend", '<button type="button" name="fco_chat_roll_button">+2</button>');
    }
  });
}
