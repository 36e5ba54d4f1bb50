// Integration: stress per track in a Fate Condensed conflict (R5.10, R11.3), against a real bridge
// (--dev-dice, queued dice) and a fake Foundry client running the module's real code with
// fate-core-official characters shaped as FCO 4.7 stores its Core and Condensed defaults
// (tests/js/fixtures/fco-*.json). The GM starts a physical conflict, then a mental one; each hit
// is absorbed from the card's absorb picker, which offers only the tracks of the hit's kind; the
// bridge's actor.patch ticks exactly those boxes on the FCO sheet; overflow goes to consequences;
// a hit nothing of its kind can absorb takes the target out while its other boxes stay free.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { addWorld, freePort, startBridge, tempDataDir } from "./support/bridge-process.mjs";
import { FoundryClient } from "./support/clients.mjs";
import { check, loadValidators } from "./support/schemas.mjs";
import { readJson } from "./support/node-foundry.mjs";

const GM = { id: "stressGmUser0001", name: "Active GM", isGM: true };

let validators;
let bridge;
let gm;
let brawler;
let scrapper;

const queue = async (rolls) => assert.equal((await gm.rpc("call", "dev.queue_dice", { rolls })).ok, true);
const tracks = async () => (await gm.rpc("actor", scrapper._id)).system.tracks;
const marks = (all, name) => all[name].box_values;

before(async () => {
  validators = await loadValidators();
  brawler = await readJson("tests/js/fixtures/fco-fate-core.json");
  scrapper = await readJson("tests/js/fixtures/fco-fate-condensed.json");
  const dataDir = await tempDataDir();
  const port = await freePort();
  const world = await addWorld(dataDir, "stress-world", "Stress World", "fate-condensed");
  bridge = await startBridge({ dataDir, port });
  gm = await FoundryClient.launch("stress-gm", {
    users: [GM], userId: GM.id, activeGM: GM.id, systemId: "fate-core-official", actors: [brawler, scrapper],
    settings: { "fate-bridge.bridgeUrl": `http://127.0.0.1:${port}`, "fate-bridge.worldId": world.id, "fate-bridge.gmKey": world.key }
  });
  await gm.rpc("start");
  await gm.waitFor("hello", (h) => h !== null, { what: "gm hello" });
});

after(async () => {
  await gm?.close();
  await bridge?.stop();
});

async function startConflict(kind) {
  const sides = [{ name: "Brawlers", members: [brawler._id] }, { name: "Scrappers", members: [scrapper._id] }];
  await gm.rpc("api", "conflict.start", { name: `A ${kind} fight`, kind, sides });
  const sent = await gm.waitFor("sent", (s) => s.filter((x) => x.event === "conflict.start" && x.ack).length > 0 && s.filter((x) => x.event === "conflict.start").every((x) => x.ack), { what: "conflict.start" });
  const ack = sent.filter((x) => x.event === "conflict.start").at(-1).ack;
  assert.equal(ack.ok, true, JSON.stringify(ack));
  return ack.data.conflicts.find((c) => c.kind === kind && c.name === `A ${kind} fight`);
}

/** The brawler (Fight +4) attacks the scrapper against passive Fair (+2) on 0000: a 2-shift hit. */
async function attack() {
  await queue([[0, 0, 0, 0]]);
  const data = await gm.rpc("startAction", brawler._id, "Fight", { type: "attack", opposition: 2, targetId: scrapper._id });
  assert.ok(data?.card_id, "the attack started");
  assert.ok(await gm.rpc("pass", data.action_id, "actor"), "the GM passes for the attacker");
  return data;
}

async function cardState(cardId, state) {
  return gm.waitFor("messages", (ms) => ms.find((m) => m.flags["fate-bridge"].cardId === cardId)?.flags["fate-bridge"].card?.state === state, { what: `card ${state}` })
    .then((ms) => ms.find((m) => m.flags["fate-bridge"].cardId === cardId));
}

/** Open the card's absorb picker and answer it: `check` box names, `values` consequence names. */
async function absorbFromCard(cardId, { check: boxes = [], values = {} }) {
  await gm.rpc("clickCard", cardId, 'button[data-fb="absorb"]');
  return gm.rpc("answerDialog", values, "absorb", { check: boxes });
}

const absorbs = async () => (await gm.rpc("sent")).filter((s) => s.event === "action.absorb");
/** The n-th action.absorb the GM's client sent (1-based), once its ack is in. */
const absorbSent = async (n) => (await gm.waitFor("sent", (s) => s.filter((x) => x.event === "action.absorb")[n - 1]?.ack, { what: `absorb ${n} acked` }))
  .filter((x) => x.event === "action.absorb")[n - 1];

describe("stress per track in a Fate Condensed conflict (R5.10, R11.3)", () => {
  let ids;
  let physicalConflict;

  test("the GM syncs both FCO characters with their named tracks, kinds and box values", async () => {
    physicalConflict = await startConflict("physical");
    assert.ok(physicalConflict?.id);
    const synced = (await gm.rpc("sent")).filter((s) => s.event === "actor.sync").map((s) => s.payload.actor);
    const target = synced.filter((a) => a.id === scrapper._id).at(-1);
    assert.deepEqual(target.stress.map((t) => [t.name, t.kind, t.boxes.map((b) => b.value)]), [["Physical Stress", "physical", [1, 1, 1, 1]], ["Mental Stress", "mental", [1, 1, 1]]]);
    const attacker = synced.filter((a) => a.id === brawler._id).at(-1);
    assert.deepEqual(attacker.stress.map((t) => [t.name, t.kind, t.boxes.map((b) => b.value)]), [["Physical Stress", "physical", [1, 2, 3, 4]], ["Mental Stress", "mental", [1, 2, 3]]]);
    const state = await gm.rpc("call", "world.state", {});
    ids = Object.fromEntries(state.data.characters.find((c) => c.id === scrapper._id).stress.map((t) => [t.kind, t.id]));
  });

  test("a physical hit: only the physical track is offered, a short absorb is refused, two 1-shift boxes take it, and only those boxes are ticked on the sheet", async () => {
    const data = await attack();
    assert.equal(data.card.attack_kind, "physical", "the conflict's kind");
    await cardState(data.card_id, "absorbing");
    const before = await tracks();

    const n = (await absorbs()).length;
    const short = await absorbFromCard(data.card_id, { check: [`stress-${ids.physical}-0`] });
    assert.match(short.text, /must absorb a physical hit of 2 shifts/);
    assert.match(short.text, /Physical Stress 1 1 1 1/);
    assert.doesNotMatch(short.text, /Mental Stress/);
    const refusedAbsorb = await absorbSent(n + 1);
    assert.equal(refusedAbsorb.ack.ok, false);
    assert.match(refusedAbsorb.ack.error.message, /The hit is 2 shifts; that absorbs only 1/);
    assert.ok((await gm.rpc("notifications")).some((x) => /that absorbs only 1/.test(x.message)), "the GM reads the bridge's reason");
    assert.deepEqual(await tracks(), before, "a refused absorb changes nothing");

    await absorbFromCard(data.card_id, { check: [`stress-${ids.physical}-0`, `stress-${ids.physical}-1`] });
    const sent = await absorbSent(n + 2);
    assert.equal(sent.ack.ok, true, JSON.stringify(sent.ack));
    assert.deepEqual(sent.payload.stress, [{ track: ids.physical, boxes: [0, 1] }]);
    const message = await cardState(data.card_id, "resolved");
    assert.ok(message.card.effects.some((e) => /Condensed Scrapper marks 2 boxes of Physical Stress, absorbing 2 shifts/.test(e)), JSON.stringify(message.card.effects));
    const after = await gm.waitFor("actor", (a) => a.system.tracks["Physical Stress"].box_values[0], { args: [scrapper._id], what: "physical boxes written" });
    assert.deepEqual(marks(after.system.tracks, "Physical Stress"), [true, true, false, false]);
    assert.deepEqual(marks(after.system.tracks, "Mental Stress"), [false, false, false], "the mental track is not ticked");
    const patchUpdate = (await gm.rpc("log")).actorUpdates.filter((u) => u.id === scrapper._id && u.options.fateBridgeWrite).at(-1);
    assert.deepEqual(Object.keys(patchUpdate.changes).filter((k) => k.endsWith(".box_values") && !/Consequence/.test(k)), ["system.tracks.Physical Stress.box_values"]);
  });

  test("a mental conflict: its attack is mental; a physical box is refused by the bridge; one mental box plus the mild consequence absorb the hit", async () => {
    await gm.rpc("api", "conflict.end", physicalConflict.id);
    await startConflict("mental");

    const data = await attack();
    assert.equal(data.card.attack_kind, "mental");
    await cardState(data.card_id, "absorbing");
    // A physical box sent straight to the bridge is refused: the track can't take a mental hit.
    const wrong = await gm.rpc("call", "action.absorb", { action_id: data.action_id, stress: [{ track: ids.physical, boxes: [2, 3] }] });
    assert.equal(wrong.ok, false);
    assert.equal(wrong.error.field, "stress");
    assert.match(wrong.error.message, /cannot absorb a mental hit/);

    const mild = (await gm.rpc("call", "world.state", {})).data.characters.find((c) => c.id === scrapper._id).consequences.find((c) => c.severity === 2);
    const n = (await absorbs()).length;
    const picker = await absorbFromCard(data.card_id, { check: [`stress-${ids.mental}-0`], values: { [`slot-${mild.id}`]: "Rattled" } });
    assert.match(picker.text, /must absorb a mental hit of 2 shifts/);
    assert.match(picker.text, /Mental Stress 1 1 1/);
    assert.doesNotMatch(picker.text, /Physical Stress/);
    const { ack } = await absorbSent(n + 1);
    assert.equal(ack.ok, true, JSON.stringify(ack));
    const after = await gm.waitFor("actor", (a) => a.system.tracks["Mental Stress"].box_values[0], { args: [scrapper._id], what: "mental box written" });
    assert.deepEqual(marks(after.system.tracks, "Mental Stress"), [true, false, false]);
    assert.deepEqual(marks(after.system.tracks, "Physical Stress"), [true, true, false, false], "physical boxes as they were");
    assert.equal(after.system.tracks["Mild Consequence"].aspect.name, "Rattled");
  });

  test("a mental hit with no mental box or slot left takes the target out, its free physical boxes untouched", async () => {
    // The GM fills the sheet: every mental box and the other consequences (the sheet owns them).
    await gm.rpc("editActor", scrapper._id, {
      "system.tracks.Mental Stress.box_values": [true, true, true],
      "system.tracks.Moderate Consequence.aspect.name": "Shaken Faith",
      "system.tracks.Severe Consequence.aspect.name": "Nightmares"
    });
    const data = await attack();
    assert.equal(data.card.attack_kind, "mental");
    const message = await cardState(data.card_id, "resolved");
    assert.ok(message.card.effects.some((e) => /Condensed Scrapper is (overwhelmed|taken out)/.test(e)), JSON.stringify(message.card.effects));
    const after = await gm.waitFor("actor", (a) => a.flags["fate-bridge"]?.overwhelmed === true, { args: [scrapper._id], what: "taken out" });
    assert.deepEqual(marks(after.system.tracks, "Physical Stress"), [true, true, false, false], "two physical boxes free, unused");
    assert.ok(after.statuses.includes("fate-bridge-overwhelmed"));
  });

  test("everything the GM sent matches the bridge's schemas", async () => {
    for (const { event, payload, ack } of await gm.rpc("sent")) {
      check(validators.client[event], payload, `${event} payload`);
      if (ack) check(validators.ack, ack, `${event} ack`);
    }
  });
});
