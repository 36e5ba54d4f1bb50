// Headless Chromium, consent to harm (DESIGN Reach and trust: "the GM owns ... whom a
// player's action may harm"): a player's action on the GM's ogre waits on its card for the
// GM's yes; the GM's page shows Accept and Decline, one press lets it go on, the other calls
// it off and the card says so. The fake Foundry page loads the module's real scripts and a
// real bridge; the player is a real Socket.IO client. Screenshots go to tests/artifacts.
import assert from "node:assert/strict";
import path from "node:path";
import { after, before, test } from "node:test";
import { ARTIFACTS, openConnectedPage, startStage, writeCardOnPage } from "./support/browser-page.mjs";
import { REPO } from "./support/node-foundry.mjs";

const ANN = "pagePlayerAnn001";

let stage;
let bridge;
let browser;
let world;
let pageUrl;

before(async () => {
  stage = await startStage([["browser-consent", "Browser Consent"]]);
  ({ bridge, browser } = stage);
  [world] = stage.worlds;
  pageUrl = stage.pageUrl(world);
});

after(() => stage?.stop());

test("a player's advantage on the GM's ogre waits for the GM's yes on the card: Accept lets it go on, Decline calls it off", async () => {
  const { page, errors, call: api } = await openConnectedPage(browser, pageUrl);
  const { io } = await import("socket.io-client");
  const { NAMESPACE, PROTOCOL_VERSION, cardPutBack } = await import(path.join(REPO, "foundry-module/scripts/protocol.mjs"));

  // Ann plays Zird from her own browser: a real Socket.IO client, bound through the GM's page.
  const ann = io(`${bridge.url}${NAMESPACE}`, { transports: ["websocket"], reconnection: false, auth: { world: world.id, role: "player", user: ANN, protocol: PROTOCOL_VERSION } });
  const annCards = [];
  const heard = (emits) => annCards.push(...emits.filter((e) => e.event === "card").map((e) => e.data));
  ann.on("emits", (frame) => heard(frame.emits));
  let n = 0;
  const annSend = async (event, payload) => {
    const ack = await ann.timeout(10000).emitWithAck(event, { request_id: `ann-${++n}`, ...payload });
    if (Array.isArray(ack?.emits)) heard(ack.emits);
    return cardPutBack(ack);
  };
  const emitOf = async (predicate) => {
    for (let i = 0; i < 200; i++) {
      const found = [...annCards].reverse().find(predicate);
      if (found) return found;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error("no such card emit");
  };
  // Ann's client writes her cards; on this one page the GM's client writes them instead (the
  // path taken when the acting player is away), so the GM's page shows each as Foundry would.
  const relay = (emit) => writeCardOnPage(page, { ...emit, writer: "gm" });
  try {
    const hello = await annSend("hello", {});
    assert.equal(hello.ok, true);
    assert.equal((await api("user.bind", { user_id: ANN, nonce: hello.data.bind_nonce })).ok, true);
    // The GM's page sends the ogre to the bridge, as it does for a token on the scene.
    const synced = await page.evaluate(async () => {
      const { adapterFor } = await import("/foundry-module/scripts/adapters/index.mjs");
      const actor = adapterFor().toActorData(game.actors.get("actorOgre0000001"));
      return settled(game.modules.get("fate-bridge").api.connection.call("actor.sync", { actor }));
    });
    assert.equal(synced.ok, true, JSON.stringify(synced));
    const start = {
      type: "create_advantage", actor_id: "actorZird0000001", skill: "Athletics", aspect_name: "Ogre Off Balance",
      description: "Sweep the ogre's legs from under it", target_id: "actorOgre0000001",
      opposition: { kind: "active", opposer_id: "actorOgre0000001" }
    };
    let started = await annSend("action.start", start);
    for (let i = 0; i < 50 && started.error?.code === "unknown_actor"; i++) {
      await new Promise((r) => setTimeout(r, 100)); // the GM's page syncs Zird and the ogre once connected
      started = await annSend("action.start", start);
    }
    assert.equal(started.ok, true, JSON.stringify(started));
    const first = started.data.card;
    assert.equal(first.state, "confirming");
    assert.deepEqual(first.consents.map((c) => [c.character.id, c.parts, c.status]), [["actorOgre0000001", ["target", "opposer"], "asked"]]);
    // Ann herself may not answer for the GM's ogre.
    const forged = await annSend("action.help", { action_id: first.action_id, character_id: "actorOgre0000001", accept: true });
    assert.equal(forged.error?.code, "forbidden");
    await relay(await emitOf((e) => e.card.action_id === first.action_id && e.card.state === "confirming"));

    const message = page.locator("#chat-log .chat-message").last();
    const accept = message.locator('[data-fb="consent"][data-accept="true"]');
    await accept.waitFor();
    assert.equal(await message.locator('[data-fb="consent"][data-accept="false"]').count(), 1);
    assert.equal(await message.locator('[data-fb="confirm"]').count(), 0, "no GM form: no numbers to confirm");
    assert.equal(await message.locator('[data-fb="roll"]').count(), 0, "nobody rolls past a consent");
    const text = (await message.innerText()).replace(/\s+/g, " ");
    assert.match(text, /Awaiting confirmation/);
    assert.match(text, /Grumpy Ogre \(targeted, opposing\) — waits for a yes from their owner or the GM/);
    assert.match(text, /Allow Zird the Arcane's action on Grumpy Ogre \(targeted, opposing\)\?/);
    await message.screenshot({ path: path.join(ARTIFACTS, "consent-card-asked.png") });

    // One click: the GM accepts, and the ogre opposes first (R2.2).
    await accept.click();
    const accepted = await emitOf((e) => e.card.action_id === first.action_id && e.card.state === "awaiting_opposition");
    assert.equal(accepted.card.consents[0].status, "accepted");
    await relay(accepted);
    await message.locator('[data-fb="oppose"]').waitFor();
    assert.equal(await message.locator('[data-fb="consent"]').count(), 0);
    await message.screenshot({ path: path.join(ARTIFACTS, "consent-card-accepted.png") });

    // The same again, and the GM says no: the card says the action is called off.
    const again = await annSend("action.start", { ...start, aspect_name: "Ogre Tripped" });
    assert.equal(again.ok, true, JSON.stringify(again));
    const second = again.data.card;
    await relay(await emitOf((e) => e.card.action_id === second.action_id && e.card.state === "confirming"));
    const other = page.locator("#chat-log .chat-message").last();
    await other.locator('[data-fb="consent"][data-accept="false"]').click();
    const declined = await emitOf((e) => e.card.action_id === second.action_id && e.card.state === "cancelled");
    await relay(declined);
    await other.locator('.fate-bridge-card__state:text("Declined — called off")').waitFor();
    const after = (await other.innerText()).replace(/\s+/g, " ");
    assert.match(after, /Declined for Grumpy Ogre: not to be targeted\. The action is called off\./);
    assert.match(after, /Grumpy Ogre \(targeted, opposing\) — declined/);
    assert.equal(await other.locator("[data-fb]").count(), 0, "a called-off action offers nothing");
    await other.screenshot({ path: path.join(ARTIFACTS, "consent-card-declined.png") });
  } finally {
    ann.disconnect();
  }
  assert.deepEqual(errors, []);
  await page.close();
});
