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
