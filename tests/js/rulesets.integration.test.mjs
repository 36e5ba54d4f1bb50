// Integration: the three Fate SRD rulesets (R13) chosen from Foundry and played in a conflict,
// against a real bridge (--dev-dice, queued dice: exact shifts) and a fake Foundry GM client
// running the module's real code. The world is fate-core-official's, with FCO's world data item
// holding the Fate Condensed skill and track lists, and one character per framework shaped as
// FCO 4.7 stores it (tests/js/fixtures/fco-*.json, read through the module's FCO adapter), each
// owned by a player, with an NPC foe of its own framework.
//
// The bridge's world starts Unwritten. On connecting the GM is offered FCO's game (R13.9) and
// confirms; later the GM switches with the module's setting and with the API (world.ruleset),
// and a switch while a conflict is open is refused and the setting goes back. In each ruleset the
// foe hits the character, who absorbs by that ruleset's stress rule (R13.2), takes a mild
// consequence, and concedes: the conflict ends at once and pays 1 + 1 (R13.6); stress clears
// when the conflict ends under Fate Core, at the scene's end otherwise (R13.4).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { addWorld, freePort, startBridge, tempDataDir } from "./support/bridge-process.mjs";
import { FoundryClient } from "./support/clients.mjs";
import { readJson } from "./support/node-foundry.mjs";
import { check, loadValidators } from "./support/schemas.mjs";

const GM = { id: "rulesGmUser00001", name: "Active GM", isGM: true };
const PAT = { id: "rulesPatUser0001", name: "Pat", isGM: false };

let validators;
let bridge;
let gm;
const pc = {};
const foe = {};

/** The fixture as Pat's character, and an NPC copy of it with its own id and name. */
function pair(fixture, foeId, tweak = () => {}) {
  const mine = { ...structuredClone(fixture), ownership: { default: 0, [PAT.id]: 3 } };
  const theirs = { ...structuredClone(fixture), _id: foeId, name: `${fixture.name}'s Foe`, ownership: { default: 0 } };
  tweak(theirs);
  return [mine, theirs];
}

/** An intent from the GM's client; this suite reads the world after every step, so a read the
 * bridge's rate limit refuses waits and goes again, as a person clicking would. */
async function call(event, payload = {}) {
  for (let attempt = 0; ; attempt += 1) {
    const ack = await gm.rpc("call", event, payload);
    if (ack?.error?.code !== "rate_limited" || attempt >= 20) return ack;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
const queue = async (...rolls) => assert.equal((await call("dev.queue_dice", { rolls })).ok, true);
const character = async (id) => (await call("world.state")).data.characters.find((c) => c.id === id);
const marked = (c, kind) => c.stress.find((t) => t.kind === kind).boxes.map((b) => b.marked);
const sheetTrack = (actor, name) => Object.values(actor.system.tracks).find((t) => t.name === name);
const setting = () => gm.rpc("runMacro", 'return game.settings.get("fate-bridge", "ruleset");');
// What the GM's client sent of `event` and had answered, leaving out the attempts the bridge's
// rate limit refused unread: the module sends those again (same request id) after a pause.
const answered = (sent, event) => sent.filter((x) => x.event === event && x.ack && x.ack.error?.code !== "rate_limited");
const sentOf = async (event) => answered(await gm.rpc("sent"), event);

/** The last `event` the GM's client sent, once its answer is in. */
async function lastSent(event, count) {
  const sent = await gm.waitFor("sent", (s) => answered(s, event).length >= count, { what: `${event} #${count}` });
  return answered(sent, event).at(-1);
}

/** The world's current conflict as the scene says. */
async function conflictNow(id) {
  const scene = (await call("scene.read")).data;
  return scene.conflicts.find((c) => c.id === id);
}

const cardState = async (cardId, states) => (await gm.waitFor("messages", (ms) => states.includes(ms.find((m) => m.flags["fate-bridge"]?.cardId === cardId)?.flags["fate-bridge"].card?.state), { what: `card ${states}` }))
  .find((m) => m.flags["fate-bridge"].cardId === cardId).flags["fate-bridge"].card;

/**
 * The foe attacks with `skill` (rating `rating`) on 0000 against passive opposition: exactly
 * `shifts` shifts. The GM passes (and, on a hit with style, takes the full hit rather than a
 * boost); the hit waits for the target's absorb.
 */
async function hit(attacker, skill, rating, target, shifts) {
  await queue([0, 0, 0, 0]);
  const data = await gm.rpc("startAction", attacker, skill, { type: "attack", opposition: rating - shifts, targetId: target });
  assert.ok(data?.action_id, `the attack started: ${JSON.stringify(data)}`);
  assert.ok(await gm.rpc("pass", data.action_id, "actor"), "the GM passes for the attacker");
  const card = await cardState(data.card_id, ["absorbing", "choosing"]);
  if (card.state === "choosing") {
    assert.equal(card.pending_choice, "attack_style");
    assert.equal((await call("action.choose", { action_id: data.action_id, choice: "full_hit" })).ok, true);
    await cardState(data.card_id, ["absorbing"]);
  }
  assert.equal(card.shifts, shifts);
  return data;
}

const absorb = (actionId, { stress = [], consequences = {} }) => call("action.absorb", { action_id: actionId, stress, consequences });

async function mildSlot(id) {
  return (await character(id)).consequences.find((s) => s.severity === 2 && s.status === "free" && !s.harm)
    ?? (await character(id)).consequences.find((s) => s.severity === 2);
}

/** Concede from the scene panel's button for `id` in conflict `conflictId`. */
async function concedeFromPanel(conflictId, id) {
  const before = (await sentOf("conflict.concede")).length;
  await gm.rpc("clickPanel", `[data-action="conflictConcede"][data-conflict="${conflictId}"][data-character="${id}"]`);
  const sent = await lastSent("conflict.concede", before + 1);
  assert.equal(sent.ack.ok, true, JSON.stringify(sent.ack));
  assert.deepEqual({ ...sent.payload, request_id: undefined }, { request_id: undefined, conflict_id: conflictId, character_id: id });
  return sent.ack.data;
}

async function switchedTo(ruleset) {
  await gm.waitFor("hello", (h) => h?.ruleset === ruleset && h?.rules?.id === ruleset, { what: `hello on ${ruleset}` });
  assert.equal(await setting(), ruleset, "the setting names the bridge's ruleset");
}

before(async () => {
  validators = await loadValidators();
  const core = await readJson("tests/js/fixtures/fco-fate-core.json");
  const condensed = await readJson("tests/js/fixtures/fco-fate-condensed.json");
  const accelerated = await readJson("tests/js/fixtures/fco-fate-accelerated.json");
  const dresden = await readJson("tests/js/fixtures/fco-dresden-files-accelerated.json");
  // R13.5: the Core foe notices first (Notice 2 against 1).
  [pc.core, foe.core] = pair(core, "fcoCoreFoe000001", (a) => { a.system.skills.Notice.rank = 2; });
  [pc.condensed, foe.condensed] = pair(condensed, "fcoCondFoe000001");
  [pc.accelerated, foe.accelerated] = pair(accelerated, "fcoAccelFoe00001");
  [pc.dresden, foe.dresden] = pair(dresden, "fcoDresdenFoe001");
  const dataDir = await tempDataDir();
  const port = await freePort();
  const world = await addWorld(dataDir, "rulesets-world", "Rulesets World");
  bridge = await startBridge({ dataDir, port });
  gm = await FoundryClient.launch("rulesets-gm", {
    users: [GM, PAT], userId: GM.id, activeGM: GM.id, systemId: "fate-core-official",
    actors: [pc.core, foe.core, pc.condensed, foe.condensed, pc.accelerated, foe.accelerated, pc.dresden, foe.dresden],
    // What FCO's world setup wrote after the GM loaded Fate Condensed's skills and tracks.
    fcoWorldData: { skills: condensed.system.skills, tracks: condensed.system.tracks },
    settings: {
      "fate-bridge.bridgeUrl": `http://127.0.0.1:${port}`, "fate-bridge.worldId": world.id, "fate-bridge.gmKey": world.key,
      "fate-bridge.connectionMode": "direct"
    }
  });
  await gm.rpc("start");
  await gm.waitFor("hello", (h) => h !== null, { what: "gm hello" });
});

after(async () => {
  await gm?.close();
  await bridge?.stop();
});

describe("R13.9: the GM chooses the ruleset from Foundry", () => {
  test("connecting to an Unwritten world, the GM is offered FCO's game (Fate Condensed) and confirms", async () => {
    assert.equal((await gm.rpc("hello")).ruleset, "unwritten");
    assert.equal(await gm.rpc("api", "ruleset.propose"), "fate-condensed", "FCO's world lists say Fate Condensed");
    const offer = await gm.rpc("answerDialog", {}, "switch");
    assert.equal(offer.rejectClose, false);
    assert.match(offer.text, /fate-core-official game is Fate Condensed, but the bridge plays Unwritten/);
    const sent = await lastSent("world.ruleset", 1);
    assert.equal(sent.ack.ok, true, JSON.stringify(sent.ack));
    assert.equal(sent.payload.ruleset, "fate-condensed");
    assert.deepEqual([sent.ack.data.ruleset, sent.ack.data.changed, sent.ack.data.rules.turn_order], ["fate-condensed", true, "elective"]);
    await switchedTo("fate-condensed");
    assert.equal((await sentOf("world.ruleset")).length, 1, "one world.ruleset: the setting's own change sends nothing more");
    assert.ok((await gm.rpc("notifications")).some((n) => /now plays Fate Condensed/.test(n.message)));
  });
});

describe("Fate Condensed: elective order, three one-shift boxes, stress clears at the scene's end", () => {
  let conflictId;

  test("the GM starts the conflict from the panel and picks who opens; the foe picks who goes next (R13.5)", async () => {
    await gm.rpc("openScene");
    await gm.waitFor("panel", (p) => p?.forms.includes("conflict"), { what: "the conflict form" });
    await gm.rpc("panelField", '[name="conflictName"]', "Alley scrap");
    await gm.rpc("panelField", '[name="conflictKind"]', "physical");
    await gm.rpc("panelField", `[name="conflictMember-${pc.condensed._id}"]`, "1");
    await gm.rpc("panelField", `[name="conflictMember-${foe.condensed._id}"]`, "2");
    await gm.rpc("panelField", '[name="conflictFirst"]', foe.condensed._id);
    await gm.rpc("clickPanel", '[data-action="startConflict"]');
    const start = await lastSent("conflict.start", 1);
    assert.equal(start.ack.ok, true, JSON.stringify(start.ack));
    assert.equal(start.payload.first_id, foe.condensed._id);
    const conflict = start.ack.data.conflicts.find((c) => c.state === "open");
    conflictId = conflict.id;
    assert.equal(conflict.order_method, "elective");
    assert.equal(conflict.current, foe.condensed._id, "the GM's pick opens");

    // The panel asks who goes next: only the one who has not acted.
    const panel = await gm.waitFor("panel", (p) => p.forms.includes(`next-${conflictId}`), { what: "the next picker" });
    assert.match(panel.conflicts, /Condensed Scrapper's Foe's turn/);
    await gm.rpc("panelField", `form[data-form="next-${conflictId}"] [name="nextId"]`, pc.condensed._id);
    await gm.rpc("clickPanel", `[data-action="conflictNext"][data-conflict="${conflictId}"]`);
    const next = await lastSent("conflict.next", 1);
    assert.equal(next.ack.ok, true, JSON.stringify(next.ack));
    assert.equal(next.payload.next_id, pc.condensed._id);
    const now = next.ack.data.conflicts.find((c) => c.id === conflictId);
    assert.equal(now.current, pc.condensed._id);
    assert.deepEqual(now.acted, [foe.condensed._id]);
    await gm.waitFor("panel", (p) => /Condensed Scrapper's turn/.test(p.conflicts) && /acted/.test(p.conflicts), { what: "the panel shows the turn and who acted" });
  });

  test("a 3-shift hit takes three one-shift boxes at once (R13.2); the sheet's boxes follow", async () => {
    const fp = (await character(pc.condensed._id)).fate_points;
    const track = (await character(pc.condensed._id)).stress.find((t) => t.kind === "physical");
    assert.deepEqual(track.boxes.map((b) => b.value), [1, 1, 1, 1], "the FCO sheet's four boxes (Physique Average)");
    const first = await hit(foe.condensed._id, "Fight", 3, pc.condensed._id, 3);
    const ack = await absorb(first.action_id, { stress: [{ track: track.id, boxes: [0, 1, 2] }] });
    assert.equal(ack.ok, true, JSON.stringify(ack));
    assert.deepEqual(marked(await character(pc.condensed._id), "physical"), [true, true, true, false]);
    await gm.waitFor("actor", (a) => sheetTrack(a, "Physical Stress").box_values.filter(Boolean).length === 3, { args: [pc.condensed._id], what: "the sheet's boxes ticked" });

    const second = await hit(foe.condensed._id, "Fight", 3, pc.condensed._id, 2);
    const mild = await mildSlot(pc.condensed._id);
    assert.equal((await absorb(second.action_id, { consequences: { [mild.id]: "Split Lip" } })).ok, true);
    assert.equal((await character(pc.condensed._id)).fate_points, fp, "nothing paid yet");
  });

  test("conceding ends the conflict at once and pays 1 + 1 consequence (R13.6); stress stays until the scene ends (R13.4)", async () => {
    const fp = (await character(pc.condensed._id)).fate_points;
    const foeFp = (await character(foe.condensed._id)).fate_points;
    const data = await concedeFromPanel(conflictId, pc.condensed._id);
    const ended = data.conflicts.find((c) => c.id === conflictId);
    assert.equal(ended.state, "ended", "one side left: over without conflict.next");
    assert.deepEqual(ended.conceded, [pc.condensed._id]);
    const after = await character(pc.condensed._id);
    assert.equal(after.fate_points, fp + 2, "1 for conceding + 1 for the mild consequence");
    assert.equal((await character(foe.condensed._id)).fate_points, foeFp, "the foe receives nothing");
    await gm.waitFor("actor", (a) => a.system.details.fatePoints.current === fp + 2, { args: [pc.condensed._id], what: "the sheet's fate points" });
    assert.deepEqual(marked(after, "physical"), [true, true, true, false], "Condensed: stress stays after the conflict");

    const end = await call("scene.end", { scope: "scene", keep_aspects: [] });
    assert.equal(end.ok, true, JSON.stringify(end));
    assert.deepEqual(marked(await character(pc.condensed._id), "physical"), [false, false, false, false], "cleared at the scene's end");
    await gm.waitFor("actor", (a) => !sheetTrack(a, "Physical Stress").box_values.some(Boolean), { args: [pc.condensed._id], what: "the sheet's boxes cleared" });
  });
});

describe("Fate Core: switched with the setting, one box per hit, stress clears when the conflict ends", () => {
  let conflictId;
  let track;

  test("the GM picks Fate Core in the module's setting: world.ruleset follows", async () => {
    const before = (await sentOf("world.ruleset")).length;
    await gm.rpc("runMacro", 'await game.settings.set("fate-bridge", "ruleset", "fate-core");');
    const sent = await lastSent("world.ruleset", before + 1);
    assert.equal(sent.ack.ok, true, JSON.stringify(sent.ack));
    assert.equal(sent.payload.ruleset, "fate-core");
    assert.deepEqual([sent.ack.data.rules.turn_order, sent.ack.data.rules.full_defense, sent.ack.data.rules.stress_rule], ["ranked", true, "one_box"]);
    await switchedTo("fate-core");
  });

  test("a ranked conflict: full defense on the foe's turn from the panel (R13.7); a switch while it is open is refused and the setting goes back", async () => {
    const started = await gm.rpc("api", "conflict.start", { name: "Dockside brawl", kind: "physical", sides: [{ name: "Pat", members: [pc.core._id] }, { name: "Foes", members: [foe.core._id] }] });
    const conflict = started.conflicts.find((c) => c.state === "open");
    conflictId = conflict.id;
    assert.equal(conflict.order_method, "ranked");
    assert.equal(conflict.order_skill, "Notice");
    assert.equal(conflict.current, foe.core._id, "Notice 2 before Notice 1");
    assert.equal(conflict.clears_stress, true);

    const panel = await gm.waitFor("panel", (p) => p.actions.some((a) => a.action === "conflictFullDefense"), { what: "the full defense button" });
    assert.deepEqual(panel.actions.filter((a) => a.action === "conflictFullDefense").map((a) => a.character), [foe.core._id], "only on the current character");
    assert.ok(!panel.forms.includes(`next-${conflictId}`), "ranked order: no next picker");
    await gm.rpc("clickPanel", `[data-action="conflictFullDefense"][data-character="${foe.core._id}"]`);
    const fd = await lastSent("conflict.full_defense", 1);
    assert.equal(fd.ack.ok, true, JSON.stringify(fd.ack));
    assert.deepEqual(fd.ack.data.conflicts.find((c) => c.id === conflictId).full_defense, [foe.core._id]);
    await gm.waitFor("panel", (p) => /full defense/.test(p.conflicts), { what: "the panel shows full defense" });

    // R13.9: no switch while the conflict is open.
    const before = (await sentOf("world.ruleset")).length;
    await gm.rpc("runMacro", 'await game.settings.set("fate-bridge", "ruleset", "fate-accelerated");');
    const refused = await lastSent("world.ruleset", before + 1);
    assert.equal(refused.ack.ok, false);
    assert.equal(refused.ack.error.code, "wrong_state");
    await gm.waitFor("notifications", (ns) => ns.some((n) => n.type === "error" && /rules stay as they are/.test(n.message) && /Fate Accelerated/.test(n.message)), { what: "the refusal shown" });
    await gm.waitFor("runMacro", (v) => v === "fate-core", { args: ['return game.settings.get("fate-bridge", "ruleset");'], what: "the setting back to Fate Core" });
    assert.equal((await gm.rpc("hello")).ruleset, "fate-core");
  });

  test("a 3-shift hit takes the 3-box (the 4-box refused while a smaller one fits); the next 3-shift hit, the 3-box marked, takes the 4-box (R13.2)", async () => {
    track = (await character(pc.core._id)).stress.find((t) => t.kind === "physical");
    assert.deepEqual(track.boxes.map((b) => b.value), [1, 2, 3, 4], "the FCO sheet's escalating boxes (Physique Good)");
    const first = await hit(foe.core._id, "Fight", 4, pc.core._id, 3);
    const tooBig = await absorb(first.action_id, { stress: [{ track: track.id, boxes: [3] }] });
    assert.equal(tooBig.ok, false, "the smallest free box that fits");
    assert.equal(tooBig.error.field, "stress");
    const two = await absorb(first.action_id, { stress: [{ track: track.id, boxes: [0, 1] }] });
    assert.equal(two.ok, false, "one box per hit");
    assert.equal((await absorb(first.action_id, { stress: [{ track: track.id, boxes: [2] }] })).ok, true);

    const second = await hit(foe.core._id, "Fight", 4, pc.core._id, 3);
    const ack = await absorb(second.action_id, { stress: [{ track: track.id, boxes: [3] }] });
    assert.equal(ack.ok, true, JSON.stringify(ack));
    assert.deepEqual(marked(await character(pc.core._id), "physical"), [false, false, true, true]);
    await gm.waitFor("actor", (a) => sheetTrack(a, "Physical Stress").box_values.join() === "false,false,true,true", { args: [pc.core._id], what: "the sheet's 3- and 4-box ticked" });

    const third = await hit(foe.core._id, "Fight", 4, pc.core._id, 2);
    const mild = await mildSlot(pc.core._id);
    assert.equal((await absorb(third.action_id, { consequences: { [mild.id]: "Cracked Rib" } })).ok, true);
  });

  test("conceding ends the conflict: 1 + 1 fate points, and Core's stress clears then (R13.4, R13.6)", async () => {
    const fp = (await character(pc.core._id)).fate_points;
    const data = await concedeFromPanel(conflictId, pc.core._id);
    assert.equal(data.conflicts.find((c) => c.id === conflictId).state, "ended");
    const after = await character(pc.core._id);
    assert.equal(after.fate_points, fp + 2);
    assert.deepEqual(marked(after, "physical"), [false, false, false, false], "cleared when the conflict ended");
    await gm.waitFor("actor", (a) => !sheetTrack(a, "Physical Stress").box_values.some(Boolean) && a.system.details.fatePoints.current === fp + 2, { args: [pc.core._id], what: "the sheet cleared and paid" });
    assert.ok(after.consequences.some((s) => s.severity === 2 && s.name === "Cracked Rib"), "the consequence stays");
    assert.equal((await call("scene.end", { scope: "scene", keep_aspects: [] })).ok, true);
  });
});

describe("Fate Accelerated: switched from the API, one box per hit of three, stress clears at the scene's end", () => {
  let conflictId;

  test("api.ruleset.set switches the world", async () => {
    const data = await gm.rpc("api", "ruleset.set", "fate-accelerated");
    assert.deepEqual([data.ruleset, data.changed, data.rules.ratings, data.rules.full_defense], ["fate-accelerated", true, "approaches", false]);
    await switchedTo("fate-accelerated");
  });

  test("a 3-shift hit takes box 3 alone (1 + 2 refused); a mild consequence takes the next; conceding pays 1 + 1 at once; the scene's end clears the box", async () => {
    const started = await gm.rpc("api", "conflict.start", { name: "Rooftop duel", kind: "physical", sides: [{ name: "Pat", members: [pc.accelerated._id] }, { name: "Foes", members: [foe.accelerated._id] }] });
    const conflict = started.conflicts.find((c) => c.state === "open");
    conflictId = conflict.id;
    assert.equal(conflict.order_skill, "Quick");
    assert.equal(conflict.clears_stress, false);
    const panel = await gm.waitFor("panel", (p) => p.actions.some((a) => a.action === "conflictConcede" && a.conflict === conflictId), { what: "the accelerated conflict on the panel" });
    assert.ok(!panel.actions.some((a) => a.action === "conflictFullDefense"), "Fate Accelerated has no full defense");

    const track = (await character(pc.accelerated._id)).stress[0];
    assert.deepEqual([track.kind, track.boxes.map((b) => b.value)], ["any", [1, 2, 3]]);
    const first = await hit(foe.accelerated._id, "Quick", 3, pc.accelerated._id, 3);
    assert.equal((await absorb(first.action_id, { stress: [{ track: track.id, boxes: [0, 1] }] })).ok, false, "one box per hit");
    assert.equal((await absorb(first.action_id, { stress: [{ track: track.id, boxes: [2] }] })).ok, true);
    assert.deepEqual(marked(await character(pc.accelerated._id), "any"), [false, false, true]);
    await gm.waitFor("actor", (a) => sheetTrack(a, "Stress").box_values.join() === "false,false,true", { args: [pc.accelerated._id], what: "box 3 ticked on the sheet" });

    const second = await hit(foe.accelerated._id, "Quick", 3, pc.accelerated._id, 2);
    const mild = await mildSlot(pc.accelerated._id);
    assert.equal((await absorb(second.action_id, { consequences: { [mild.id]: "Winded" } })).ok, true);

    const fp = (await character(pc.accelerated._id)).fate_points;
    const data = await concedeFromPanel(conflictId, pc.accelerated._id);
    assert.equal(data.conflicts.find((c) => c.id === conflictId).state, "ended");
    const after = await character(pc.accelerated._id);
    assert.equal(after.fate_points, fp + 2);
    assert.deepEqual(marked(after, "any"), [false, false, true], "Accelerated: stress stays after the conflict");
    assert.equal((await conflictNow(conflictId)).state, "ended");

    assert.equal((await call("scene.end", { scope: "scene", keep_aspects: [] })).ok, true);
    assert.deepEqual(marked(await character(pc.accelerated._id), "any"), [false, false, false]);
    await gm.waitFor("actor", (a) => !sheetTrack(a, "Stress").box_values.some(Boolean), { args: [pc.accelerated._id], what: "the sheet's box cleared" });
  });

});

describe("Dresden Files Accelerated: FCO's fourth game, played by Fate Condensed's rules", () => {
  test("proposed as Fate Condensed; its one track of six one-shift boxes takes a 3-shift hit on three boxes; conceding pays 1", async () => {
    assert.equal(await gm.rpc("api", "ruleset.set", "fate-condensed").then((d) => d.ruleset), "fate-condensed");
    await switchedTo("fate-condensed");
    const started = await gm.rpc("api", "conflict.start", { name: "Warehouse ambush", kind: "physical", firstId: foe.dresden._id, sides: [{ name: "Pat", members: [pc.dresden._id] }, { name: "Foes", members: [foe.dresden._id] }] });
    const conflict = started.conflicts.find((c) => c.state === "open");
    assert.deepEqual([conflict.order_method, conflict.current], ["elective", foe.dresden._id]);

    const mine = await character(pc.dresden._id);
    const track = mine.stress.find((t) => t.kind === "any");
    assert.deepEqual(track.boxes.map((b) => b.value), [1, 1, 1, 1, 1, 1], "DFA's Stress: six one-shift boxes");
    assert.deepEqual(mine.consequences.map((s) => s.severity).sort(), [4, 6], "In Peril and Doomed");
    const blow = await hit(foe.dresden._id, "Intellect", 3, pc.dresden._id, 3);
    const ack = await absorb(blow.action_id, { stress: [{ track: track.id, boxes: [0, 1, 2] }] });
    assert.equal(ack.ok, true, JSON.stringify(ack));
    assert.deepEqual(marked(await character(pc.dresden._id), "any"), [true, true, true, false, false, false]);
    await gm.waitFor("actor", (a) => sheetTrack(a, "Stress").box_values.filter(Boolean).length === 3, { args: [pc.dresden._id], what: "the DFA sheet's boxes ticked" });

    const fp = (await character(pc.dresden._id)).fate_points;
    const data = await concedeFromPanel(conflict.id, pc.dresden._id);
    assert.equal(data.conflicts.find((c) => c.id === conflict.id).state, "ended");
    assert.equal((await character(pc.dresden._id)).fate_points, fp + 1, "1 for conceding, no consequence taken");
    assert.equal((await call("scene.end", { scope: "scene", keep_aspects: [] })).ok, true);
    assert.deepEqual(marked(await character(pc.dresden._id), "any"), [false, false, false, false, false, false]);
  });
});

describe("the wire", () => {
  test("everything the GM's client sent matches the bridge's schemas", async () => {
    for (const { event, payload, ack } of await gm.rpc("sent")) {
      assert.ok(validators.client[event], `an undefined event ${event}`);
      check(validators.client[event], payload, event);
      if (ack) check(validators.ack, ack, `${event} ack`);
      if (ack?.ok) check(validators.results[event], ack.data, `${event} result`);
    }
  });
});
