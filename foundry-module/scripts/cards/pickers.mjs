/**
 * Dialogs asked from a card's buttons: which aspect to invoke and how to pay, and how to absorb
 * a hit.
 * @module pickers
 */
import { ownerIds } from "../adapters/common.mjs";
import { characterActor, characterId, characterName } from "../foundry/characters.mjs";
import { dialogClass, renderTemplate } from "../foundry/compat.mjs";
import { escapeHtml, fieldValue } from "../foundry/forms.mjs";
import { aspectName, entryFreeInvokes } from "../foundry/format.mjs";
import { ODDS_TEMPLATE, invokeOddsContext } from "./odds.mjs";
import { MODULE_ID } from "../protocol.mjs";
import { sceneTokenActors } from "../scene/tokens.mjs";

const INVOKE_TEMPLATE = `modules/${MODULE_ID}/templates/invoke-picker.hbs`;
const ABSORB_TEMPLATE = `modules/${MODULE_ID}/templates/absorb-picker.hbs`;
export const GM = "gm";

/** The value of the checked radio button of a group ("" when none). */
function checkedValue(form, name) {
  return String([...form.querySelectorAll(`input[name="${name}"]`)].find((r) => r.checked)?.value ?? "");
}

/**
 * Who this user may invoke as on one side: the side's members it owns; the GM also for its
 * budget ("gm").
 * @param {import("../protocol.mjs").ActionCard} card
 * @param {"actor"|"opposition"} side
 */
export function invokers(card, side) {
  const i18n = game.i18n;
  const s = card[side];
  const members = [s.leader, ...s.helpers].filter(Boolean);
  const out = [];
  for (const m of members) {
    const actor = characterActor(m.id);
    if (!game.user.isGM && !actor?.isOwner) continue;
    // Every player character on the action has its fate points on the card; NPCs have none
    // (the GM pays their invokes from the scene budget).
    const fp = card.fate_points?.[m.id] ?? (m.id === s.leader?.id ? s.fate_points : null);
    const npc = fp === null || fp === undefined;
    out.push({ id: m.id, name: m.name, label: npc ? i18n.format("FATEBRIDGE.Invoke.AsNpc", { name: m.name, n: card.gm_fate_points }) : fp === null ? m.name : i18n.format("FATEBRIDGE.Invoke.AsWithPoints", { name: m.name, n: fp }) });
  }
  if (game.user.isGM) out.push({ id: GM, name: i18n.localize("FATEBRIDGE.Invoke.Gm"), label: i18n.format("FATEBRIDGE.Invoke.AsGm", { n: card.gm_fate_points }) });
  return out;
}

/**
 * R13.10: who this user may invoke as for an ally: the characters in the scene (the viewed
 * scene's tokens, and a player's own character) it controls that take no part in the action;
 * the GM's are its NPCs, a player's its own.
 * @param {import("../protocol.mjs").ActionCard} card
 * @param {User} [user]
 * @returns {{id: string, name: string, npc: boolean}[]}
 */
export function allyInvokers(card, user = game.user) {
  const onAction = new Set(sideMembers(card).map((c) => c.id));
  const out = new Map();
  for (const actor of [...sceneTokenActors(), ...(user.character ? [user.character] : [])]) {
    const id = characterId(actor);
    if (onAction.has(id) || out.has(id)) continue;
    const npc = !ownerIds(actor).some((owner) => !game.users.get(owner)?.isGM);
    if (user.isGM ? !npc : npc || !actor.testUserPermission(user, "OWNER")) continue;
    out.set(id, { id, name: characterName(actor), npc });
  }
  return [...out.values()];
}

/** Every character on either side of the card. */
function sideMembers(card) {
  return [card.actor, card.opposition].flatMap((s) => [s.leader, ...s.helpers]).filter(Boolean);
}

/** A free invoke holder's name: a character's or the GM's; an id only when nothing names it. */
function holderName(holder, names) {
  if (names.has(holder)) return names.get(holder);
  if (holder === GM) return game.i18n.localize("FATEBRIDGE.Invoke.Gm");
  return characterName(characterActor(holder)) ?? holder;
}

/** "free: Zird the Arcane ×2, GM ×1" */
function freeLabel(aspect, names) {
  const parts = entryFreeInvokes(aspect).map(([holder, n]) => `${holderName(holder, names)} ×${n}`);
  return parts.length ? game.i18n.format("FATEBRIDGE.Invoke.Free", { list: parts.join(", ") }) : "";
}

/**
 * The invoke picker's data. `who`: the invokers offered (default: this user's on that side);
 * `more`: aspects to list besides the card's (an ally's own); `known`: names by character id.
 * @param {import("../protocol.mjs").ActionCard} card
 * @param {"actor"|"opposition"} side
 * @param {{who?: object[], more?: object[], known?: Map<string, string>, hostile?: boolean}} [extra]
 *   `hostile`: whether the bridge allows hostile invokes (hello `hostile_invokes`)
 */
export function invokeContext(card, side, { who = invokers(card, side), more = [], known = new Map(), hostile = false } = {}) {
  const names = new Map([...known, ...who.map((w) => [w.id, w.name]), ...sideMembers(card).map((c) => [c.id, c.name])]);
  const first = who[0]?.id;
  const listed = new Set(card.aspects.map((a) => a.id));
  const pool = [...card.aspects, ...more.filter((a) => !listed.has(a.id))];
  const aspects = pool.map((a) => {
    const where = a.attached_to ? a.attached_to.name : game.i18n.localize(`FATEBRIDGE.Invoke.Kind.${a.kind}`);
    return { id: a.id, kind: a.kind, name: aspectName(a), where, free: freeLabel(a, names), holders: JSON.stringify(a.free_invokes) };
  });
  const effects = ["bonus", "reroll", ...(hostile ? ["hostile"] : [])]
    .filter((e) => e !== "reroll" || card[side].dice)
    .map((id) => ({ id, label: game.i18n.localize(`FATEBRIDGE.Invoke.Effect.${id}`) }));
  return {
    uid: globalThis.crypto.randomUUID().slice(0, 8),
    invokers: who,
    single: who.length === 1 ? who[0] : null,
    aspects,
    effects,
    payments: ["fate_point", "free", "boost"].map((id) => ({ id, label: game.i18n.localize(`FATEBRIDGE.Invoke.Payment.${id}`) })),
    first,
    // The aspects as the card and the world state hold them (their free invokes by holder).
    pool
  };
}

/**
 * The payment that fits: a boost's own free invoke, a held free invoke, else a fate point.
 * @param {{kind: string, free_invokes: Record<string, number>}} aspect
 * @param {string} invoker
 */
export function suggestedPayment(aspect, invoker) {
  const held = aspect?.free_invokes?.[invoker] ?? 0;
  if (held > 0) return aspect.kind === "boost" ? "boost" : "free";
  return "fate_point";
}

/**
 * R13.10: the invoke picker for an ally: its characters not taking part, with their fate
 * points (an NPC's: the GM's budget), and their own aspects besides the card's.
 * @param {import("../net/bridge.mjs").Bridge} bridge
 * @param {import("../protocol.mjs").ActionCard} card
 * @param {"actor"|"opposition"} side
 * @param {{id: string, name: string, npc: boolean}[]} allies
 */
async function allyInvokeContext(bridge, card, side, allies) {
  const state = await bridge.worldState();
  const known = new Map((state?.characters ?? []).map((c) => [c.id, c]));
  const i18n = game.i18n;
  const who = allies.map((a) => ({
    id: a.id,
    name: a.name,
    label: a.npc
      ? i18n.format("FATEBRIDGE.Invoke.AsNpc", { name: a.name, n: state?.gm_fate_points ?? card.gm_fate_points })
      : i18n.format("FATEBRIDGE.Invoke.AsWithPoints", { name: a.name, n: known.get(a.id)?.fate_points ?? 0 })
  }));
  const ids = new Set(allies.map((a) => a.id));
  const more = (state?.aspects ?? []).filter((a) => a.attached_to && ids.has(a.attached_to.id));
  return invokeContext(card, side, { who, more, known: new Map([...known].map(([id, c]) => [id, c.name])), hostile: Boolean(bridge.hello?.hostile_invokes) });
}

/**
 * Ask which aspect to invoke, as whom, paid how, for what. Resolves to the `action.invoke`
 * fields (without action id), or null.
 * @param {import("../net/bridge.mjs").Bridge} bridge
 * @param {import("../protocol.mjs").ActionCard} card
 * @param {"actor"|"opposition"} side
 * @param {{id: string, name: string, npc: boolean}[]|null} [allies]  R13.10: invoke as one of
 *   these, not taking part, for `side`
 */
export async function askInvoke(bridge, card, side, allies = null) {
  const ctx = allies ? await allyInvokeContext(bridge, card, side, allies) : invokeContext(card, side, { hostile: Boolean(bridge.hello?.hostile_invokes) });
  if (!ctx.invokers.length || !ctx.aspects.length) {
    ui.notifications.warn(game.i18n.localize(ctx.aspects.length ? "FATEBRIDGE.Invoke.NobodyToInvoke" : "FATEBRIDGE.Invoke.NoAspects"));
    return null;
  }
  // What a +2 or a reroll would change, from the bridge's exact odds on the card.
  ctx.odds = invokeOddsContext(card, side);
  if (ctx.odds?.reroll) ctx.odds.rerollHtml = await renderTemplate(ODDS_TEMPLATE, ctx.odds.reroll);
  const content = await renderTemplate(INVOKE_TEMPLATE, ctx);
  const suggest = (form) => {
    const aspect = ctx.pool.find((a) => a.id === checkedValue(form, "aspect"));
    const invoker = form.querySelector('[name="invoker"]')?.value;
    const payment = form.querySelector('[name="payment"]');
    if (!payment) return;
    const wanted = suggestedPayment(aspect, invoker);
    for (const option of payment.querySelectorAll("option")) {
      option.toggleAttribute("selected", option.value === wanted);
      option.selected = option.value === wanted;
    }
  };
  const result = await dialogClass().wait({
    window: { title: game.i18n.format("FATEBRIDGE.Invoke.Title", { name: card[side].leader?.name ?? game.i18n.localize("FATEBRIDGE.Card.PassiveOpposition") }) },
    classes: ["fate-bridge-dialog"],
    content,
    render: (_event, dialog) => {
      const form = (dialog?.element ?? dialog)?.querySelector?.("form");
      if (!form) return;
      suggest(form);
      form.addEventListener("change", (e) => { if (e.target.name !== "payment") suggest(form); });
    },
    buttons: [
      {
        action: "invoke", label: "FATEBRIDGE.Invoke.Confirm", icon: "fa-solid fa-bolt", default: true,
        callback: (_e, button) => {
          const form = button.form;
          const value = (n) => String(form.querySelector(`[name="${n}"]`)?.value ?? "");
          const picked = {
            invoker: value("invoker"),
            aspect_id: String(checkedValue(form, "aspect") ?? ""),
            payment: value("payment"),
            effect: value("effect") || "bonus"
          };
          // R13.10: an ally names the side it invokes for, as the GM does.
          if (picked.invoker === GM || allies) picked.side = side;
          return picked;
        }
      },
      { action: "cancel", label: "FATEBRIDGE.Roll.Cancel", icon: "fa-solid fa-xmark" }
    ],
    rejectClose: false
  });
  return result && typeof result === "object" && result.aspect_id ? result : null;
}

/**
 * Whether a stress track may take a hit of this kind (R5.10: the hit's kind, or a track for every
 * kind; never one of kind "other"). The bridge checks it again.
 * @param {{kind: string}} track
 * @param {string|null|undefined} harm  the card's `attack_kind`
 */
function absorbsHit(track, harm) {
  return track.kind === "any" || track.kind === (harm || "physical");
}

/** The per-hit stress rules the picker knows (R13.2); any other (null: records before R13) sums. */
const STRESS_RULES = Object.freeze(["ones", "one_box"]);

/**
 * Whether a consequence slot may take a hit of this kind (R13.3): a slot with `harm` (the Superb
 * extra mild slot) only that kind; the others any hit.
 * @param {{harm?: string|null}} slot
 * @param {string} harm
 */
function slotTakes(slot, harm) {
  return !slot.harm || slot.harm === harm;
}

/**
 * What one hit may mark now (R13.2), as the bridge checks it: which free boxes may be ticked
 * (and why not), what is left after the consequences filled, and what the choice absorbs.
 * - null rule: any boxes, each absorbing its value (records before R13);
 * - "ones": any number of 1-shift boxes; a box worth more only alone;
 * - "one_box": one box; a box alone must be worth at least what is left, and be the smallest
 *   free box that is, and there must be something left.
 * Ticking a box alone replaces the others (`tickBox`), so no box is refused for being second.
 * @param {{rule: string|null, hit: number, boxes: {key: string, value: number}[],
 *   slots: {id: string, severity: number}[], ticked: string[], filled: string[]}} choice
 *   `boxes`: the free boxes on the tracks that take the hit; `slots`: the free slots that take
 *   it; `ticked`: keys of ticked boxes; `filled`: ids of slots given a name
 * @returns {{boxes: Record<string, {allowed: boolean, reason: string|null, left: number, fit: number|null}>,
 *   left: number, absorbed: number, hit: number}}
 */
export function absorbChoices({ rule, hit, boxes, slots, ticked, filled }) {
  const perHit = STRESS_RULES.includes(rule) ? rule : null;
  const fromSlots = slots.filter((s) => filled.includes(s.id)).reduce((n, s) => n + s.severity, 0);
  const left = hit - fromSlots;
  const fits = boxes.map((b) => b.value).filter((v) => left > 0 && v >= left);
  const fit = fits.length ? Math.min(...fits) : null;
  const why = (value) => {
    if (!perHit || (perHit === "ones" && value === 1)) return null;
    if (left <= 0) return "nothing_left";
    if (value < left) return fit === null ? "too_small" : "too_small_fit";
    if (value > fit) return "smaller_fits";
    return null;
  };
  const view = {};
  for (const b of boxes) {
    const reason = why(b.value);
    view[b.key] = { allowed: reason === null, reason, left, fit };
  }
  const marked = boxes.filter((b) => ticked.includes(b.key) && view[b.key].allowed);
  let fromBoxes = marked.reduce((n, b) => n + b.value, 0);
  // One box absorbs up to its value: no more than what is left of the hit.
  if (perHit && marked.length === 1) fromBoxes = Math.min(fromBoxes, Math.max(left, 0));
  return { boxes: view, left, absorbed: fromBoxes + fromSlots, hit };
}

/**
 * The ticked boxes after ticking `key` (R13.2): under "one_box" it replaces the others; under
 * "ones" a box worth more than 1 replaces the others and a 1-shift box replaces a bigger one;
 * without a per-hit rule it is added.
 * @param {string|null} rule
 * @param {{key: string, value: number}[]} boxes
 * @param {string[]} ticked
 * @param {string} key
 * @returns {string[]}
 */
export function tickBox(rule, boxes, ticked, key) {
  const value = (k) => boxes.find((b) => b.key === k)?.value ?? 0;
  const others = ticked.filter((k) => k !== key);
  if (rule === "one_box") return [key];
  if (rule === "ones") return value(key) > 1 ? [key] : [...others.filter((k) => value(k) === 1), key];
  return [...others, key];
}

/**
 * The absorb picker's view: the hit, the per-hit rule, each stress track of the hit's kind by
 * name with each box's value, and the consequence slots that take this kind of hit.
 * @param {import("../protocol.mjs").ActionCard} card
 * @param {{name: string, stress: object[], consequences: object[]}} target  from world.state
 */
export function absorbView(card, target) {
  const i18n = game.i18n;
  const harm = card.attack_kind || "physical";
  const rule = STRESS_RULES.includes(card.stress_rule) ? card.stress_rule : null;
  const tracks = target.stress.filter((t) => absorbsHit(t, harm)).map((t) => ({
    id: t.id,
    name: t.name,
    boxes: t.boxes.map((b, index) => ({ index, key: `${t.id}:${index}`, marked: b.marked, value: b.value, title: i18n.format("FATEBRIDGE.Absorb.Box", { track: t.name, n: index + 1, value: b.value }) }))
  }));
  const slots = target.consequences.filter((s) => slotTakes(s, harm)).map((s) => ({
    id: s.id,
    severity: s.severity,
    name: s.name,
    harm: s.harm ?? null,
    label: s.harm
      ? i18n.format("FATEBRIDGE.Absorb.SlotHarm", { n: s.severity, kind: i18n.localize(`FATEBRIDGE.Harm.${s.harm}`) })
      : i18n.format("FATEBRIDGE.Absorb.Slot", { n: s.severity })
  }));
  const choices = absorbChoices({ rule, hit: card.pending_hit, ...absorbInputs({ tracks, slots }), ticked: [], filled: [] });
  return {
    hit: i18n.format("FATEBRIDGE.Absorb.Hit", { name: target.name, n: card.pending_hit, kind: i18n.localize(`FATEBRIDGE.Harm.${harm}`) }),
    rule,
    ruleHint: i18n.localize(`FATEBRIDGE.Absorb.Rule.${rule ?? "sum"}`),
    pendingHit: card.pending_hit,
    tracks: tracks.map((t) => ({
      ...t,
      boxes: t.boxes.map((b) => {
        const allowed = b.marked || choices.boxes[b.key].allowed;
        return { ...b, baseTitle: b.title, disabled: !allowed || b.marked, title: allowed ? b.title : `${b.title}: ${whyText(choices.boxes[b.key])}` };
      })
    })),
    slots,
    total: totalText(choices)
  };
}

/**
 * The free boxes and free slots of a view, as `absorbChoices` takes them.
 * @param {{tracks: {boxes: {key: string, value: number, marked: boolean}[]}[], slots: {id: string, severity: number, name?: string|null}[]}} view
 */
function absorbInputs({ tracks, slots }) {
  return {
    boxes: tracks.flatMap((t) => t.boxes.filter((b) => !b.marked).map((b) => ({ key: b.key, value: b.value }))),
    slots: slots.filter((s) => !s.name).map((s) => ({ id: s.id, severity: s.severity }))
  };
}

/** Why a box cannot be ticked, in words. */
function whyText(box) {
  if (!box?.reason) return "";
  return game.i18n.format(`FATEBRIDGE.Absorb.Why.${box.reason}`, { left: box.left, fit: box.fit ?? "" });
}

/** The live line: "Absorbs N of M shifts". */
function totalText(choices) {
  return game.i18n.format("FATEBRIDGE.Absorb.Total", { n: choices.absorbed, m: choices.hit });
}

/**
 * Bring the picker's form in line with the rule after a change: a box ticked alone replaces the
 * others (`tickBox`), a box the rule refuses now is disabled (its reason in its title) and
 * unticked, and the line says what the choice absorbs.
 * @param {HTMLFormElement} form
 * @param {{rule: string|null, pendingHit: number, tracks: object[], slots: object[]}} view
 * @param {Event} [event]
 */
function syncAbsorb(form, view, event) {
  const inputs = [...form.querySelectorAll("input[data-track][data-free]")];
  const { boxes, slots } = absorbInputs(view);
  const keyOf = (input) => `${input.dataset.track}:${input.value}`;
  const target = event?.target;
  if (target?.matches?.("input[data-track][data-free]") && target.checked) {
    const keep = new Set(tickBox(view.rule, boxes, inputs.filter((i) => i.checked).map(keyOf), keyOf(target)));
    for (const input of inputs) input.checked = keep.has(keyOf(input));
  }
  const filled = [...form.querySelectorAll("[data-slot]")].filter((i) => String(i.value ?? "").trim()).map((i) => i.dataset.slot);
  const titles = new Map(view.tracks.flatMap((t) => t.boxes.map((b) => [b.key, b.baseTitle ?? b.title])));
  // Which boxes are allowed depends on what the consequences leave, not on the ticks: one pass
  // disables (and unticks) the refused ones, the second counts what the ticks left absorb.
  const choose = () => absorbChoices({ rule: view.rule, hit: view.pendingHit, boxes, slots, ticked: inputs.filter((i) => i.checked).map(keyOf), filled });
  let choices = choose();
  for (const input of inputs) {
    input.disabled = !choices.boxes[keyOf(input)]?.allowed;
    if (input.disabled) input.checked = false;
  }
  choices = choose();
  for (const input of inputs) {
    const box = choices.boxes[keyOf(input)];
    const base = titles.get(keyOf(input)) ?? "";
    const label = input.closest("label");
    if (label) label.title = box?.allowed ? base : `${base}: ${whyText(box)}`;
  }
  const line = form.querySelector("[data-absorb-total]");
  if (line) {
    line.textContent = totalText(choices);
    line.dataset.enough = String(choices.absorbed >= choices.hit);
  }
  return choices;
}

/**
 * Ask how the target absorbs a hit: boxes on stress tracks of the hit's kind and consequences,
 * as the card's per-hit rule allows (R13.2, R13.3).
 * @param {import("../net/bridge.mjs").Bridge} bridge
 * @param {import("../protocol.mjs").ActionCard} card
 * @returns {Promise<{stress: {track: string, boxes: number[]}[], consequences: Record<string, string>}|null>}
 */
export async function askAbsorb(bridge, card) {
  const state = await bridge.worldState();
  const target = state?.characters.find((c) => c.id === card.target?.id);
  if (!target) return null;
  const view = absorbView(card, target);
  const content = await renderTemplate(ABSORB_TEMPLATE, {
    uid: globalThis.crypto.randomUUID().slice(0, 8),
    ...view
  });
  const result = await dialogClass().wait({
    window: { title: game.i18n.localize("FATEBRIDGE.Absorb.Title") },
    classes: ["fate-bridge-dialog"],
    content,
    render: (_event, dialog) => {
      const form = (dialog?.element ?? dialog)?.querySelector?.("form");
      if (!form) return;
      const sync = (event) => syncAbsorb(form, view, event);
      form.addEventListener("change", sync);
      form.addEventListener("input", sync);
      sync();
    },
    buttons: [
      {
        action: "absorb", label: "FATEBRIDGE.Absorb.Confirm", default: true,
        callback: (_e, button) => {
          const form = button.form;
          const byTrack = new Map();
          for (const box of form.querySelectorAll("input[data-track]")) {
            if (!box.checked || box.disabled) continue;
            const boxes = byTrack.get(box.dataset.track) ?? [];
            boxes.push(Number(box.value));
            byTrack.set(box.dataset.track, boxes);
          }
          const stress = [...byTrack].map(([track, boxes]) => ({ track, boxes }));
          const consequences = {};
          for (const input of form.querySelectorAll("[data-slot]")) {
            const name = String(input.value ?? "").trim();
            if (name) consequences[input.dataset.slot] = name;
          }
          return { stress, consequences };
        }
      },
      { action: "cancel", label: "FATEBRIDGE.Roll.Cancel", icon: "fa-solid fa-xmark" }
    ],
    rejectClose: false
  });
  return result && typeof result === "object" ? result : null;
}

const options = (list) => list.map((o) => `<option value="${escapeHtml(o.id)}">${escapeHtml(o.label)}</option>`).join("");

/** Action types whose fumble lets the GM give a free invoke to someone else (R5.2, R5.3). */
const GIFT_TYPES = Object.freeze(["create_advantage", "take_advantage"]);

/**
 * Whether the GM may still give the fumble's free invoke on this card: a fumbled advantage,
 * decided far enough (choosing, costing or resolved), no gift given yet, and an aspect to give on.
 * @param {import("../protocol.mjs").ActionCard} card
 * @param {User} [user]
 */
export function canGift(card, user = game.user) {
  return Boolean(user?.isGM
    && GIFT_TYPES.includes(card?.action_type)
    && card.outcome === "fumble"
    && ["choosing", "costing", "resolved"].includes(card.state)
    && !card.effects?.some((e) => e.kind === "free_invokes" && e.text === "gift")
    && card.aspects?.length);
}

/**
 * The gift picker's choices: the card's aspects (the newest situation aspect first) and who may
 * hold the invoke: anyone but the acting side (the opposition's leader first), and the GM.
 * @param {import("../protocol.mjs").ActionCard} card
 */
export function giftContext(card) {
  const actorSide = new Set([card.actor.leader, ...card.actor.helpers].filter(Boolean).map((c) => c.id));
  const holders = [];
  const seen = new Set();
  const add = (id, name) => {
    if (!id || actorSide.has(id) || seen.has(id)) return;
    seen.add(id);
    holders.push({ id, label: name });
  };
  for (const c of [card.opposition.leader, ...card.opposition.helpers, card.target]) if (c) add(c.id, c.name);
  for (const a of game.actors.contents) add(a.id, a.name);
  add(GM, game.i18n.localize("FATEBRIDGE.Invoke.Gm"));
  const rank = { situation: 0, boost: 1, consequence: 2, character: 3 };
  const aspects = [...card.aspects].map((a, i) => ({ a, i }))
    .sort((x, y) => (rank[x.a.kind] ?? 9) - (rank[y.a.kind] ?? 9) || y.i - x.i)
    .map(({ a }) => ({ id: a.id, label: a.attached_to ? `${aspectName(a)} (${a.attached_to.name})` : aspectName(a) }));
  return { aspects, holders };
}

/**
 * GM: which aspect the fumble's free invoke is on, and who gets it. Resolves to the
 * `action.gift` fields (without action id), or null.
 * @param {import("../protocol.mjs").ActionCard} card
 */
export async function askGift(card) {
  const i18n = game.i18n;
  const ctx = giftContext(card);
  const content = `<div class="fate-bridge-form-dialog"><p>${escapeHtml(i18n.localize("FATEBRIDGE.Gift.Explain"))}</p>`
    + `<label>${escapeHtml(i18n.localize("FATEBRIDGE.Gift.Aspect"))} <select name="aspect">${options(ctx.aspects)}</select></label>`
    + `<label>${escapeHtml(i18n.localize("FATEBRIDGE.Gift.Holder"))} <select name="holder">${options(ctx.holders)}</select></label></div>`;
  const result = await dialogClass().wait({
    window: { title: i18n.localize("FATEBRIDGE.Gift.Title") },
    classes: ["fate-bridge-dialog"],
    content,
    buttons: [
      {
        action: "gift", label: "FATEBRIDGE.Gift.Confirm", icon: "fa-solid fa-gift", default: true,
        callback: (_e, button) => {
          const value = (n) => fieldValue(button.form, n);
          return { aspect_id: value("aspect"), holder: value("holder") };
        }
      },
      { action: "cancel", label: "FATEBRIDGE.Roll.Cancel", icon: "fa-solid fa-xmark" }
    ],
    rejectClose: false
  });
  return result && typeof result === "object" && result.aspect_id && result.holder ? result : null;
}

/**
 * Who may give free invokes on an aspect (R10.2): each holder with invokes left whom this user
 * controls (the GM: every character holder; a player: the actors it owns). The GM's own
 * invokes ("gm") are not a character's and cannot be handed on.
 * @param {{free_invokes: Record<string, number>}} aspect
 * @param {User} [user]
 * @returns {{id: string, count: number}[]}
 */
export function givers(aspect, user = game.user) {
  return Object.entries(aspect?.free_invokes ?? {})
    .filter(([holder, n]) => n > 0 && holder !== GM)
    .filter(([holder]) => user.isGM || Boolean(characterActor(holder)?.testUserPermission(user, "OWNER")))
    .map(([id, count]) => ({ id, count }));
}

/**
 * Ask to whom, and how many, free invokes on an aspect go (R10.2). Resolves to the
 * `aspect.give` fields (without request id), or null.
 * @param {{id: string, name: string, free_invokes: Record<string, number>}} aspect
 * @param {string} fromId  the holder giving them
 * @param {{id: string, name: string}[]} recipients  characters that may receive them
 */
export async function askGive(aspect, fromId, recipients) {
  const i18n = game.i18n;
  const held = aspect.free_invokes?.[fromId] ?? 0;
  const fromName = characterName(characterActor(fromId)) ?? fromId;
  const to = recipients.filter((r) => r.id !== fromId && r.id !== GM).map((r) => ({ id: r.id, label: r.name }));
  if (!held || !to.length) return null;
  const counts = Array.from({ length: Math.min(held, 10) }, (_, i) => ({ id: String(i + 1), label: String(i + 1) }));
  const content = `<div class="fate-bridge-form-dialog"><p>${escapeHtml(i18n.format("FATEBRIDGE.Give.Explain", { name: fromName, aspect: aspect.name, n: held }))}</p>`
    + `<label>${escapeHtml(i18n.localize("FATEBRIDGE.Give.To"))} <select name="to">${options(to)}</select></label>`
    + `<label>${escapeHtml(i18n.localize("FATEBRIDGE.Give.Count"))} <select name="count">${options(counts)}</select></label></div>`;
  const result = await dialogClass().wait({
    window: { title: i18n.format("FATEBRIDGE.Give.Title", { aspect: aspect.name }) },
    classes: ["fate-bridge-dialog"],
    content,
    buttons: [
      {
        action: "give", label: "FATEBRIDGE.Give.Confirm", icon: "fa-solid fa-hand-holding-heart", default: true,
        callback: (_e, button) => ({ aspect_id: aspect.id, from_id: fromId, to_id: fieldValue(button.form, "to"), count: Number(fieldValue(button.form, "count")) || 1 })
      },
      { action: "cancel", label: "FATEBRIDGE.Roll.Cancel", icon: "fa-solid fa-xmark" }
    ],
    rejectClose: false
  });
  return result && typeof result === "object" && result.to_id ? result : null;
}

/** Card states in which an action takes no more presses. */
const CLOSED_STATES = Object.freeze(["resolved", "cancelled"]);

/**
 * Whether this user may call the card's action off: the GM, while it is open.
 * @param {import("../protocol.mjs").ActionCard} card
 * @param {User} [user]
 */
export function canCancel(card, user = game.user) {
  return Boolean(user?.isGM && card?.kind === "action" && !CLOSED_STATES.includes(card.state));
}

/**
 * GM: confirm calling the action off, with an optional reason shown on the card. Resolves to
 * the `action.cancel` fields (without action id), or null when the GM keeps the action.
 * @param {import("../protocol.mjs").ActionCard} card
 */
export async function askCancel(card) {
  const i18n = game.i18n;
  const content = `<div class="fate-bridge-form-dialog"><p>${escapeHtml(i18n.format("FATEBRIDGE.Cancel.Explain", { action: card.action_label }))}</p>`
    + `<label>${escapeHtml(i18n.localize("FATEBRIDGE.Cancel.Reason"))} <input type="text" name="reason" maxlength="2000"></label></div>`;
  const result = await dialogClass().wait({
    window: { title: i18n.localize("FATEBRIDGE.Cancel.Title") },
    classes: ["fate-bridge-dialog"],
    content,
    buttons: [
      {
        action: "cancelAction", label: "FATEBRIDGE.Cancel.Confirm", icon: "fa-solid fa-ban", default: true,
        callback: (_e, button) => ({ reason: String(button.form?.querySelector('[name="reason"]')?.value ?? "").trim() })
      },
      { action: "keep", label: "FATEBRIDGE.Cancel.Keep", icon: "fa-solid fa-xmark" }
    ],
    rejectClose: false
  });
  return result && typeof result === "object" ? result : null;
}
