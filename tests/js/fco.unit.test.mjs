// fate-core-official's own code against the module (issue 8): FCO's chat hooks (a stand-in written
// from its FateUtilities.js), its skill-row click-to-roll listener, its sheet data as the adapter
// must read it, and unlinked tokens. The module under test is always the real code.
import assert from "node:assert/strict";
import path from "node:path";
import { before, describe, test } from "node:test";
import { cardSide } from "./support/cards.mjs";
import { MODULE_DIR, bootNodeFoundry } from "./support/node-foundry.mjs";
import { installFcoStandIn } from "./support/fco-stand-in.mjs";
import { chest, consequenceAspect, fcoTrack, goblin, zird } from "./fixtures/actors.mjs";

const GM = { id: "gmUser000000001", name: "Gamemaster", isGM: true };
const PLAYER = { id: "playerUser00001", name: "Player", isGM: false };


/** An action card as the bridge sends it, rolled, invoking (schemas/server/card.json). */
function rolledCard(overrides = {}) {
  return {
    kind: "action", action_id: "a1", ruleset: "unwritten", action_type: "overcome", state: "invoking",
    actor: cardSide({ leader: { id: "actorZird0000001", name: "Zird the Arcane" }, controllers: [PLAYER.id], skill: "Athletics", skill_rating: { value: 3 }, dice: [1, 0, -1, 1], dice_total: 1, total: { value: 4 } }),
    opposition: cardSide({ passive: true, total: { value: 2 } }),
    opposition_kind: "passive", opposition_action: null, target: null, target_aspect: null, aspect_name: null, situation: null,
    invokes: [], shifts: 2, outcome: "succeed", provisional: true, succeeded: null, pending_choice: null,
    cost_severity: null, pending_hit: 0, effects: [], aspects: [], gm_fate_points: 0, fate_points: {},
    prompt: { kind: "none", users: [], gm: false, options: [] }, description: null, event_seq: 3, event_hash: "ab".repeat(32),
    ...overrides
  };
}

/** A character using what FCO's sheet allows: a hidden skill, an "as_name" track, a ticked unnamed consequence. */
function sheetReader() {
  const actor = zird(PLAYER.id);
  actor._id = "actorSheetRead01";
  actor.name = "Vera Sheetwise";
  actor.system.skills.Secrets = { name: "Secrets", rank: 5, pc: true, hidden: true };
  actor.system.details.fatePoints.boosts = 2;
  actor.system.tracks = {
    "TWlsZA==": fcoTrack("Mild", { boxes: 1, harm: 2, aspect: consequenceAspect(), values: [true] }),
    "TW9kZXJhdGU=": fcoTrack("Moderate", { boxes: 1, harm: 4, aspect: consequenceAspect("Cracked Ribs") }),
    Exhausted: fcoTrack("Exhausted", { boxes: 1, harm: 4, aspect: { name: "", when_marked: false, as_name: true }, values: [true] }),
    Wounded: fcoTrack("Wounded", { boxes: 1, harm: 6, aspect: { name: "", when_marked: false, as_name: true } }),
    Legacy: fcoTrack("Legacy", { boxes: 1, harm: 2, aspect: "Defined when marked" })
  };
  return actor;
}

let foundry;
/** A Bridge of the tests' own (the module's is main.mjs's). */
let bridge;
let cards;
let adapters;
let writes;
let tokens;
let compat;

before(async () => {
  bridge = new (await import(path.join(MODULE_DIR, "scripts/net/bridge.mjs"))).Bridge();
  foundry = await bootNodeFoundry({
    users: [GM, PLAYER],
    userId: GM.id,
    activeGM: GM.id,
    systemId: "fate-core-official",
    actors: [zird(PLAYER.id), goblin(), chest(), sheetReader()],
    settings: { "fate-bridge.bridgeUrl": "http://127.0.0.1:9" }
  }, { io: () => { throw new Error("no connection in unit tests"); }, bridge });
  installFcoStandIn(foundry);
  foundry.Hooks.callAll("init");
  cards = await import(path.join(MODULE_DIR, "scripts/cards/chat.mjs"));
  adapters = await import(path.join(MODULE_DIR, "scripts/adapters/index.mjs"));
  writes = await import(path.join(MODULE_DIR, "scripts/foundry/world-writes.mjs"));
  tokens = await import(path.join(MODULE_DIR, "scripts/scene/tokens.mjs"));
  compat = await import(path.join(MODULE_DIR, "scripts/foundry/compat.mjs"));
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
    const message = await cards.handleCardEmit(bridge, { seq: 3, world: "w", writer: GM.id, op: "create", card_id: "w.a1", card: rolledCard() });
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
    reroll.actor = { ...reroll.actor, dice: [-1, -1, 0, 0], dice_total: -2, total: { value: 1 } };
    await cards.handleCardEmit(bridge, { seq: 4, world: "w", writer: GM.id, op: "update", card_id: "w.a1", card: reroll });
    await settle();
    assert.equal(sceneRolls().length, recorded);
    assert.deepEqual(foundry.log.hookErrors.slice(errorsBefore), []);
    assert.deepEqual(message.rolls[0].dice[0].results.map((r) => r.result), [-1, -1, 0, 0]);
  });

  test("a world whose Fate formulae list other heads (e.g. a negative skill's) still leaves the bridge's rolls alone", async () => {
    const { isFcoFateRoll } = await import("./support/fco-stand-in.mjs");
    await foundry.game.settings.set("fate-core-official", "fu-roll-formulae", "4dF, , -1, 0, 3, fate");
    for (const total of [-3, 0, 4]) {
      const data = cards.rollData(cardSide({ dice: [0, 0, 0, 0], dice_total: 0, total: { value: total, label: "" } }));
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
    const { candidates } = await import(path.join(MODULE_DIR, "scripts/actions/roll-dialog.mjs"));
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
    await writes.handleActorPatch(bridge, patch(60, a.uuid, "Bloody Nose", null));
    await writes.handleActorPatch(bridge, patch(61, b.uuid, null, "Broken Arm"));
    await writes.handleTokenStatus(bridge, { seq: 62, world: "w", writer: "gm", actor_id: a.uuid, statuses: { mild: true } });
    await writes.handleTokenStatus(bridge, { seq: 63, world: "w", writer: "gm", actor_id: b.uuid, statuses: { moderate: true } });
    await writes.handleTokenStatus(bridge, { seq: 64, world: "w", writer: "gm", actor_id: c.uuid, statuses: { boost: true } });
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
    assert.equal(await writes.handleActorPatch(bridge, patch(60, a.uuid, "Bloody Nose", null)), null);
  });
});

describe("the adapter reads all of FCO's sheet (issue 8.6)", () => {
  const READER = "actorSheetRead01";
  const data = () => adapters.adapterFor().toActorData(foundry.game.actors.get(READER));

  test("a ticked consequence with no name fills its slot; an as_name track is named by the track, filled while ticked; string aspect modes count", () => {
    const slots = data().consequences.map((c) => [c.severity, c.name ?? null]);
    assert.deepEqual(slots, [
      [2, "Mild (not named on the sheet)"],
      [4, "Cracked Ribs"],
      [4, "Exhausted"],
      [6, null],
      [2, null]
    ]);
  });

  test("hidden skills are neither synced nor offered; the boost counter is not read", () => {
    assert.deepEqual(Object.keys(data().skills).sort(), ["Athletics", "Lore", "Will"]);
    const el = foundry.renderActorSheet(READER);
    assert.deepEqual([...el.querySelectorAll('[name="skill"]')].map((s) => s.dataset.skillname), ["Athletics", "Lore", "Will"]);
    assert.equal("boosts" in data(), false);
  });

  test("an actor.patch writes names where FCO keeps them, only boxes on as_name tracks, and its boosts into the counter", async () => {
    const actor = foundry.game.actors.get(READER);
    const ids = data().consequences.map((c) => c.id);
    const slot = (i, name) => ({ id: ids[i], severity: data().consequences[i].severity, name, status: name ? "fresh" : null });
    const patch = {
      seq: 80, world: "w", writer: "gm", actor_id: READER, fate_points: 2, pending_fate_points: 0, stress: [], overwhelmed: false, boosts: 1,
      consequences: [slot(0, "Mild (not named on the sheet)"), slot(1, null), slot(2, "Exhausted"), slot(3, "Deep Gash"), slot(4, "Old Scar")]
    };
    const update = adapters.adapterFor().patchUpdate(actor, patch);
    assert.equal(update["system.tracks.TWlsZA==.aspect.name"], "", "the placeholder is never written back");
    assert.deepEqual(update["system.tracks.TWlsZA==.box_values"], [true]);
    assert.equal(update["system.tracks.TW9kZXJhdGU=.aspect.name"], "");
    assert.deepEqual(update["system.tracks.TW9kZXJhdGU=.box_values"], [false]);
    assert.equal("system.tracks.Exhausted.aspect.name" in update, false, "an as_name track keeps its own name");
    assert.deepEqual(update["system.tracks.Wounded.box_values"], [true]);
    assert.equal("system.tracks.Wounded.aspect.name" in update, false);
    assert.deepEqual(update["system.tracks.Legacy.aspect"], { name: "Old Scar", when_marked: true, as_name: false }, "a string aspect mode becomes FCO's object form");
    // The sheet's two boosts were given in FCO (issue 25): they stay beside the bridge's one.
    assert.equal(update["system.details.fatePoints.boosts"], 3);
    await writes.handleActorPatch(bridge, patch);
    assert.equal(actor.system.details.fatePoints.boosts, 3);
    assert.equal(actor.system.tracks.Wounded.name, "Wounded");
    // Read back: the sheet now says what the bridge said.
    assert.deepEqual(data().consequences.map((c) => c.name ?? null), ["Mild (not named on the sheet)", null, "Exhausted", "Wounded", "Old Scar"]);
  });
});
