/**
 * Small display helpers: signed numbers, ladder entries.
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
export function ladderWord(value) {
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
