// fate-core-official's own code against the module (issue 8): FCO's chat hooks (a stand-in written
// from its FateUtilities.js), its skill-row click-to-roll listener, its sheet data as the adapter
// must read it, and unlinked tokens. The module under test is always the real code.
import assert from "node:assert/strict";
import path from "node:path";
import { before, describe, test } from "node:test";
import { MODULE_DIR, bootNodeFoundry } from "./support/node-foundry.mjs";
import { installFcoStandIn } from "./support/fco-stand-in.mjs";
import { chest, goblin, zird } from "./fixtures/actors.mjs";

const GM = { id: "gmUser000000001", name: "Gamemaster", isGM: true };
const PLAYER = { id: "playerUser00001", name: "Player", isGM: false };

const side = (overrides = {}) => ({
  leader: null, helpers: [], controllers: [], skill: null, skill_rating: null, stunt_bonus: 0, teamwork_bonus: 0,
  invoke_bonus: 0, dice: null, dice_total: null, passive: false, total: null, dangerous: false, passed: false, fate_points: null,
  ...overrides
});

/** An action card as the bridge sends it, rolled, invoking (schemas/server/card.json). */
function rolledCard(overrides = {}) {
  return {
    kind: "action", action_id: "a1", ruleset: "unwritten", action_type: "overcome", action_label: "Overcome", state: "invoking",
    actor: side({ leader: { id: "actorZird0000001", name: "Zird the Arcane" }, controllers: [PLAYER.id], skill: "Athletics", skill_rating: { value: 3, label: "Good" }, dice: [1, 0, -1, 1], dice_total: 1, total: { value: 4, label: "Great" } }),
    opposition: side({ passive: true, total: { value: 2, label: "Fair" } }),
    opposition_kind: "passive", opposition_action: null, target: null, target_aspect: null, aspect_name: null, situation: null,
    invokes: [], shifts: 2, outcome: "succeed", outcome_label: "Succeed", provisional: true, succeeded: null, pending_choice: null,
    cost_severity: null, pending_hit: 0, effects: [], aspects: [], gm_fate_points: 0, fate_points: {},
    prompt: { kind: "none", users: [], gm: false, options: [] }, description: null, event_seq: 3, event_hash: "ab".repeat(32),
    ...overrides
  };
}

let foundry;
let cards;
let adapters;
let writes;
let tokens;
let compat;

before(async () => {
  foundry = await bootNodeFoundry({
    users: [GM, PLAYER],
    userId: GM.id,
    activeGM: GM.id,
    systemId: "fate-core-official",
    actors: [zird(PLAYER.id), goblin(), chest()],
    settings: { "fate-bridge.bridgeUrl": "http://127.0.0.1:9" }
  }, { io: () => { throw new Error("no connection in unit tests"); } });
  installFcoStandIn(foundry);
  foundry.Hooks.callAll("init");
  cards = await import(path.join(MODULE_DIR, "scripts/cards.mjs"));
  adapters = await import(path.join(MODULE_DIR, "scripts/adapters/index.mjs"));
  writes = await import(path.join(MODULE_DIR, "scripts/world-writes.mjs"));
  tokens = await import(path.join(MODULE_DIR, "scripts/scene-tokens.mjs"));
  compat = await import(path.join(MODULE_DIR, "scripts/compat.mjs"));
});

const sceneRolls = () => foundry.game.scenes.viewed.getFlag("fate-core-official", "rolls") ?? [];
const settle = () => new Promise((r) => setTimeout(r, 0));

describe("FCO's chat hooks leave the bridge's cards alone (issue 8.2)", () => {
  test("the stand-in does what FCO does to a native 4dF roll: records it, decorates Foundry's roll markup, throws on custom markup", async () => {
    const roll = Roll.fromData({ class: "Roll", formula: "4dF + 2", options: {}, evaluated: true, total: 3, terms: [
      { class: "FateDie", number: 4, faces: 3, modifiers: [], options: {}, evaluated: true, results: [1, 0, 0, 0].map((result) => ({ result, active: true })) },
      { class: "OperatorTerm", operator: "+", options: {}, evaluated: true },
      { class: "NumericTerm", number: 2, options: {}, evaluated: true }
    ] });
    const errorsBefore = foundry.log.hookErrors.length;
    // Foundry's own roll markup (what a message without custom content renders).
    const native = await ChatMessage.create({ speaker: ChatMessage.getSpeaker({ alias: "Zird" }), rolls: [roll], content: '<div class="dice-roll"><div class="flavor-text"></div><h4 class="dice-total">3</h4></div>' });
    await settle();
    assert.ok(sceneRolls().some((r) => r.message_id === native.id), "FCO records a native 4dF roll into its scene roll list");
    assert.match(native.element.querySelector(".dice-total").textContent, /\(Good\)/);
    assert.ok(native.element.querySelector('[name="fco_chat_roll_button"]'), "FCO adds its invoke buttons for the GM");
    assert.equal(foundry.log.hookErrors.length, errorsBefore);
    // The same roll on a message of custom content: FCO's render hook throws.
    await ChatMessage.create({ speaker: ChatMessage.getSpeaker({ alias: "Zird" }), rolls: [roll], content: '<div class="fate-bridge-card"></div>' });
    await settle();
    const thrown = foundry.log.hookErrors.slice(errorsBefore);
    assert.equal(thrown.length, 1);
    assert.equal(thrown[0].hook, "renderChatMessageHTML");
  });

  test("a bridge card is not an FCO roll: not recorded, no error, no FCO buttons; its Roll still carries the bridge's faces for Dice So Nice", async () => {
    const recorded = sceneRolls().length;
    const errorsBefore = foundry.log.hookErrors.length;
    const message = await cards.handleCardEmit({ seq: 3, world: "w", writer: GM.id, op: "create", card_id: "w.a1", card: rolledCard() });
    await settle();
    assert.ok(message, "the GM wrote the card");
    assert.equal(sceneRolls().length, recorded, "FCO's createChatMessage did not record the bridge's roll");
    assert.deepEqual(foundry.log.hookErrors.slice(errorsBefore), [], "FCO's renderChatMessageHTML did not throw on the card");
    assert.equal(message.element.querySelector('[name="fco_chat_roll_button"]'), null);
    const [roll] = message.rolls;
    assert.equal(roll.total, 4);
    assert.equal(roll.dice.length, 1);
    assert.equal(roll.dice[0].constructor.name, "FateDie");
    assert.deepEqual(roll.dice[0].results.map((r) => r.result), [1, 0, -1, 1]);
    // An update (a reroll) is not re-recorded either, and renders without error.
    const reroll = rolledCard({ event_seq: 4 });
    reroll.actor = { ...reroll.actor, dice: [-1, -1, 0, 0], dice_total: -2, total: { value: 1, label: "Average" } };
    await cards.handleCardEmit({ seq: 4, world: "w", writer: GM.id, op: "update", card_id: "w.a1", card: reroll });
    await settle();
    assert.equal(sceneRolls().length, recorded);
    assert.deepEqual(foundry.log.hookErrors.slice(errorsBefore), []);
    assert.deepEqual(message.rolls[0].dice[0].results.map((r) => r.result), [-1, -1, 0, 0]);
  });

  test("a world whose Fate formulae list other heads (e.g. a negative skill's) still leaves the bridge's rolls alone", async () => {
    const { isFcoFateRoll } = await import("./support/fco-stand-in.mjs");
    await foundry.game.settings.set("fate-core-official", "fu-roll-formulae", "4dF, , -1, 0, 3, fate");
    for (const total of [-3, 0, 4]) {
      const data = cards.rollData(side({ dice: [0, 0, 0, 0], dice_total: 0, total: { value: total, label: "" } }));
      assert.equal(isFcoFateRoll(Roll.fromData(data), foundry.game), false, `modifier ${total}`);
    }
    await foundry.game.settings.set("fate-core-official", "fu-roll-formulae", "4dF");
  });
});

describe("every token is its own character (issue 8.5)", () => {
  const GOBLIN = "actorGoblin00001";
  const slots = (mild, moderate) => [
    { id: adapters.adapterFor().toActorData(foundry.game.actors.get(GOBLIN)).consequences[0].id, severity: 2, name: mild, status: mild ? "fresh" : null },
    { id: adapters.adapterFor().toActorData(foundry.game.actors.get(GOBLIN)).consequences[1].id, severity: 4, name: moderate, status: moderate ? "fresh" : null }
  ];
  const patch = (seq, actorId, mild, moderate) => ({ seq, world: "w", writer: "gm", actor_id: actorId, fate_points: 0, pending_fate_points: 0, consequences: slots(mild, moderate), stress: [], overwhelmed: false });

  test("three unlinked goblins are three characters keyed by token UUID; a linked token is its actor; Things are not characters", async () => {
    const scene = foundry.viewScene([
      { id: "tokGoblinA000001", actorId: GOBLIN, actorLink: false, name: "Goblin A" },
      { id: "tokGoblinB000001", actorId: GOBLIN, actorLink: false, name: "Goblin B" },
      { id: "tokGoblinC000001", actorId: GOBLIN, actorLink: false, name: "Goblin C" },
      "actorZird0000001",
      "actorThingChest1"
    ], "sceneGoblins0001");
    const actors = tokens.sceneTokenActors(scene);
    const data = actors.map((a) => adapters.adapterFor().toActorData(a));
    assert.deepEqual(data.map((d) => d.id), [
      "Scene.sceneGoblins0001.Token.tokGoblinA000001",
      "Scene.sceneGoblins0001.Token.tokGoblinB000001",
      "Scene.sceneGoblins0001.Token.tokGoblinC000001",
      "actorZird0000001"
    ], "the chest (a Thing) is not synced");
    assert.deepEqual(data.map((d) => d.name), ["Goblin A", "Goblin B", "Goblin C", "Zird the Arcane"]);
    assert.ok(actors.slice(0, 3).every((a) => a.id === GOBLIN && a.isToken), "Foundry gives every synthetic actor its base actor's id");
    assert.deepEqual(compat.sceneActorIds(), [...data.map((d) => d.id), "actorThingChest1"]);
    const { candidates } = await import(path.join(MODULE_DIR, "scripts/roll-dialog.mjs"));
    assert.deepEqual(candidates(foundry.game.actors.get("actorZird0000001")).map((o) => [o.id, o.name]), [
      ["Scene.sceneGoblins0001.Token.tokGoblinA000001", "Goblin A"],
      ["Scene.sceneGoblins0001.Token.tokGoblinB000001", "Goblin B"],
      ["Scene.sceneGoblins0001.Token.tokGoblinC000001", "Goblin C"]
    ], "each goblin is offered as an opposer; the chest is not");
    foundry.target([scene.tokens.get("tokGoblinB000001")]);
    assert.deepEqual(compat.targetedActorIds(), ["Scene.sceneGoblins0001.Token.tokGoblinB000001"]);
    foundry.target([]);
  });

  test("patches and statuses land on each token's own actor, never on the base actor or the other goblins", async () => {
    const scene = foundry.game.scenes.get("sceneGoblins0001");
    const [a, b, c] = ["tokGoblinA000001", "tokGoblinB000001", "tokGoblinC000001"].map((id) => scene.tokens.get(id));
    await writes.handleActorPatch(patch(60, a.uuid, "Bloody Nose", null));
    await writes.handleActorPatch(patch(61, b.uuid, null, "Broken Arm"));
    await writes.handleTokenStatus({ seq: 62, world: "w", writer: "gm", actor_id: a.uuid, statuses: { mild: true } });
    await writes.handleTokenStatus({ seq: 63, world: "w", writer: "gm", actor_id: b.uuid, statuses: { moderate: true } });
    await writes.handleTokenStatus({ seq: 64, world: "w", writer: "gm", actor_id: c.uuid, statuses: { boost: true } });
    const named = (actor) => adapters.adapterFor().toActorData(actor).consequences.map((s) => s.name ?? null);
    assert.deepEqual(named(a.actor), ["Bloody Nose", null]);
    assert.deepEqual(named(b.actor), [null, "Broken Arm"]);
    assert.deepEqual(named(c.actor), [null, null]);
    assert.deepEqual(named(foundry.game.actors.get(GOBLIN)), [null, null], "the base actor is untouched");
    assert.deepEqual([...a.actor.statuses], ["fate-bridge-mild"]);
    assert.deepEqual([...b.actor.statuses], ["fate-bridge-moderate"]);
    assert.deepEqual([...c.actor.statuses], ["fate-bridge-boost"]);
    assert.deepEqual([...foundry.game.actors.get(GOBLIN).statuses], []);
    assert.deepEqual(foundry.log.statusToggles.slice(-3).map((t) => t.token), [a.id, b.id, c.id]);
    // A patch replayed to the same token changes nothing; the next goblin's own seq still applies.
    assert.equal(await writes.handleActorPatch(patch(60, a.uuid, "Bloody Nose", null)), null);
  });
});
