/**
 * Action cards as the bridge sends them (schemas/server/card.json), and pressing their buttons
 * through the module's real card controls (scripts/cards/controls.mjs).
 */

/** One side of an action card: nobody, no roll yet; `overrides` sets the rest. */
export const cardSide = (overrides = {}) => ({
  leader: null, helpers: [], controllers: [], skill: null, skill_rating: null, stunt_bonus: 0, teamwork_bonus: 0,
  invoke_bonus: 0, dice: null, dice_total: null, passive: false, total: null, dangerous: false, passed: false, fate_points: null,
  stunts: [], full_defense: false,
  ...overrides
});

/**
 * Press a card's Absorb button as this client's user, `bridge`'s connection answering
 * `world.state` with `state` (and refusing anything else). Resolves to the press's intent once
 * the absorb dialog is answered; the caller puts `bridge.connection` back.
 * @param {object} controls  scripts/cards/controls.mjs
 * @param {object} bridge  a Bridge (scripts/net/bridge.mjs)
 * @param {object} card
 * @param {object} state  the `world.state` answer's data
 */
export function pressAbsorb(controls, bridge, card, state) {
  bridge.connection = { connected: true, call: async (event) => (event === "world.state" ? { ok: true, data: state } : { ok: false, error: { code: "invalid", message: "no" } }) };
  const holder = document.createElement("div");
  const button = document.createElement("button");
  button.dataset.fb = "absorb";
  holder.append(button);
  return controls.intentFor(bridge, card, button, holder);
}
