// Integration (DESIGN Trust): the roll history anchored in Foundry's chat log. A real bridge,
// the active GM's fake Foundry client running the module's real code: every card message keeps
// its event's {seq, hash}; "Verify history" in the scene panel checks the bridge's log against
// them; "Export anchors" writes the file `world verify --chat-log` reads. Someone then rewrites
// a past roll in the SQLite file and re-hashes the whole chain: plain verify passes, the button
// and the CLI with the exported chat log do not.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { after, before, describe, test } from "node:test";
import { PYTHON, addWorld, freePort, startBridge, tempDataDir } from "./support/bridge-process.mjs";
import { FoundryClient } from "./support/clients.mjs";
import { REPO } from "./support/node-foundry.mjs";
import { check, loadValidators } from "./support/schemas.mjs";
import { ogre, zird } from "./fixtures/actors.mjs";

const run = promisify(execFile);
const GM = { id: "historyGmUser001", name: "Active GM", isGM: true };
const ANN = { id: "historyPlayer001", name: "Ann", isGM: false };
const ZIRD = zird(ANN.id);
const OGRE = ogre();

/** `python -m bridge world verify ...`: resolves to {code, stdout, stderr}, never rejects. */
async function verifyCli(dataDir, ...args) {
  try {
    const { stdout, stderr } = await run(PYTHON, ["-m", "bridge", "--data-dir", dataDir, "world", "verify", ...args], { cwd: REPO });
    return { code: 0, stdout, stderr };
  } catch (err) {
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

describe("the roll history anchored in the chat log", () => {
  let dataDir;
  let port;
  let world;
  let bridge;
  let gm;
  let validators;

  before(async () => {
    validators = await loadValidators();
    dataDir = await tempDataDir();
    port = await freePort();
    world = await addWorld(dataDir, "history-world", "History World");
    bridge = await startBridge({ dataDir, port });
    gm = await FoundryClient.launch("history-gm", {
      users: [GM, ANN],
      userId: GM.id,
      activeGM: GM.id,
      systemId: "fate-core-official",
      actors: [ZIRD, OGRE],
      settings: { "fate-bridge.bridgeUrl": `http://127.0.0.1:${port}`, "fate-bridge.worldId": world.id, "fate-bridge.gmKey": world.key }
    });
    await gm.rpc("start");
    await gm.waitFor("hello", (h) => h !== null, { what: "gm hello" });
  });

  after(async () => {
    await gm?.close?.();
    await bridge?.stop();
  });

  test("every card keeps its anchor; Verify history agrees, then catches a rewritten and re-hashed log", async () => {
    assert.equal((await gm.rpc("call", "dev.queue_dice", { rolls: [[1, 0, 0, -1], [0, 1, 1, 0]] })).ok, true);
    for (const opposition of [2, 3]) {
      const started = await gm.rpc("startAction", ZIRD._id, "Athletics", { opposition });
      assert.ok(started?.action_id, JSON.stringify(started));
      assert.ok(await gm.rpc("pass", started.action_id, "actor"));
    }
    const messages = await gm.waitFor("messages", (ms) => ms.filter((m) => m.flags["fate-bridge"]?.card?.state === "resolved").length === 2, { what: "two resolved cards" });
    for (const m of messages) {
      const flags = m.flags["fate-bridge"];
      assert.match(flags.anchor.hash, /^[0-9a-f]{64}$/);
      // The anchor is the card's own last event (the bridge's card says so too).
      assert.equal(flags.anchor.seq, flags.card.event_seq);
      assert.equal(flags.anchor.hash, flags.card.event_hash);
    }

    // The GM presses "Verify history" in the scene panel: the bridge agrees with the chat log.
    await gm.rpc("openScene");
    await gm.waitFor("panel", (p) => p?.actions.some((a) => a.action === "verifyHistory"), { what: "verify button" });
    await gm.rpc("clickPanel", '[data-action="verifyHistory"]');
    await gm.waitFor("notifications", (ns) => ns.some((n) => n.type === "info" && /History verified: \d+ events, 2 chat-log anchors agree/.test(n.message)), { what: "verified" });
    await gm.waitFor("panel", (p) => /History verified/.test(p.head), { what: "verified in the panel" });

    // "Export anchors" saves the chat log's anchors; the CLI agrees with them.
    await gm.rpc("clickPanel", '[data-action="exportAnchors"]');
    const [saved] = await gm.waitFor("savedFiles", (fs) => fs.length === 1, { what: "export saved" });
    const exported = JSON.parse(saved.data);
    check(validators.historyAnchors, exported, "exported anchors");
    assert.equal(exported.world, world.id);
    assert.equal(exported.anchors.length, 2);
    const chatLog = path.join(dataDir, "chat-log.json");
    await writeFile(chatLog, saved.data);
    assert.equal((await verifyCli(dataDir, world.id, "--chat-log", chatLog)).code, 0);

    // Someone with the database file rewrites the first roll and re-hashes everything.
    await bridge.stop();
    await gm.waitFor("status", (s) => s.state !== "connected", { what: "gm offline" });
    await run(PYTHON, ["-m", "tests.log_forgery", dataDir, world.id], { cwd: REPO });
    const plain = await verifyCli(dataDir, world.id);
    assert.equal(plain.code, 0, plain.stderr);
    const anchored = await verifyCli(dataDir, world.id, "--chat-log", chatLog);
    assert.equal(anchored.code, 2);
    assert.match(anchored.stderr, /2 chat-log anchor\(s\) disagree with the log/);

    // The bridge comes back; the GM's client reconnects; the button now says it was rewritten.
    bridge = await startBridge({ dataDir, port });
    await gm.waitFor("status", (s) => s.state === "connected", { ms: 60000, what: "gm reconnected" });
    await gm.rpc("clickPanel", '[data-action="verifyHistory"]');
    const notes = await gm.waitFor("notifications", (ns) => ns.some((n) => n.type === "error" && /rewritten/.test(n.message)), { what: "rewrite caught" });
    assert.match(notes.find((n) => /rewritten/.test(n.message)).message, /2 chat-log anchors disagree with its log, the first at event \d+/);
    await gm.waitFor("panel", (p) => /history was rewritten/.test(p.head), { what: "rewrite shown in the panel" });

    for (const { event, payload, ack } of await gm.rpc("sent")) {
      check(validators.client[event], payload, `gm ${event}`);
      if (ack?.ok) check(validators.results[event], ack.data, `${event} result`);
    }
  });
});
