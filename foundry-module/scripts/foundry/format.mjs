/**
 * Small display helpers: signed numbers, ladder entries, aspect names.
 * @module format
 */

const MINUS = "\u2212";

/**
 * A number with its sign, using a true minus: +3, 0, −1.
 * @param {number} n
 */
export function signed(n) {
  if (n > 0) return `+${n}`;
  if (n < 0) return `${MINUS}${Math.abs(n)}`;
  return "0";
}

/**
 * The ladder word for a value, or null beyond the named ladder.
 * @param {number} value
 * @returns {string|null}
 */
function ladderWord(value) {
  const key = `FATEBRIDGE.Ladder.${value}`;
  const word = game.i18n.localize(key);
  return word === key ? null : word;
}

/**
 * "Great (+4)", or just "+12" beyond the named ladder.
 * @param {number} value
 */
export function ladderEntry(value) {
  const word = ladderWord(value);
  if (word === null) return signed(value);
  return game.i18n.format("FATEBRIDGE.Ladder.Entry", { word, value: signed(value) });
}

/**
 * An aspect's name as lists show it: "Hero's momentum ×3" for an entry standing for three
 * alike boosts (the bridge groups them; `count` is absent or 1 otherwise).
 * @param {{name: string, count?: number}} aspect
 */
export function aspectName(aspect) {
  const count = aspect.count ?? 1;
  return count > 1 ? game.i18n.format("FATEBRIDGE.Aspect.Counted", { name: aspect.name, count }) : aspect.name;
}

/**
 * Free invokes by holder on a list entry: every aspect an entry stands for has the same
 * holders, so each holds `count` times the representative's.
 * @param {{free_invokes?: Record<string, number>, count?: number}} aspect
 * @returns {[string, number][]}
 */
export function entryFreeInvokes(aspect) {
  const count = aspect.count ?? 1;
  return Object.entries(aspect.free_invokes ?? {}).filter(([, n]) => n > 0).map(([holder, n]) => [holder, n * count]);
}

/**
 * A ladder value as the wire carries it (`{value}`), in words: "Great +4", or "+12".
 * @param {{value: number}|null|undefined} rated
 * @returns {{word: string, value: string}|null}
 */
export function ratedParts(rated) {
  if (!rated) return null;
  return { word: ladderWord(rated.value) ?? "", value: signed(rated.value) };
}

/** A ladder value as one short text: "Great +4" ("+12" beyond the named ladder). */
export function ratedText(rated) {
  const parts = ratedParts(rated);
  if (!parts) return null;
  return parts.word ? `${parts.word} ${parts.value}` : parts.value;
}

/** The GM's id where the bridge names the GM as a character (an invoke's payer, a cause). */
const GM_ID = "gm";

/**
 * A character as a card names it; the GM in the user's language (the bridge sends "GM").
 * @param {{id?: string, name?: string}|null|undefined} who
 */
export function whoName(who) {
  if (who?.id === GM_ID) return game.i18n.localize("FATEBRIDGE.Invoke.Gm");
  return who?.name ?? "";
}

/**
 * A skill's name for people: an approach (R13.1, sent by the name the bridge knows it) in the
 * user's language (`FATEBRIDGE.Approach.<name>`); any other skill as the sheet names it.
 * @param {string|null|undefined} name
 */
export function skillName(name) {
  const key = `FATEBRIDGE.Approach.${name}`;
  return name && game.i18n.has(key) ? game.i18n.localize(key) : name ?? "";
}

/**
 * An action's name (R2) from its id.
 * @param {string} id
 */
export function actionName(id) {
  return game.i18n.localize(`FATEBRIDGE.Action.${id}`);
}

/**
 * An outcome's name (R3.1) as the ruleset calls it: Unwritten's own words, else Fate's.
 * @param {string|null|undefined} id
 * @param {string|null|undefined} ruleset
 */
export function outcomeName(id, ruleset) {
  if (!id) return "";
  const family = ruleset === "unwritten" ? "unwritten" : "fate";
  return game.i18n.localize(`FATEBRIDGE.Outcome.${family}.${id}`);
}

/**
 * A refusal in the user's language, from its code, field and parameters
 * (`FATEBRIDGE.Error.<code>`); never the bridge's English `message`. A code this module does
 * not know shows as the code and the field, so the user still sees what was refused.
 * @param {{code?: string, field?: string|null, params?: Record<string, string|number>}|null|undefined} error
 */
export function refusalText(error) {
  const i18n = game.i18n;
  const code = String(error?.code ?? "internal");
  const field = error?.field ? String(error.field) : "";
  const params = { ...(error?.params ?? {}), code, field };
  // A refusal this module made itself (offline, a relay host's) names its own sentence.
  const sentence = typeof params.sentence === "string" && params.sentence.startsWith("FATEBRIDGE.") ? params.sentence : null;
  if (sentence && i18n.localize(sentence) !== sentence) return i18n.format(sentence, params);
  // A refusal with a sentence of its own (its `reason`), in the user's language.
  const reason = typeof params.reason === "string" ? `FATEBRIDGE.Refusal.${params.reason}` : null;
  if (reason && i18n.localize(reason) !== reason) {
    // An action's state in words, as its card names it.
    const stateKey = typeof params.state === "string" ? `FATEBRIDGE.Card.State.${params.state}` : null;
    const state = stateKey && i18n.localize(stateKey) !== stateKey ? i18n.localize(stateKey) : params.state;
    // An action type by its name.
    const actionKey = typeof params.action === "string" ? `FATEBRIDGE.Action.${params.action}` : null;
    const action = actionKey && i18n.localize(actionKey) !== actionKey ? i18n.localize(actionKey) : params.action;
    // R13.1: the approaches a roll may name, as the user's language names them.
    const approaches = typeof params.approaches === "string" ? params.approaches.split(", ").map(skillName).join(", ") : params.approaches;
    return i18n.format(reason, { ...params, state, action, approaches });
  }
  const key = `FATEBRIDGE.Error.${code}`;
  const text = i18n.format(key, params);
  if (text === key) return i18n.format(field ? "FATEBRIDGE.Error.UnknownAt" : "FATEBRIDGE.Error.Unknown", { code, field });
  return field ? i18n.format("FATEBRIDGE.Error.AtField", { text, field }) : text;
}
