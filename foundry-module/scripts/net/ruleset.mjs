/**
 * The world's ruleset, chosen by its GM from Foundry (R13.9): the module proposes the one that
 * matches fate-core-official's framework (adapters/fco-frameworks.mjs), the GM confirms, and
 * `world.ruleset` switches the bridge's world between procedures (the log is kept).
 * @module ruleset
 */
import { dialogClass } from "../foundry/compat.mjs";
import { refusalText } from "../foundry/format.mjs";
import { fcoProposal } from "../adapters/fco-frameworks.mjs";
import { MODULE_ID } from "../protocol.mjs";
import { refreshHello } from "./hello.mjs";
import { RULESET_LABELS, SETTINGS } from "./settings.mjs";

const RULESETS = Object.freeze(Object.keys(RULESET_LABELS));

/** A ruleset's name for people; an id the module does not know as is. */
function rulesetTitle(id) {
  return Object.hasOwn(RULESET_LABELS, id ?? "") ? game.i18n.localize(RULESET_LABELS[id]) : String(id ?? "");
}

/** The GM's choice in the module's settings ("" = as the bridge has it). */
function chosenRuleset() {
  try {
    const v = game.settings.get(MODULE_ID, SETTINGS.ruleset);
    return RULESETS.includes(v) ? v : "";
  } catch {
    return "";
  }
}

/**
 * What the module proposes: the GM's setting when set, else FCO's framework; null when it
 * matches the bridge's ruleset already or there is nothing to propose.
 * @param {string|null|undefined} bridgeRuleset  hello.ruleset
 * @param {{setting?: string, fco?: string|null}} [from]  (tests) the setting and FCO proposal
 */
export function rulesetProposal(bridgeRuleset, { setting = chosenRuleset(), fco = fcoProposal() } = {}) {
  const wanted = setting || fco;
  return wanted && wanted !== bridgeRuleset ? wanted : null;
}

let asking = false;

/**
 * The GM after hello: when the proposal differs from the bridge's ruleset, offer to switch.
 * Confirming writes the setting (whose change sends `world.ruleset`); declining keeps the
 * bridge's ruleset as the GM's choice, so the question is not asked again.
 * @param {import("./bridge.mjs").Bridge} bridge
 * @param {object} [hello]  the answer to greet with (the bridge's own by default)
 */
export async function offerRuleset(bridge, hello = bridge.hello) {
  if (!game.user?.isGM || hello?.role !== "gm" || asking) return null;
  const proposal = rulesetProposal(hello.ruleset);
  if (!proposal) return null;
  asking = true;
  try {
    const i18n = game.i18n;
    const title = rulesetTitle;
    const fromSetting = Boolean(chosenRuleset());
    const content = `<p>${i18n.format(fromSetting ? "FATEBRIDGE.Ruleset.OfferSetting" : "FATEBRIDGE.Ruleset.OfferFco", { bridge: title(hello.ruleset), proposal: title(proposal) })}</p>`;
    const answer = await dialogClass().wait({
      window: { title: "FATEBRIDGE.Ruleset.OfferTitle" },
      classes: ["fate-bridge-dialog"],
      content,
      buttons: [
        { action: "switch", label: i18n.format("FATEBRIDGE.Ruleset.Switch", { proposal: title(proposal) }), icon: "fa-solid fa-check", default: true },
        { action: "keep", label: i18n.format("FATEBRIDGE.Ruleset.Keep", { bridge: title(hello.ruleset) }), icon: "fa-solid fa-xmark" }
      ],
      rejectClose: false
    });
    if (answer === "switch") {
      await writeSetting(proposal);
      return setRuleset(bridge, proposal);
    }
    if (answer === "keep") await writeSetting(hello.ruleset);
    return null;
  } finally {
    asking = false;
  }
}

/** The value this client is writing into the setting itself (its onChange then sends nothing). */
let writing = null;

async function writeSetting(value) {
  if (chosenRuleset() === value) return;
  writing = value;
  try {
    await game.settings.set(MODULE_ID, SETTINGS.ruleset, value);
  } finally {
    writing = null;
  }
}

/**
 * The setting changed (Foundry calls this on every client): the active GM's client tells the
 * bridge when the new value differs from the bridge's ruleset. Changes this module makes itself
 * (the offer, a revert) are sent by the code that makes them.
 * @param {import("./bridge.mjs").Bridge} bridge
 * @param {string} value
 */
export function onRulesetSetting(bridge, value) {
  if (value === writing || !game.user?.isGM || !bridge.isWritingGM()) return null;
  if (!value || !bridge.hello || value === bridge.hello.ruleset) return null;
  return setRuleset(bridge, value);
}

/**
 * GM: switch the bridge's world to `ruleset` (`world.ruleset`). A refusal (a procedure still
 * open: wrong_state) is shown, and the setting goes back to the bridge's ruleset.
 * @param {import("./bridge.mjs").Bridge} bridge
 * @param {string} ruleset
 * @returns {Promise<object|null>} the answer's data, or null
 */
export async function setRuleset(bridge, ruleset) {
  if (!bridge.ensureConnected()) return revert(bridge);
  const ack = await bridge.connection.call("world.ruleset", { ruleset });
  if (!ack.ok) {
    const i18n = game.i18n;
    const key = ack.error?.code === "wrong_state" ? "FATEBRIDGE.Ruleset.Busy" : "FATEBRIDGE.Ruleset.Refused";
    ui.notifications.error(i18n.format(key, { ruleset: rulesetTitle(ruleset), message: refusalText(ack.error) }));
    return revert(bridge);
  }
  await refreshHello(bridge);
  // The GM's choice follows a switch made another way (the API); "as the bridge has it" stays.
  if (chosenRuleset() && chosenRuleset() !== ack.data.ruleset) await writeSetting(ack.data.ruleset);
  ui.notifications.info(game.i18n.format("FATEBRIDGE.Ruleset.Switched", { ruleset: rulesetTitle(ack.data.ruleset ?? ruleset) }));
  return ack.data;
}

/** Put the setting back to the bridge's ruleset (its onChange then sends nothing); null. */
async function revert(bridge) {
  const ruleset = bridge.hello?.ruleset;
  if (ruleset && RULESETS.includes(ruleset)) await writeSetting(ruleset);
  return null;
}

/**
 * Every client: a scene state on another ruleset than hello's means the GM switched it; hello
 * is asked again once.
 * @param {import("./bridge.mjs").Bridge} bridge
 * @param {object} state  SceneState
 */
export function followRuleset(bridge, state) {
  if (!state?.ruleset || !bridge.hello || state.ruleset === bridge.hello.ruleset) return null;
  if (refreshing) return refreshing;
  refreshing = refreshHello(bridge).finally(() => {
    refreshing = null;
  });
  return refreshing;
}
let refreshing = null;
