// Integration: the example macros of foundry-module/MACROS.md, run as Foundry runs a macro (an
// async function body with the page's globals) in a fake Foundry GM client running the module's
// real code, against a real bridge (--dev-dice). Every macro in the file is run, in the file's
// order, unless it needs something the fake table has not (a canvas with controlled or targeted
// tokens): those are listed by name below, so a new macro cannot be left out by accident.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { after, before, test } from "node:test";
import { BRIDGE_ROOT, PYTHON, addWorld, freePort, startBridge, tempDataDir } from "./support/bridge-process.mjs";
import { FoundryClient } from "./support/clients.mjs";
import { check, loadValidators } from "./support/schemas.mjs";
import { MODULE_DIR } from "./support/node-foundry.mjs";
import { ogre, zird } from "./fixtures/actors.mjs";

const GM = { id: "macroGmUser00001", name: "Gamemaster", isGM: true };
const ANN = { id: "macroAnnUser0001", name: "Ann", isGM: false };
const ZIRD = "actorZird0000001";
const OGRE = "actorOgre0000001";

// Macros that act on the canvas's controlled or targeted tokens, or on an action id the reader
// picks (the fake table has neither): not run here.
const NEEDS_A_TABLE = new Set([
  "Create an advantage on the targeted token, opposed by it",
  "Invoke an aspect with a free invoke, then pass",
  "Roll a skill of the selected token's actor, asking for the opposition",
  "Compel the selected token's character"
]);

/** Each "## heading" with its first ```js block, in the file's order. */
function macrosOf(markdown) {
  const out = [];
  for (const section of markdown.split(/^## /m).slice(1)) {
    const [heading] = section.split("\n");
    const code = section.match(/```js\n([\s\S]*?)```/)?.[1];
    if (code) out.push({ name: heading.trim(), code });
  }
  return out;
}

let bridge;
let gm;
let world;
let dataDir;
let validators;
let macros;

const queue = async (...rolls) => assert.equal((await gm.rpc("call", "dev.queue_dice", { rolls })).ok, true);
const notes = async () => (await gm.rpc("notifications")).map((n) => n.message);
const run = async (name) => {
  const macro = macros.find((m) => m.name === name);
  assert.ok(macro, `MACROS.md has a macro "${name}"`);
  ran.add(name);
  return gm.rpc("runMacro", macro.code);
};
const ran = new Set();

/** Roll and pass an overcome against a passive rating through the API, to resolved. */
async function resolvedRoll(actorId, skill, dice, opposition) {
  await queue(dice);
  const started = await gm.rpc("startAction", actorId, skill, { type: "overcome", opposition });
  const done = await gm.rpc("pass", started.action_id, "actor");
  assert.equal(done.card.state, "resolved");
  return done;
}

before(async () => {
  validators = await loadValidators();
  macros = macrosOf(await readFile(path.join(MODULE_DIR, "MACROS.md"), "utf8"));
  dataDir = await tempDataDir();
  const port = await freePort();
  world = await addWorld(dataDir, "macro-world", "Macro World");
  bridge = await startBridge({ dataDir, port });
  gm = await FoundryClient.launch("gm", {
    users: [GM, ANN],
    userId: GM.id,
    activeGM: GM.id,
    systemId: "fate-core-official",
    actors: [zird(ANN.id), ogre()],
    settings: { "fate-bridge.bridgeUrl": bridge.url, "fate-bridge.worldId": world.id, "fate-bridge.gmKey": world.key }
  });
  await gm.rpc("start");
  await gm.waitFor("hello", (h) => h !== null, { what: "gm hello" });
});

after(async () => {
  await gm?.close();
  await bridge?.stop();
});

test("every example macro in MACROS.md runs against a real bridge and does what it says", async () => {
  // Roll against a fixed opposition: Zird's Athletics +3 and + + 0 0 against Great +4.
  await queue([1, 1, 0, 0]);
  await run("Roll against a fixed opposition without a dialog");
  const first = await gm.waitFor("messages", (ms) => ms.length === 1, { what: "the roll's card" });
  assert.equal(first[0].flags["fate-bridge"].card.description, "Climb the crumbling wall in the storm");
  const pending = (await gm.rpc("call", "world.state", {})).data.open_actions;
  await gm.rpc("pass", pending[0], "actor");

  await run("Show the connection status");
  assert.ok((await notes()).includes("Fate Bridge: connected"));

  await queue([0, 0, 0, 0]);
  await run("Run a contest from a macro");
  let scene = await gm.rpc("scene");
  const contest = scene.contests.find((c) => c.name === "Chase across the rooftops");
  assert.ok(contest, "the contest started");
  const started = (await gm.rpc("sent")).find((x) => x.event === "contest.start");
  assert.equal(started.ack.data.created_id, contest.id, "contest.start answered with the new contest's id");
  await gm.waitFor("messages", (ms) => ms.some((m) => m.flags["fate-bridge"]?.card?.actor?.leader?.id === OGRE), { what: "the ogre's contest roll card" });

  await run("A challenge with three tasks");
  scene = await gm.rpc("scene");
  assert.deepEqual(scene.challenges.map((c) => c.tasks.length), [3]);

  await run("End the session, keeping one aspect");
  await gm.waitFor("scene", (s) => s?.scene.session === 2, { what: "session 2" });

  await run("Add a situation aspect and give Zird its free invoke");
  scene = await gm.waitFor("scene", (s) => s?.aspects.some((a) => a.name === "Smoke Everywhere" && a.free_invokes[ZIRD] === 1), { what: "Smoke Everywhere with Zird's invoke" });

  // Three rolls in the new scene: Zird, the ogre, Zird.
  await resolvedRoll(ZIRD, "Athletics", [1, 0, 0, 0], 2);
  await resolvedRoll(OGRE, "Fight", [0, 0, 0, 0], 1);
  const fateBefore = (await gm.rpc("call", "world.state", {})).data.characters.find((c) => c.id === ZIRD).fate_points;
  await queue([1, 1, 0, 0]);
  const last = await gm.rpc("startAction", ZIRD, "Lore", { type: "overcome", opposition: 3 });
  const wizard = (await gm.rpc("call", "world.state", {})).data.aspects.find((a) => a.name === "Wizard of the Old School").id;
  assert.ok(await gm.rpc("api", "invoke", last.action_id, { invoker: ZIRD, aspect_id: wizard, payment: "fate_point" }));
  await gm.rpc("pass", last.action_id, "actor");

  const before = (await gm.rpc("messages")).length;
  await run("Post the last five rolls to chat");
  const posted = await gm.waitFor("messages", (ms) => ms.length === before + 1, { what: "the posted list" });
  const list = posted.at(-1).content;
  assert.equal((list.match(/<li>/g) ?? []).length, 4, "four resolved rolls so far");
  assert.match(list, /Zird the Arcane: Overcome \(Lore\)/);
  assert.match(list, /Grumpy Ogre: Overcome \(Fight\)/);

  await run("Count a character's rolls, page by page");
  assert.ok((await notes()).includes("Zird the Arcane rolled 3 times."));

  await run("Check the dice: the world's 4dF sums against the expected share");
  assert.ok((await notes()).some((n) => /^4 rolls, mean 1\.25: -4: 0 \(0%, expected 1%\)/.test(n)), await notes());

  await run("Undo the last resolution");
  assert.ok((await notes()).some((n) => /^Undone back to event \d+: 1 card\(s\)\.$/.test(n)), await notes());
  const fateAfter = (await gm.rpc("call", "world.state", {})).data.characters.find((c) => c.id === ZIRD).fate_points;
  assert.equal(fateAfter, fateBefore, "the fate point invoked on the undone roll came back");
  const undoneCard = (await gm.rpc("messages")).find((m) => m.flags["fate-bridge"]?.card?.action_id === last.action_id);
  assert.equal(undoneCard.flags["fate-bridge"].card.undone, true);

  await run("Undo a chosen roll and everything after it");
  const read = await gm.rpc("call", "history.read", { character: OGRE });
  assert.equal(read.ok, true, JSON.stringify(read));
  const page = read.data;
  assert.deepEqual(page.entries.map((e) => e.undone), [true], "the ogre's roll is taken back");
  const zirds = (await gm.rpc("call", "history.read", { character: ZIRD })).data.entries;
  assert.deepEqual(zirds.map((e) => e.undone), [true, false, false], "Zird's newest was undone before; the older two stand");

  // A refusal rejects: nothing left to undo in this scene but Zird's first roll... then nothing.
  await run("Undo the last resolution");
  await run("Undo the last resolution");
  // A BridgeError says the refusal in the user's language, from its reason (protocol 7).
  assert.ok((await notes()).some((n) => n === "Nothing undone: No roll in this scene is left to undo."), await notes());

  const { stdout } = await promisify(execFile)(PYTHON, ["-m", "bridge", "--data-dir", dataDir, "world", "verify", world.id], { cwd: BRIDGE_ROOT });
  assert.match(stdout, /^OK:/);

  for (const { event, payload, ack } of await gm.rpc("sent")) {
    check(validators.client[event], payload, event);
    if (ack?.ok) check(validators.results[event], ack.data, `${event} result`);
  }
  const left = macros.map((m) => m.name).filter((n) => !ran.has(n) && !NEEDS_A_TABLE.has(n));
  assert.deepEqual(left, [], "every macro is run here or needs a canvas");
});
