// Integration: a real bridge process and fake Foundry clients running the module's real code.
// The bridge and the module ship together under one version: a GM whose installed module is
// another version than the bridge's is told, in one line, to update; a GM with the bridge's own
// version and a player (who cannot update modules) are not.
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { after, before, describe, test } from "node:test";
import { addWorld, freePort, startBridge, tempDataDir } from "./support/bridge-process.mjs";
import { FoundryClient } from "./support/clients.mjs";

const GM = { id: "versionGmUser001", name: "GM", isGM: true };
const PLAYER = { id: "versionPlayer001", name: "Ann", isGM: false };
const OLD = "0.3.0";

let port;
let world;
let bridge;
let bridgeVersion;
const clients = [];

async function launch(name, user, { version, key } = {}) {
  const client = await FoundryClient.launch(name, {
    users: [GM, PLAYER],
    userId: user.id,
    activeGM: GM.id,
    ...(version ? { module: { version } } : {}),
    settings: {
      "fate-bridge.bridgeUrl": `http://127.0.0.1:${port}`,
      "fate-bridge.worldId": world.id,
      "fate-bridge.connectionMode": "direct",
      ...(key ? { "fate-bridge.gmKey": key } : {})
    }
  });
  clients.push(client);
  await client.rpc("start");
  await client.waitFor("hello", (h) => h !== null, { what: `${name} hello` });
  return client;
}

const versionNotes = async (client) =>
  (await client.rpc("notifications")).filter((n) => /update the older one/.test(n.message));

before(async () => {
  const dataDir = await tempDataDir();
  port = await freePort();
  world = await addWorld(dataDir, "version-world");
  bridge = await startBridge({ dataDir, port });
  bridgeVersion = (await (await fetch(`${bridge.url}/healthz`)).json()).version;
});

after(async () => {
  for (const c of clients) await c.close();
  await bridge?.stop();
});

describe("the module's version against the bridge's", () => {
  test("a GM with an older module is told in one line to update; the bridge's version is not", async () => {
    const module = JSON.parse(await readFile(new URL("../../foundry-module/module.json", import.meta.url), "utf8"));
    assert.equal(bridgeVersion, module.version); // one version everywhere
    assert.notEqual(OLD, bridgeVersion);

    const stale = await launch("stale-gm", GM, { version: OLD, key: world.key });
    const notes = await stale.waitFor("notifications", (ns) => ns.some((n) => /update the older one/.test(n.message)), { what: "version notice" });
    const [note] = notes.filter((n) => /update the older one/.test(n.message));
    assert.equal(note.type, "warn");
    assert.equal(
      note.message,
      `Fate Bridge: this module is version ${OLD} and the bridge ${bridgeVersion}; update the older one (the module: Setup > Add-on Modules > Update).`
    );
    assert.ok(!note.message.includes("\n"));
    assert.equal((await versionNotes(stale)).length, 1);
    await stale.close();
    clients.splice(clients.indexOf(stale), 1);

    const current = await launch("current-gm", GM, { key: world.key });
    assert.equal((await current.rpc("hello")).bridge_version, bridgeVersion);
    assert.deepEqual(await versionNotes(current), []);

    const player = await launch("stale-player", PLAYER, { version: OLD });
    assert.equal((await player.rpc("hello")).role, "player");
    assert.deepEqual(await versionNotes(player), []);
  });
});
