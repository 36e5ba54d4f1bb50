/**
 * Dialogs asked from a card's buttons: which aspect to invoke and how to pay, and how to absorb
 * a hit.
 * @module pickers
 */
import { dialogClass, renderTemplate } from "./compat.mjs";
import { worldState } from "./intents.mjs";
import { MODULE_ID } from "./protocol.mjs";
import { runtime } from "./runtime.mjs";

export const INVOKE_TEMPLATE = `modules/${MODULE_ID}/templates/invoke-picker.hbs`;
export const ABSORB_TEMPLATE = `modules/${MODULE_ID}/templates/absorb-picker.hbs`;
export const GM = "gm";

/** The value of the checked radio button of a group ("" when none). */
function checkedValue(form, name) {
  return String([...form.querySelectorAll(`input[name="${name}"]`)].find((r) => r.checked)?.value ?? "");
}

/**
 * Who this user may invoke as on one side: the side's members it owns; the GM also for its
 * budget ("gm").
 * @param {import("./protocol.mjs").ActionCard} card
 * @param {"actor"|"opposition"} side
 */
export function invokers(card, side) {
  const i18n = game.i18n;
  const s = card[side];
  const members = [s.leader, ...s.helpers].filter(Boolean);
  const out = [];
  for (const m of members) {
    const actor = game.actors.get(m.id);
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

/** "2 free for Zird, 1 for GM" */
function freeLabel(aspect, names) {
  const parts = Object.entries(aspect.free_invokes).filter(([, n]) => n > 0).map(([holder, n]) => `${names.get(holder) ?? holder} ×${n}`);
  return parts.length ? game.i18n.format("FATEBRIDGE.Invoke.Free", { list: parts.join(", ") }) : "";
}

/**
 * The invoke picker's data.
 * @param {import("./protocol.mjs").ActionCard} card
 * @param {"actor"|"opposition"} side
 */
export function invokeContext(card, side) {
  const who = invokers(card, side);
  const names = new Map([...who.map((w) => [w.id, w.name]), ...[card.actor, card.opposition].flatMap((s) => [s.leader, ...s.helpers]).filter(Boolean).map((c) => [c.id, c.name])]);
  const first = who[0]?.id;
  const aspects = card.aspects.map((a) => {
    const where = a.attached_to ? a.attached_to.name : game.i18n.localize(`FATEBRIDGE.Invoke.Kind.${a.kind}`);
    return { id: a.id, kind: a.kind, name: a.name, where, free: freeLabel(a, names), holders: JSON.stringify(a.free_invokes) };
  });
  const effects = ["bonus", "reroll", ...(runtime.hello?.hostile_invokes ? ["hostile"] : [])]
    .filter((e) => e !== "reroll" || card[side].dice)
    .map((id) => ({ id, label: game.i18n.localize(`FATEBRIDGE.Invoke.Effect.${id}`) }));
  return {
    uid: globalThis.crypto.randomUUID().slice(0, 8),
    invokers: who,
    single: who.length === 1 ? who[0] : null,
    aspects,
    effects,
    payments: ["fate_point", "free", "boost"].map((id) => ({ id, label: game.i18n.localize(`FATEBRIDGE.Invoke.Payment.${id}`) })),
    first
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
 * Ask which aspect to invoke, as whom, paid how, for what. Resolves to the `action.invoke`
 * fields (without action id), or null.
 * @param {import("./protocol.mjs").ActionCard} card
 * @param {"actor"|"opposition"} side
 */
export async function askInvoke(card, side) {
  const ctx = invokeContext(card, side);
  if (!ctx.invokers.length || !ctx.aspects.length) {
    ui.notifications.warn(game.i18n.localize(ctx.aspects.length ? "FATEBRIDGE.Invoke.NobodyToInvoke" : "FATEBRIDGE.Invoke.NoAspects"));
    return null;
  }
  const content = await renderTemplate(INVOKE_TEMPLATE, ctx);
  const suggest = (form) => {
    const aspect = card.aspects.find((a) => a.id === checkedValue(form, "aspect"));
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
          if (picked.invoker === GM) picked.side = side;
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
 * Ask how the target absorbs a hit: stress boxes to mark and consequences to take.
 * @param {import("./protocol.mjs").ActionCard} card
 */
export async function askAbsorb(card) {
  const state = await worldState();
  const target = state?.characters.find((c) => c.id === card.target?.id);
  if (!target) return null;
  const content = await renderTemplate(ABSORB_TEMPLATE, {
    uid: globalThis.crypto.randomUUID().slice(0, 8),
    hit: game.i18n.format("FATEBRIDGE.Absorb.Hit", { name: target.name, n: card.pending_hit }),
    stress: target.stress.map((marked, index) => ({ index, marked, label: index + 1 })),
    slots: target.consequences.map((s) => ({ id: s.id, severity: s.severity, name: s.name, label: game.i18n.format("FATEBRIDGE.Absorb.Slot", { n: s.severity }) }))
  });
  const result = await dialogClass().wait({
    window: { title: game.i18n.localize("FATEBRIDGE.Absorb.Title") },
    classes: ["fate-bridge-dialog"],
    content,
    buttons: [
      {
        action: "absorb", label: "FATEBRIDGE.Absorb.Confirm", default: true,
        callback: (_e, button) => {
          const form = button.form;
          const stress_boxes = [...form.querySelectorAll('[name="stress"]')].filter((b) => b.checked && !b.disabled).map((b) => Number(b.value));
          const consequences = {};
          for (const input of form.querySelectorAll("[data-slot]")) {
            const name = String(input.value ?? "").trim();
            if (name) consequences[input.dataset.slot] = name;
          }
          return { stress_boxes, consequences };
        }
      },
      { action: "cancel", label: "FATEBRIDGE.Roll.Cancel", icon: "fa-solid fa-xmark" }
    ],
    rejectClose: false
  });
  return result && typeof result === "object" ? result : null;
}
