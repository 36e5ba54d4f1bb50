/**
 * A stand-in for the two chat hooks of fate-core-official (its scripts/FateUtilities.js, read at
 * 4.7.13.6 and 4.7.14.8), written from what they key on and what they do; none of its code.
 *
 * - `createChatMessage`: only on the first active GM's client; a message with rolls that is not
 *   whispered, not blind and whose flavor does not start a reroll ("<h1>Reroll"), and whose first
 *   roll is a Fate roll, is appended to the viewed scene's flag `fate-core-official.rolls` (Fate
 *   Utilities then offers buttons that re-total the message and spend fate points).
 * - `renderChatMessageHTML`: for a visible message whose first roll is a Fate roll, appends the
 *   ladder word to the message's `.dice-total` — which Foundry's roll markup has and a card of
 *   custom content has not, so it throws there — and adds its invoke buttons to `.flavor-text`
 *   for the speaker's user or a GM.
 *
 * - The character sheet (scripts/fcoCharacter.js, `_onRender`): for an owner, every
 *   `div[name="skill"]` gets a click listener that rolls the skill natively (`_onSkill_name`,
 *   a single click after a double-click guard, then `rollSkill`); the stand-in records the roll in
 *   `log.fcoNativeRolls` instead of rolling.
 *
 * A Fate roll, for both chat hooks: a formula starting with "4df" or "4dF", or a dice formula (the roll's
 * `options.fco_formula` when set, else the formula's head before the first "+" or "-") that is
 * one of the world setting `fu-roll-formulae` (comma separated, default "4dF"), compared
 * trimmed and lower-cased.
 */

const SYSTEM = "fate-core-official";
const LADDER = { "-2": "Terrible", "-1": "Poor", 0: "Mediocre", 1: "Average", 2: "Fair", 3: "Good", 4: "Great", 5: "Superb", 6: "Fantastic", 7: "Epic", 8: "Legendary" };

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
 * Register the stand-in hooks on the fake Foundry.
 * @param {{Hooks: object, game: object}} foundry
 * @param {{formulae?: string}} [options]  the world's `fu-roll-formulae`
 */
export function installFcoStandIn({ Hooks, game, log, sheetRenderers }, { formulae = "4dF" } = {}) {
  log.fcoNativeRolls = [];
  sheetRenderers.push((root, actor) => {
    if (!actor.isOwner) return;
    for (const el of root.querySelectorAll('div[name="skill"]')) {
      el.addEventListener("click", (event) => {
        if (event.detail > 1) return;
        log.fcoNativeRolls.push({ actor: actor.id, skill: event.target.dataset.skillname ?? el.dataset.skillname });
      });
    }
  });

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
