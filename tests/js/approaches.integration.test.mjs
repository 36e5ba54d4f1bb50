// Integration: R13.1 in a German Fate Accelerated world, against a real bridge (--dev-dice) and a
// fake Foundry GM client in German running the module's real code. The character is shaped as
// fate-core-official stores one set up in German: its skills are FCO's German approach names
// (game.system.lang `FateAcceleratedDefaultSkills`, tests/js/fixtures/fco-lang-de.json) and one
// skill that is not an approach ("Athletik"). The bridge decides: it rolls the approaches by the
// names it knows (Careful…Sneaky), which the module's FCO adapter gives FCO's German names, and it
// refuses any other skill.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { addWorld, freePort, startBridge, tempDataDir } from "./support/bridge-process.mjs";
import { FoundryClient } from "./support/clients.mjs";
import { readJson } from "./support/node-foundry.mjs";

const GM = { id: "approGmUser00001", name: "Spielleitung", isGM: true };
const APPROACHES = ["Careful", "Clever", "Flashy", "Forceful", "Quick", "Sneaky"];

let bridge;
let gm;
let german;
let hero;

const call = (event, payload = {}) => gm.rpc("call", event, payload);
const queue = async (...rolls) => assert.equal((await call("dev.queue_dice", { rolls })).ok, true);
const cardOf = (ms, cardId) => ms.find((m) => m.flags["fate-bridge"]?.cardId === cardId);

before(async () => {
  const systemLang = await readJson("tests/js/fixtures/fco-lang-de.json");
  german = Object.values(systemLang.FateAcceleratedDefaultSkills).map((s) => s.name);
  const ranks = [3, 2, 1, 1, 2, 0];
  const skills = Object.fromEntries(german.map((name, i) => [name, { name, rank: ranks[i] }]));
  skills.Athletik = { name: "Athletik", rank: 4 };
  hero = {
    _id: "approHeldin00001",
    name: "Heldin",
    type: "fate-core-official",
    ownership: { default: 0 },
    system: { details: { fatePoints: { current: 3, refresh: 3, boosts: 0 } }, skills, aspects: {}, stunts: {}, tracks: {} }
  };
  const dataDir = await tempDataDir();
  const port = await freePort();
  const world = await addWorld(dataDir, "approaches-world", "Approaches World", "fate-accelerated");
  bridge = await startBridge({ dataDir, port });
  gm = await FoundryClient.launch("approaches-gm", {
    users: [GM], userId: GM.id, activeGM: GM.id, systemId: "fate-core-official", actors: [hero],
    language: "de", systemLang,
    settings: {
      "fate-bridge.bridgeUrl": `http://127.0.0.1:${port}`, "fate-bridge.worldId": world.id, "fate-bridge.gmKey": world.key,
      "fate-bridge.connectionMode": "direct"
    }
  });
  await gm.rpc("start");
  await gm.waitFor("hello", (h) => h?.ruleset === "fate-accelerated", { what: "hello on Fate Accelerated" });
});

after(async () => {
  await gm?.close();
  await bridge?.stop();
});

// R13.1
describe("R13.1: a German Fate Accelerated character rolls its approaches, named in German", () => {
  test("the rules the bridge sends name the approaches it rolls (R13.1)", async () => {
    assert.deepEqual((await gm.rpc("hello")).rules.approaches, APPROACHES);
  });

  test("a click on Sorgfältig on the German sheet: the dialog offers the six approaches in German, and the bridge resolves the roll", async () => {
    await gm.rpc("renderSheet", hero._id);
    await gm.rpc("clickSkill", hero._id, german[0]);
    await queue([1, 1, 0, 0]);
    const dialog = await gm.rpc("answerDialog", { opposition: "2" });
    // The dialog's skill select: the approaches by the bridge's names, worded as FCO's German sheet.
    const options = [...dialog.html.matchAll(/<option value="([^"]+)"[^>]*>\s*([^<]*?)\s*<\/option>/g)].map((m) => [m[1], m[2]]);
    const approachOptions = options.filter(([value]) => APPROACHES.includes(value));
    assert.equal(approachOptions.length, 6, dialog.html);
    for (const [value, label] of approachOptions) assert.ok(label.startsWith(`${german[APPROACHES.indexOf(value)]} `), `${value}: ${label}`);
    assert.deepEqual(options.filter(([value]) => value === "Athletik"), [], "no other skill");
    assert.ok(!approachOptions.some(([, label]) => /Careful|Clever|Flashy|Forceful|Quick|Sneaky/.test(label)), "no English name");
    assert.equal(dialog.fields.skill, "Careful", "the clicked approach is chosen");

    const sent = await gm.waitFor("sent", (s) => s.some((x) => x.event === "action.start" && x.ack), { what: "action.start answered" });
    const start = sent.find((x) => x.event === "action.start");
    assert.equal(start.payload.skill, "Careful");
    assert.equal(start.ack.ok, true, JSON.stringify(start.ack));
    assert.ok(await gm.rpc("pass", start.ack.data.action_id, "actor"));
    const messages = await gm.waitFor("messages", (ms) => cardOf(ms, start.ack.data.card_id)?.flags["fate-bridge"].card.state === "resolved", { what: "the card resolved" });
    const card = cardOf(messages, start.ack.data.card_id);
    // 3 (Sorgfältig) + 2 on the dice against 2: three shifts, success with style.
    assert.equal(card.flags["fate-bridge"].card.actor.skill, "Careful");
    assert.equal(card.flags["fate-bridge"].card.shifts, 3);
    assert.match(card.card.actor.skill, new RegExp(`^${german[0]} `), "the card names the approach in German");
  });

  test("the character was synced with its German approaches as the six approaches; Athletik stays a skill", async () => {
    const synced = await gm.waitFor("call", (ack) => ack.data.characters.some((c) => c.id === hero._id), { what: "the character synced", args: ["world.state", {}] });
    const skills = synced.data.characters.find((c) => c.id === hero._id).skills;
    assert.deepEqual(skills, { Careful: 3, Clever: 2, Flashy: 1, Forceful: 1, Quick: 2, Sneaky: 0, Athletik: 4 });
  });

  test("a roll on Athletik is refused (not_an_approach), in German, and nothing is started", async () => {
    const before = (await call("world.state")).data;
    const refused = await call("action.start", { type: "overcome", actor_id: hero._id, skill: "Athletik", opposition: { kind: "passive", rating: 1 } });
    assert.equal(refused.ok, false);
    assert.equal(refused.error.code, "not_an_approach");
    // Through the module, as a macro would: the bridge refuses, the GM reads why in German.
    assert.equal(await gm.rpc("startAction", hero._id, "Athletik", { opposition: 1 }), null);
    const notes = await gm.rpc("notifications");
    const why = notes.find((n) => /Herangehensweisen/.test(n.message))?.message ?? JSON.stringify(notes);
    assert.match(why, new RegExp(`\\(${german.join(", ")}\\), nicht auf Athletik`), "the approaches in German");
    const now = (await call("world.state")).data;
    assert.deepEqual(now.open_actions, before.open_actions, "nothing started");
    assert.deepEqual(now.characters, before.characters, "nothing changed");
    // A macro naming the approach in German is the approach.
    await queue([0, 0, 0, 0]);
    const data = await gm.rpc("startAction", hero._id, german[4], { opposition: 1 });
    assert.ok(data?.action_id, "Flink is Quick");
  });
});
