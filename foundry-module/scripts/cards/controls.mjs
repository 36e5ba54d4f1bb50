/**
 * The buttons under a card, built on each client at render time for that client's user: only
 * what this user may press next (the bridge checks every press again). Presses become intents
 * on the card's action; a refusal shows the bridge's message as a warning.
 * @module card-controls
 */
import { characterActor } from "../foundry/characters.mjs";
import { renderTemplate } from "../foundry/compat.mjs";
import { consentParts } from "./view.mjs";
import { ladderEntry, skillName } from "../foundry/format.mjs";
import { allyInvokers, askAbsorb, askCancel, askGift, askInvoke, canCancel, canGift } from "./pickers.mjs";
import { MODULE_ID } from "../protocol.mjs";
import { rollableRatings } from "../actions/roll-dialog.mjs";
import { actorStunts, opposeAction, readStunts, stuntOptions, stuntsChosen, syncStunts } from "../actions/stunts.mjs";

export const CONTROLS_TEMPLATE = `modules/${MODULE_ID}/templates/card-controls.hbs`;

/**
 * Whether the prompt addresses this user.
 * @param {{users: string[], gm: boolean}} prompt
 * @param {User} [user]
 */
function promptedUser(prompt, user = game.user) {
  return Boolean(prompt && (prompt.users.includes(user.id) || (prompt.gm && user.isGM)));
}

/**
 * Whether this user may act for one side of the card: the GM for any side, a player for a side
 * whose leader it owns.
 * @param {import("../protocol.mjs").CardSide} side
 * @param {User} [user]
 */
function controlsSide(side, user = game.user) {
  return Boolean(user.isGM || side.controllers.includes(user.id));
}

/** A cost kind's words, or the kind itself. */
function costLabel(kind) {
  const key = `FATEBRIDGE.Cost.${kind}`;
  const text = game.i18n.localize(key);
  return text === key ? kind : text;
}

/**
 * What this user sees under the card; null when there is nothing to press.
 * @param {import("../net/bridge.mjs").Bridge} bridge
 * @param {import("../protocol.mjs").ActionCard} card
 * @param {User} [user]
 */
export function controlsContext(bridge, card, user = game.user) {
  // The GM took the action back (history.undo): nothing on its card can be pressed.
  if (card.undone) return null;
  const extra = {};
  // R5.2, R5.3: after a fumbled advantage the GM may give someone else a free invoke, whoever
  // the card is waiting for.
  if (canGift(card, user)) extra.giftLabel = game.i18n.localize("FATEBRIDGE.Gift.Button");
  // Whatever an open action waits for, the GM can call it off so it never blocks the table.
  if (canCancel(card, user)) extra.cancelLabel = game.i18n.localize("FATEBRIDGE.Cancel.Button");
  // R13.10: whoever has a character in the scene not taking part may invoke for an ally.
  const allies = allySides(card, user);
  if (allies.length) Object.assign(extra, { allySides: allies, allyHeading: game.i18n.localize("FATEBRIDGE.Ally.Heading") });
  const ctx = promptContext(bridge, card, user);
  if (!Object.keys(extra).length) return ctx;
  const kind = ctx?.kind ?? (extra.giftLabel ? "gift" : extra.allySides ? "ally" : "cancel");
  return { uid: globalThis.crypto.randomUUID().slice(0, 8), ...ctx, kind, ...extra };
}

/**
 * R13.10: the sides this user may invoke for as an ally ("Invoke for …"), while the sides
 * invoke: each side with a character on it, when the user has a character in the scene that
 * takes no part; a player never for the side against its own character.
 * @param {import("../protocol.mjs").ActionCard} card
 * @param {User} [user]
 * @returns {{which: string, label: string}[]}
 */
export function allySides(card, user = game.user) {
  if (card.undone || card.state !== "invoking" || !allyInvokers(card, user).length) return [];
  const sides = [["actor", card.actor, card.opposition], ["opposition", card.opposition, card.actor]];
  return sides
    .filter(([, side, other]) => side.leader && (user.isGM || !other.controllers.includes(user.id)))
    .map(([which, side]) => ({ which, label: game.i18n.format("FATEBRIDGE.Ally.InvokeFor", { name: side.leader.name }) }));
}

/**
 * R13.11 (GM): who may step in and defend instead of an attack's target, before it rolls: the
 * others on the target's side of its open conflict still in it. Null when none may.
 * @param {import("../net/bridge.mjs").Bridge} bridge
 * @param {import("../protocol.mjs").ActionCard} card
 * @param {User} user
 */
function interposeContext(bridge, card, user) {
  const target = card.opposition?.leader?.id;
  if (!user.isGM || card.action_type !== "attack" || !target || !bridge.rules?.defend_for_another) return null;
  const conflict = (bridge.scene.current?.conflicts ?? []).find((c) => c.state === "open" && c.order.some((t) => t.character.id === target));
  const side = conflict?.order.find((t) => t.character.id === target)?.side_id;
  const options = (conflict?.order ?? [])
    .filter((t) => t.side_id === side && t.character.id !== target && !t.out)
    .map((t) => ({ id: t.character.id, name: t.character.name }));
  if (!options.length) return null;
  const i18n = game.i18n;
  return { label: i18n.format("FATEBRIDGE.Interpose.Label", { name: card.opposition.leader.name }), button: i18n.localize("FATEBRIDGE.Interpose.Button"), options };
}

/**
 * The controls of the card's prompt for this user; null when it does not address them.
 * @param {import("../net/bridge.mjs").Bridge} bridge
 * @param {import("../protocol.mjs").ActionCard} card
 * @param {User} user
 */
function promptContext(bridge, card, user) {
  const prompt = card.prompt;
  if (!promptedUser(prompt, user)) return null;
  const i18n = game.i18n;
  const ctx = { kind: prompt.kind, uid: globalThis.crypto.randomUUID().slice(0, 8) };
  const sides = [["actor", card.actor], ["opposition", card.opposition]];
  switch (prompt.kind) {
    case "confirm":
      if (!confirmContext(ctx, card, user)) return null;
      break;
    case "hint":
      // R5.5: the actor takes the hint; the GM answers it with text.
      if (prompt.options.includes("take")) ctx.takeHint = i18n.localize("FATEBRIDGE.Controls.TakeHint");
      else if (user.isGM) ctx.giveHint = i18n.localize("FATEBRIDGE.Controls.GiveHint");
      else return null;
      break;
    case "roll":
      ctx.roll = true;
      ctx.concede = sides.filter(([, s]) => s.dangerous && s.leader && controlsSide(s, user))
        .map(([, s]) => ({ id: s.leader.id, label: i18n.format("FATEBRIDGE.Controls.Concede", { name: s.leader.name }) }));
      break;
    case "oppose": {
      const opposer = opposerActor(card);
      // R13.1: under Accelerated, the six approaches only.
      const skills = opposer ? rollableRatings(opposer, bridge.rules) : {};
      ctx.opposeLabel = i18n.format("FATEBRIDGE.Controls.OpposeAs", { name: card.opposition.leader?.name ?? "" });
      ctx.skills = Object.entries(skills).sort(([, a], [, b]) => b - a).map(([name, rating]) => ({ name, label: `${skillName(name)} ${ladderEntry(rating)}` }));
      // R13.8: the opposer's stunts for its first skill, defending against an attack, else opposing.
      const chosen = stuntsChosen(bridge.hello?.rules);
      ctx.stunts = stuntOptions(actorStunts(opposer), ctx.skills[0]?.name ?? "", opposeAction(card.action_type), { chosen });
      ctx.stuntsHint = i18n.localize(chosen ? "FATEBRIDGE.Stunts.HintChosen" : "FATEBRIDGE.Stunts.HintAll");
      ctx.interpose = interposeContext(bridge, card, user);
      break;
    }
    case "invoke":
      ctx.sides = sides.filter(([, s]) => controlsSide(s, user)).map(([which, s]) => ({
        which,
        name: s.leader?.name ?? i18n.localize("FATEBRIDGE.Card.PassiveOpposition"),
        canPass: !s.passed,
        invokeLabel: i18n.localize("FATEBRIDGE.Controls.Invoke"),
        passLabel: i18n.localize("FATEBRIDGE.Controls.Pass")
      }));
      if (!ctx.sides.length) return null;
      break;
    case "choose":
      Object.assign(ctx, chooseContext(prompt.options));
      break;
    case "cost": {
      if (!user.isGM) return null;
      const severity = card.cost_severity ?? "serious";
      const kinds = bridge.hello?.costs?.[severity] ?? prompt.options;
      ctx.costTitle = i18n.localize(`FATEBRIDGE.Controls.CostTitle.${severity}`);
      ctx.costs = kinds.map((kind) => ({ kind, label: costLabel(kind) }));
      ctx.targets = game.actors.contents.map((a) => ({ id: a.id, name: a.name }));
      break;
    }
    case "absorb":
      ctx.absorbLabel = i18n.format("FATEBRIDGE.Controls.Absorb", { n: card.pending_hit });
      break;
    default:
      return null;
  }
  return ctx;
}

/**
 * The choice buttons of a "choose" prompt. R5.2: the unintended aspect of a fumbled advantage is
 * named by whoever picks it (the actor's controller or the GM): its own input, required; a
 * mark's consequence name (R5.4) stays optional.
 * @param {string[]} options
 */
function chooseContext(options) {
  const i18n = game.i18n;
  return {
    choices: options.map((id) => ({ id, label: i18n.localize(`FATEBRIDGE.Choice.${id}`) })),
    needsName: options.includes("mark"),
    aspectName: options.includes("unintended_aspect")
      ? { label: i18n.localize("FATEBRIDGE.Controls.UnintendedName"), placeholder: i18n.localize("FATEBRIDGE.Controls.UnintendedPlaceholder") }
      : null
  };
}

/** The opposer's actor on a card (its opposition leader), or null. */
function opposerActor(card) {
  return card.opposition?.leader ? characterActor(card.opposition.leader.id) : null;
}

/**
 * The confirmation controls (R2.1, R9.1, R10.1), added to `ctx`; false when this user has
 * nothing to press. The GM's form starts from what the player proposed, so one click
 * confirms it; a helper's owner (or the GM) accepts or declines; so does the owner (or the
 * GM) of a character the action would touch (consent to harm, DESIGN Reach and trust);
 * once only helpers are left, the acting side may roll without them.
 * @param {object} ctx
 * @param {import("../protocol.mjs").ActionCard} card
 * @param {User} user
 */
function confirmContext(ctx, card, user) {
  const i18n = game.i18n;
  const { options } = card.prompt;
  if (options.includes("confirm") && user.isGM) {
    const proposed = card.proposal?.passive_rating?.value ?? card.opposition.total?.value ?? 0;
    ctx.confirm = {
      label: i18n.localize("FATEBRIDGE.Controls.Confirm"),
      rating: card.opposition_kind === "passive" ? ratingOptions(proposed) : null,
      dangerActor: Boolean(card.proposal?.dangerous_actor ?? card.actor.dangerous),
      dangerOpposition: Boolean(card.proposal?.dangerous_opposition ?? card.opposition.dangerous)
    };
  }
  ctx.invited = (card.participants ?? [])
    .filter((p) => p.status === "invited" && (user.isGM || p.controllers.includes(user.id)))
    .map((p) => ({
      id: p.character.id,
      label: i18n.format("FATEBRIDGE.Controls.HelpAsked", { name: p.character.name, skill: skillName(p.skill) }),
      accept: i18n.localize("FATEBRIDGE.Controls.HelpAccept"),
      decline: i18n.localize("FATEBRIDGE.Controls.HelpDecline")
    }));
  ctx.consents = (card.consents ?? [])
    .filter((c) => c.status === "asked" && (user.isGM || c.controllers.includes(user.id)))
    .map((c) => ({
      id: c.character.id,
      label: i18n.format("FATEBRIDGE.Controls.ConsentAsked", { actor: card.actor.leader?.name ?? "", name: c.character.name, parts: consentParts(c.parts) }),
      accept: i18n.localize("FATEBRIDGE.Controls.ConsentAccept"),
      decline: i18n.localize("FATEBRIDGE.Controls.ConsentDecline")
    }));
  if (options.includes("roll") && controlsSide(card.actor, user)) ctx.rollWithout = i18n.localize("FATEBRIDGE.Controls.RollWithout");
  return Boolean(ctx.confirm || ctx.invited.length || ctx.consents.length || ctx.rollWithout);
}

/** The ladder from Terrible to Legendary as options, plus the proposal if it lies beyond. */
function ratingOptions(selected) {
  const values = new Set([...Array.from({ length: 11 }, (_, i) => i - 2), selected]);
  return [...values].sort((a, b) => b - a).map((value) => ({ value, label: ladderEntry(value), selected: value === selected }));
}

/**
 * Fill a rendered card's controls for this user (hook `renderChatMessageHTML`).
 * @param {import("../net/bridge.mjs").Bridge} bridge
 * @param {ChatMessage} message
 * @param {HTMLElement} html
 */
export async function renderControls(bridge, message, html) {
  const card = message.flags?.[MODULE_ID]?.card;
  const holder = html?.querySelector?.("[data-fate-bridge-controls]");
  if (!card || !holder) return;
  const ctx = controlsContext(bridge, card);
  holder.innerHTML = ctx ? await renderTemplate(CONTROLS_TEMPLATE, ctx) : "";
  holder.hidden = !ctx;
  if (!ctx || holder.dataset.bound) return;
  holder.dataset.bound = "true";
  holder.addEventListener("change", (event) => {
    const current = game.messages.get(message.id)?.flags?.[MODULE_ID]?.card ?? card;
    onControlsChange(bridge, current, event, holder);
  });
  holder.addEventListener("click", (event) => {
    const button = event.target.closest("button[data-fb]");
    if (!button || button.disabled) return;
    event.preventDefault();
    const current = game.messages.get(message.id)?.flags?.[MODULE_ID]?.card ?? card;
    button.disabled = true;
    press(bridge, current, button, holder).finally(() => { button.disabled = false; });
  });
}

/**
 * A change under the card: the opposer's skill picks which of its stunts are listed (R13.8).
 * @param {import("../net/bridge.mjs").Bridge} bridge
 * @param {import("../protocol.mjs").ActionCard} card
 * @param {Event} event
 * @param {HTMLElement} holder
 */
export function onControlsChange(bridge, card, event, holder) {
  if (event?.target?.name !== "skill" || card.prompt?.kind !== "oppose") return;
  const chosen = stuntsChosen(bridge.hello?.rules);
  syncStunts(holder, actorStunts(opposerActor(card)), String(event.target.value ?? ""), opposeAction(card.action_type), { chosen });
}

const field = (holder, name) => String(holder.querySelector(`[name="${name}"]`)?.value ?? "").trim();
const checked = (holder, name) => Boolean(holder.querySelector(`[name="${name}"]`)?.checked);

/**
 * The intent of one press, or null when a picker was cancelled.
 * @param {import("../net/bridge.mjs").Bridge} bridge
 * @param {import("../protocol.mjs").ActionCard} card
 * @param {HTMLButtonElement} button
 * @param {HTMLElement} holder
 * @returns {Promise<[string, object]|null>}
 */
export async function intentFor(bridge, card, button, holder) {
  const action_id = card.action_id;
  const { fb, side, choice, character } = button.dataset;
  switch (fb) {
    case "confirm": {
      // R2.1, R9.1: exactly what the GM's form says (it starts as the proposal).
      const payload = { action_id, dangerous: { actor: checked(holder, "dangerActor"), opposition: checked(holder, "dangerOpposition") } };
      if (field(holder, "rating") !== "") payload.passive_rating = Number(field(holder, "rating"));
      return ["action.confirm", payload];
    }
    case "help": return ["action.help", { action_id, character_id: character, accept: button.dataset.accept === "true" }];
    // Consent to harm: the owner's (or the GM's) answer for a character goes by action.help too.
    case "consent": return ["action.help", { action_id, character_id: character, accept: button.dataset.accept === "true" }];
    case "hint": return ["action.hint", { action_id }];
    case "hint-give": return ["action.hint_give", { action_id, text: field(holder, "hintText") }];
    case "roll": return ["action.roll", { action_id }];
    case "concede": return ["action.concede", { action_id, character_id: character }];
    case "oppose": {
      const payload = { action_id, skill: field(holder, "skill") };
      const stunts = readStunts(holder);
      if (stunts) payload.stunts = stunts;
      return ["action.oppose", payload];
    }
    case "pass": return ["action.pass", { action_id, side }];
    case "interpose": return ["action.interpose", { action_id, defender_id: field(holder, "defender") }];
    case "invoke-ally": {
      const picked = await askInvoke(bridge, card, side, allyInvokers(card));
      return picked ? ["action.invoke", { action_id, ...picked }] : null;
    }
    case "invoke": {
      const picked = await askInvoke(bridge, card, side);
      return picked ? ["action.invoke", { action_id, ...picked }] : null;
    }
    case "choose": {
      const payload = { action_id, choice };
      if (choice === "unintended_aspect") {
        // R5.2: the aspect is named by whoever picks it; the bridge requires the name.
        const aspect = field(holder, "unintendedName");
        if (!aspect) {
          ui.notifications.warn(game.i18n.localize("FATEBRIDGE.Controls.UnintendedRequired"));
          holder.querySelector('[name="unintendedName"]')?.focus?.();
          return null;
        }
        payload.aspect_name = aspect;
      }
      const name = field(holder, "name");
      if (name && choice === "mark") payload.consequence_name = name;
      return ["action.choose", payload];
    }
    case "cost": {
      const payload = { action_id, kind: field(holder, "kind"), text: field(holder, "text") };
      if (field(holder, "target")) payload.target_id = field(holder, "target");
      if (field(holder, "aspectName")) payload.aspect_name = field(holder, "aspectName");
      return ["action.cost", payload];
    }
    case "absorb": {
      const picked = await askAbsorb(bridge, card);
      return picked ? ["action.absorb", { action_id, ...picked }] : null;
    }
    case "gift": {
      const picked = await askGift(card);
      return picked ? ["action.gift", { action_id, ...picked }] : null;
    }
    case "cancel": {
      const picked = await askCancel(card);
      return picked ? ["action.cancel", { action_id, ...picked }] : null;
    }
    default: return null;
  }
}

/** Send one press; the card updates itself when the bridge's emit arrives. */
async function press(bridge, card, button, holder) {
  const intent = await intentFor(bridge, card, button, holder);
  if (!intent) return null;
  return bridge.send(...intent);
}
