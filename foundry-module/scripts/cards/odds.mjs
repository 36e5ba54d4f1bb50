/**
 * Odds before rolling and before invoking (issue 8.7): the bridge computes them exactly from the
 * 81 rolls of 4dF; the module only shows them. The roll dialog asks `action.odds` (no action
 * exists yet); the invoke picker reads the invoke-phase card's `invoke_odds`.
 * @module odds
 */
import { renderTemplate } from "../foundry/compat.mjs";
import { outcomeName } from "../foundry/format.mjs";
import { MODULE_ID } from "../protocol.mjs";

export const ODDS_TEMPLATE = `modules/${MODULE_ID}/templates/odds.hbs`;
const OUTCOMES = ["fumble", "tie", "succeed", "excel"];

/** "18.5%" for 15/81: one decimal, no float noise. */
export function percent(count, outOf) {
  return `${(Math.round((1000 * count) / outOf) / 10).toFixed(1)}%`;
}

/**
 * Rows for the template: each outcome's label, count, exact fraction and percentage, and the
 * headline chance of succeeding or better.
 * @param {{out_of: number, fumble: number, tie: number, succeed: number, excel: number}} odds
 * @param {string} [ruleset]  the ruleset whose outcome names to use (R3.1)
 */
export function oddsRows(odds, ruleset) {
  const label = (id) => outcomeName(id, ruleset);
  const rows = OUTCOMES.map((id) => ({
    id,
    label: label(id),
    count: odds[id],
    fraction: `${odds[id]}/${odds.out_of}`,
    percent: percent(odds[id], odds.out_of),
    width: Math.round((100 * odds[id]) / odds.out_of)
  }));
  const success = odds.succeed + odds.excel;
  return {
    rows,
    success: game.i18n.format("FATEBRIDGE.Odds.Success", { percent: percent(success, odds.out_of), fraction: `${success}/${odds.out_of}` })
  };
}

/**
 * What the roll dialog's form says so far, as an `action.odds` payload; null when the odds
 * cannot be known yet (an active opposer has not rolled).
 * @param {{type: string, skill: string, opposition?: number, opposerId?: string, helpers?: object[], stunts?: string[]}} request
 * @param {Actor} actor
 */
export function oddsPayload(request, actor) {
  if (request.opposerId || !request.skill || !Number.isInteger(request.opposition)) return null;
  const payload = { type: request.type ?? "overcome", actor_id: actor.id, skill: request.skill, opposition: request.opposition };
  if (request.helpers?.length) payload.helpers = request.helpers;
  if (Array.isArray(request.stunts)) payload.stunts = request.stunts;
  return payload;
}

/**
 * Ask the bridge for the odds of what the dialog says and show them in `target` (quietly: a
 * refusal shows no odds rather than a warning while the user is still choosing).
 * @param {import("../net/bridge.mjs").Bridge} bridge
 * @param {HTMLElement} target
 * @param {object} request  `readForm`'s answer
 * @param {Actor} actor
 */
export async function showRollOdds(bridge, target, request, actor) {
  if (!target) return null;
  const payload = oddsPayload(request, actor);
  let context;
  if (!payload) context = { note: game.i18n.localize("FATEBRIDGE.Odds.AfterOpposition") };
  else {
    const ack = bridge.connected ? await bridge.connection.call("action.odds", payload) : null;
    if (!ack?.ok) context = { note: game.i18n.localize("FATEBRIDGE.Odds.Unavailable") };
    else context = { title: game.i18n.localize("FATEBRIDGE.Odds.Title"), ...oddsRows(ack.data.odds, ack.data.ruleset) };
  }
  target.innerHTML = await renderTemplate(ODDS_TEMPLATE, context);
  target.dataset.oddsReady = payload ? JSON.stringify(payload) : "none";
  return context;
}

/**
 * The invoke picker's odds for one side: the actor's outcome now, after +2, and after a reroll.
 * @param {import("../protocol.mjs").ActionCard} card
 * @param {"actor"|"opposition"} side
 */
export function invokeOddsContext(card, side) {
  const odds = card.invoke_odds?.[side];
  if (!odds) return null;
  const label = (id) => outcomeName(id, card.ruleset);
  return {
    now: game.i18n.format("FATEBRIDGE.Odds.Now", { outcome: label(odds.now) }),
    plusTwo: game.i18n.format("FATEBRIDGE.Odds.PlusTwo", { outcome: label(odds.plus_two) }),
    reroll: odds.reroll ? { title: game.i18n.localize("FATEBRIDGE.Odds.Reroll"), ...oddsRows(odds.reroll, card.ruleset) } : null
  };
}
