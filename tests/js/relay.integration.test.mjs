// Integration, relay mode (DESIGN "Reach and trust"): a real bridge process (--dev-dice), a fake
// Foundry server (tests/js/support/foundry-server.mjs) carrying the module's socket channel as
// Foundry does (to every other client, the sender's id stamped by the server), and fake Foundry
// clients in worker threads running the module's real code. Only GMs' browsers open a bridge
// connection; the players' intents, answers and the world's emits travel through Foundry.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { io as ioClient } from "socket.io-client";
import { addWorld, freePort, startBridge, tempDataDir } from "./support/bridge-process.mjs";
import { byCard, cardIn, showMessage } from "./support/chat.mjs";
import { FoundryClient } from "./support/clients.mjs";
import { startFoundryServer } from "./support/foundry-server.mjs";
import { check, loadValidators } from "./support/schemas.mjs";
import { ogre, zird } from "./fixtures/actors.mjs";

const CHANNEL = "module.fate-bridge";
// The relay host is the GM with a live bridge connection with the highest role, then the
// lowest id (Foundry's roles: ASSISTANT 3, GAMEMASTER 4).
const GM = { id: "aaGmUser00000001", name: "Gamemaster", isGM: true, role: 4 };
const ASSISTANT = { id: "bbAssistant00001", name: "Assistant", isGM: true, role: 3 };
const ANN = { id: "annUser000000001", name: "Ann", isGM: false, role: 1 };
const BOB = { id: "bobUser000000001", name: "Bob", isGM: false, role: 1 };
const USERS = [GM, ASSISTANT, ANN, BOB];
const ZIRD = zird(ANN.id);
const BORIN = (() => {
  const actor = { ...ogre(), _id: "actorBorin000001", name: "Borin", ownership: { default: 0, [BOB.id]: 3 } };
  actor.system = { ...actor.system, details: { fatePoints: { current: 2, refresh: 2, boosts: 0 } } };
  return actor;
})();

let bridge;
let dataDir;
let foundry;
let world;
let validators;
let gm;
let assistant;
let ann;
let bob;
const clients = [];

function options(user, key) {
  return {
    users: USERS,
    userId: user.id,
    systemId: "fate-core-official",
    actors: [ZIRD, BORIN],
    foundryServer: foundry.url,
    fcoStandIn: true,
    settings: {
      "fate-bridge.bridgeUrl": bridge.url,
      "fate-bridge.worldId": world.id,
      ...(key === undefined ? {} : { "fate-bridge.gmKey": key })
    }
  };
}

async function launch(name, user, key, extra = {}) {
  const client = await FoundryClient.launch(name, { ...options(user, key), ...extra });
  clients.push(client);
  await client.rpc("start");
  return client;
}

const connected = (client, what) => client.waitFor("status", (s) => s.state === "connected", { what: `${what} connected` });
const greeted = (client, what) => client.waitFor("hello", (h) => h !== null, { what: `${what} hello` });
const queue = async (...rolls) => assert.equal((await gm.rpc("call", "dev.queue_dice", { rolls })).ok, true);
/** The relay envelopes a GM's client sent the bridge, with their acks. */
async function relayed(client) {
  return (await client.rpc("sent")).filter((s) => s.event === "relay");
}

/** What a raw Foundry client (no module) hears on the channel after sending `message`. */
async function rawFoundryClient(userId) {
  const socket = ioClient(foundry.url, { transports: ["websocket"], auth: { userId } });
  const heard = [];
  socket.on(CHANNEL, (...args) => heard.push(args));
  await new Promise((resolve, reject) => {
    socket.on("connect", resolve);
    socket.on("connect_error", reject);
  });
  return { socket, heard };
}

before(async () => {
  validators = await loadValidators();
  dataDir = await tempDataDir();
  world = await addWorld(dataDir, "relay-world", "Relay World");
  bridge = await startBridge({ dataDir, port: await freePort() });
  foundry = await startFoundryServer();
  gm = await launch("gm", GM, world.key);
  await greeted(gm, "gm");
  assert.equal((await gm.rpc("call", "world.settings", { trust_player_ratings: true })).ok, true);
});

after(async () => {
  for (const c of clients) await c.close();
  await foundry?.close();
  await bridge?.stop();
});

describe("relay mode: players reach the bridge through Foundry", () => {
  test("players open no bridge connection; the active GM relays for them and they act for their own actors", async () => {
    ann = await launch("ann", ANN);
    bob = await launch("bob", BOB);
    for (const [client, name] of [[ann, "ann"], [bob, "bob"]]) {
      await connected(client, name);
      const hello = await greeted(client, name);
      assert.deepEqual([hello.role, hello.user, hello.bound, hello.bind_nonce], ["player", client === ann ? ANN.id : BOB.id, true, null]);
      assert.equal((await client.rpc("sockets")).created, 0, `${name}'s browser never dials the bridge`);
    }
    assert.equal(await gm.rpc("relaying"), true);
    // The active GM synced both players' actors when it connected, or as they came.
    await gm.waitFor("sent", (s) => [ZIRD._id, BORIN._id].every((id) => s.some((x) => x.event === "actor.sync" && x.payload.actor.id === id && x.ack?.ok)), { what: "actors synced" });

    await queue([1, 1, 0, 0]);
    const data = await ann.rpc("startAction", ZIRD._id, "Athletics", { opposition: 2 });
    assert.ok(data?.card_id, "Ann acts for Zird through the relay");
    const message = await cardIn(ann, data.card_id, (m) => m.card.state, "Ann's card");
    assert.equal(message.author, ANN.id, "the acting player's own client writes its card");
    assert.deepEqual(message.rollDice, [1, 1, 0, 0]);
    assert.deepEqual(message.controls, ["invoke:actor", "pass:actor"]);
    // Bob may not act for Ann's character: the bridge refuses, Bob reads why.
    assert.equal(await bob.rpc("startAction", ZIRD._id, "Athletics", { opposition: 2 }), null);
    assert.ok((await bob.rpc("notifications")).some((n) => n.type === "warn" && /not|may/i.test(n.message)));
    const envelopes = await relayed(gm);
    assert.ok(envelopes.every((e) => [ANN.id, BOB.id].includes(e.payload.user)));
    await ann.rpc("clickCard", data.card_id, 'button[data-fb="pass"][data-side="actor"]');
    await cardIn(ann, data.card_id, (m) => /Resolved/.test(m.card.state), "resolved");
  });

  test("a player's rating waits for the GM, who confirms on the card; the player rolls", async () => {
    assert.equal((await gm.rpc("call", "world.settings", { trust_player_ratings: false })).ok, true);
    const data = await ann.rpc("startAction", ZIRD._id, "Lore", { opposition: -4 });
    assert.equal(data.card.state, "confirming");
    let message = await cardIn(ann, data.card_id, (m) => /Awaiting confirmation/.test(m.card.state), "confirming");
    assert.deepEqual(message.controls, []);
    const gmView = await showMessage(ann, gm, data.card_id);
    assert.deepEqual(gmView.controls, ["confirm", "cancel"]);
    // Confirmed without danger, the dice roll at once.
    await queue([0, 0, 0, 0]);
    await gm.rpc("setCardField", data.card_id, "rating", "3");
    await gm.rpc("clickCard", data.card_id, 'button[data-fb="confirm"]');
    message = await cardIn(ann, data.card_id, (m) => /Invoking/.test(m.card.state), "rolled");
    assert.deepEqual(message.rollDice, [0, 0, 0, 0]);
    assert.equal(message.card.opposition.total, "Good +3");
    await ann.rpc("clickCard", data.card_id, 'button[data-fb="pass"][data-side="actor"]');
    await cardIn(ann, data.card_id, (m) => !/Invoking/.test(m.card.state), "passed");
    assert.equal((await gm.rpc("call", "world.settings", { trust_player_ratings: true })).ok, true);
  });

  test("two players invoke on one action: Borin opposes Zird, each pays a fate point from the card", async () => {
    await queue([-1, 0, 0, 0], [0, 0, 0, 0]);
    const data = await ann.rpc("startAction", ZIRD._id, "Athletics", { type: "overcome", opposerId: BORIN._id });
    assert.ok(data?.card_id, JSON.stringify(data));
    const cardId = data.card_id;
    await cardIn(ann, cardId, (m) => m.card.state, "Ann's card");
    // Bob sees the message through Foundry and opposes from it, once he said yes to Borin
    // opposing (consent to harm, DESIGN Reach and trust: Borin is his).
    await showMessage(ann, bob, cardId);
    await bob.rpc("clickCard", cardId, 'button[data-fb="consent"][data-accept="true"]');
    await cardIn(ann, cardId, (m) => /Waiting for the opposition/.test(m.card.state), "Bob's yes");
    await showMessage(ann, bob, cardId);
    await bob.rpc("setCardField", cardId, "skill", "Fight");
    await bob.rpc("clickCard", cardId, 'button[data-fb="oppose"]');
    let message = await cardIn(ann, cardId, (m) => /Invoking/.test(m.card.state), "rolled");
    await showMessage(ann, bob, cardId);
    const annAspect = data.card.aspects.find((a) => a.name === "Wizard of the Old School").id;
    const bobAspect = data.card.aspects.find((a) => a.name === "Hungry Bridge Ogre").id;
    assert.equal((await ann.rpc("call", "action.invoke", { action_id: data.action_id, invoker: ZIRD._id, aspect_id: annAspect, payment: "fate_point", effect: "bonus", side: "actor" })).ok, true);
    const bobInvoke = await bob.rpc("call", "action.invoke", { action_id: data.action_id, invoker: BORIN._id, aspect_id: bobAspect, payment: "fate_point", effect: "bonus", side: "opposition" });
    assert.equal(bobInvoke.ok, true, JSON.stringify(bobInvoke));
    // Bob may not spend Ann's character's points.
    const stolen = await bob.rpc("call", "action.invoke", { action_id: data.action_id, invoker: ZIRD._id, aspect_id: annAspect, payment: "fate_point", effect: "bonus", side: "opposition" });
    assert.equal(stolen.ok, false);
    message = await cardIn(ann, cardId, (m) => m.card.invokes.length === 2, "both invokes on the card");
    assert.match(message.card.invokes[0], /Zird the Arcane invoked Wizard of the Old School/);
    assert.match(message.card.invokes[1], /Borin invoked Hungry Bridge Ogre/);
    assert.equal(message.card.opposition.fp, "1 FP");
    // Bob's client heard the same emits and updated nothing it does not write.
    const bobView = byCard(cardId)(await bob.rpc("messages"));
    assert.ok(bobView);
    for (const [client, side] of [[ann, "actor"], [bob, "opposition"]]) {
      assert.equal((await client.rpc("call", "action.pass", { action_id: data.action_id, side })).ok, true);
    }
    await cardIn(ann, cardId, (m) => !/Invoking/.test(m.card.state), "both passed");
  });

  test("history, undo and a macro work the same way relayed", async () => {
    const page = await ann.rpc("api", "history.read", { limit: 5 });
    assert.ok(page.entries.some((e) => e.requested_by === ANN.id), JSON.stringify(page));
    // Undo is the GM's: refused for a player, done by the GM, and the cards say so for everyone.
    await assert.rejects(ann.rpc("api", "undo"), /forbidden|GM/i);
    // The GM writes the taken-back card (Foundry lets a GM update any message): it needs the
    // message, as Foundry's own chat sync gives it.
    const last = (await ann.rpc("messages")).at(-1).flags["fate-bridge"].cardId;
    await showMessage(ann, gm, last);
    const undone = await gm.rpc("api", "undo");
    assert.deepEqual(undone.card_ids, [last]);
    const taken = await cardIn(gm, last, (m) => m.flags["fate-bridge"].card.undone === true, "the undone card");
    assert.match(taken.content, /fate-bridge-card--undone/);
    // Ann reads the history again through the relay: a player does not see the roll taken back.
    const after = await ann.rpc("api", "history.read", { limit: 5 });
    assert.equal(after.entries.some((e) => e.card_id === last), false);
    // A macro on a player's client, as Foundry runs it.
    await queue([1, 1, 1, 1]);
    const started = await ann.rpc("runMacro", `
      const api = game.modules.get("fate-bridge").api;
      const started = await api.start("${ZIRD._id}", "Will", { type: "overcome", opposition: 1 });
      return started && { action_id: started.action_id, status: api.status.state };
    `);
    assert.equal(started.status, "connected");
    assert.ok(started.action_id);
  });

  test("everything relayed matches the bridge's schemas, the relayed intents included", async () => {
    const sent = await gm.rpc("sent");
    for (const { event, payload, ack } of sent) {
      check(validators.client[event], payload, `gm ${event} payload`);
      if (ack) check(validators.ack, ack, `${event} ack`);
      if (event === "relay") {
        check(validators.client[payload.event], payload.payload, `relayed ${payload.event}`);
        if (ack?.ok) check(validators.results[payload.event], ack.data, `relayed ${payload.event} result`);
      }
    }
    assert.ok(sent.some((s) => s.event === "relay" && s.payload.event === "action.start"));
  });
});

describe("what the relay refuses", () => {
  test("a player cannot forge answers, emits or the host's status for another player", async () => {
    const before = (await ann.rpc("messages")).length;
    const card = (await ann.rpc("messages")).at(-1).flags["fate-bridge"].card;
    const forgedCard = { seq: 999999, writer: ANN.id, op: "create", card_id: `${world.id}.forged`, card: { ...card, action_id: "forged" } };
    await bob.rpc("foundryEmit", CHANNEL, { t: "relay.emits", emits: [{ event: "card", data: forgedCard }] });
    await bob.rpc("foundryEmit", CHANNEL, { t: "relay.host", state: "offline", message: "forged" });
    await bob.rpc("foundryEmit", CHANNEL, { t: "relay.answer", to: ANN.id, id: "x", ack: { ok: true, data: {} } });
    await new Promise((r) => setTimeout(r, 300));
    assert.equal((await ann.rpc("messages")).length, before, "no card from a player's forged emits");
    assert.equal((await ann.rpc("status")).state, "connected", "a player's forged status is ignored");
  });

  test("the sender is the one Foundry stamps: an id claimed in the message or as an extra argument is not believed", async () => {
    const forged = { t: "relay.request", event: "action.start", payload: { request_id: "forge-1", type: "overcome", actor_id: ZIRD._id, skill: "Athletics", opposition: { kind: "passive", rating: 0 } }, user: ANN.id };
    await bob.rpc("foundryListen", CHANNEL);
    await bob.rpc("foundryEmit", CHANNEL, forged, ANN.id);
    const answer = await bob.waitFor("foundryHeard", (h) => h.some(([m]) => m?.t === "relay.answer" && m.id === "forge-1"), { what: "the answer to Bob" });
    const [message, sender] = answer.find(([m]) => m?.t === "relay.answer" && m.id === "forge-1").filter((_, i, a) => i === 0 || i === a.length - 1);
    assert.equal(sender, GM.id);
    assert.equal(message.to, BOB.id, "answered to Bob, who sent it");
    assert.equal(message.ack.ok, false);
    assert.equal(message.ack.error.code, "forbidden");
    const envelope = (await relayed(gm)).find((e) => e.payload.payload.request_id === "forge-1");
    assert.equal(envelope.payload.user, BOB.id);
    // A sender field inside the relayed intent is no field of any intent.
    const claimed = await bob.rpc("call", "hello", { user: ANN.id });
    assert.equal(claimed.ok, false);
    assert.equal(claimed.error.code, "invalid");
  });

  test("a user Foundry's client does not know, a GM's request and an oversize message each get a clear refusal", async () => {
    const ghost = await rawFoundryClient("ghostUser0000001");
    ghost.socket.emit(CHANNEL, { t: "relay.request", event: "hello", payload: { request_id: "ghost-1" } });
    const big = await rawFoundryClient(BOB.id);
    big.socket.emit(CHANNEL, { t: "relay.request", event: "hello", payload: { request_id: "big-1", pad: "x".repeat(200 * 1024) } });
    const assistantRaw = await rawFoundryClient(ASSISTANT.id);
    assistantRaw.socket.emit(CHANNEL, { t: "relay.request", event: "world.state", payload: { request_id: "gm-1" } });
    const answerTo = async (raw, id) => {
      const end = Date.now() + 10000;
      for (;;) {
        const found = raw.heard.find(([m]) => m?.t === "relay.answer" && m.id === id);
        if (found) return found[0];
        if (Date.now() > end) throw new Error(`no answer to ${id}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    assert.equal((await answerTo(ghost, "ghost-1")).ack.error.code, "forbidden");
    assert.equal((await answerTo(big, "big-1")).ack.error.code, "too_large");
    const toGm = await answerTo(assistantRaw, "gm-1");
    assert.equal(toGm.ack.error.code, "forbidden");
    assert.match(toGm.ack.error.message, /GM key/);
    assert.equal((await relayed(gm)).some((e) => ["ghost-1", "big-1", "gm-1"].includes(e.payload.payload?.request_id)), false, "none reached the bridge");
    // A message over Foundry's own buffer limit closes that client's Foundry socket, nothing more.
    big.socket.emit(CHANNEL, { t: "relay.request", event: "hello", payload: { request_id: "huge-1", pad: "x".repeat(1024 * 1024) } });
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(big.socket.connected, false);
    assert.equal((await ann.rpc("status")).state, "connected");
    for (const raw of [ghost, big, assistantRaw]) raw.socket.disconnect();
  });
});

describe("the active GM changes", () => {
  test("two GMs both connected to the bridge: the GM relays, the assistant's own requests go on its own connection", async () => {
    assistant = await launch("assistant", ASSISTANT, world.key);
    await connected(assistant, "assistant");
    await assistant.waitFor("relayHostId", (id) => id === GM.id, { what: "the assistant sees the GM relay" });
    assert.equal(await gm.rpc("relaying"), true, "the GM (the higher role) relays");
    assert.equal(await assistant.rpc("relaying"), false, "the assistant does not");
    assert.equal(await ann.rpc("relayHostId"), GM.id);
    const before = (await relayed(assistant)).length;
    await queue([0, 0, 0, 1]);
    const data = await ann.rpc("startAction", ZIRD._id, "Will", { opposition: 0 });
    assert.ok(data?.card_id);
    assert.ok((await relayed(gm)).some((e) => e.ack?.data?.card_id === data.card_id), "through the GM's connection");
    assert.equal((await relayed(assistant)).length, before, "nothing through the assistant's");
    // The assistant's own requests: on its own connection, as a GM.
    const own = await assistant.rpc("call", "world.state", {});
    assert.equal(own.ok, true);
    assert.ok((await assistant.rpc("sent")).some((x) => x.event === "world.state" && x.ack?.ok), "sent on the assistant's own connection");
    assert.equal((await assistant.rpc("hello")).role, "gm");
    await assistant.close();
    clients.splice(clients.indexOf(assistant), 1);
  });

  test("the relaying GM's browser loses the bridge while the assistant's has it: the assistant takes over and the request is sent again once", async () => {
    assistant = await launch("assistant-b", ASSISTANT, world.key);
    await connected(assistant, "assistant");
    await assistant.waitFor("relayHostId", (id) => id === GM.id, { what: "the GM relays" });
    const before = (await ann.rpc("messages")).length;
    const starts = (sent) => sent.filter((x) => x.event === "relay" && x.payload.event === "action.start" && x.ack?.ok);
    const startsBefore = starts(await gm.rpc("sent")).length;
    await gm.rpc("dropRelayAnswers", true);
    await queue([1, 0, 0, 0]);
    const pending = ann.rpc("startAction", ZIRD._id, "Athletics", { opposition: 1 });
    await gm.waitFor("sent", (s) => starts(s).length === startsBefore + 1, { what: "the GM relayed it" });
    const syncs = (sent) => sent.filter((x) => x.event === "actor.sync" && x.ack?.ok).length;
    const syncsBefore = syncs(await assistant.rpc("sent"));
    await gm.rpc("bridgeDisconnect");
    await assistant.waitFor("relaying", (r) => r === true, { what: "the assistant takes the relay" });
    // It writes for the table now: it sends the players' actors, as a writer does when it starts.
    await assistant.waitFor("sent", (s) => syncs(s) > syncsBefore, { what: "the assistant syncs the actors" });
    const data = await pending;
    assert.ok(data?.card_id, "Ann's click is answered, through the assistant");
    const resent = (await relayed(assistant)).filter((e) => e.payload.event === "action.start");
    assert.equal(resent.length, 1, "sent again once");
    const first = (await relayed(gm)).filter((e) => e.payload.event === "action.start").at(-1);
    assert.equal(resent[0].payload.payload.request_id, first.payload.payload.request_id, "under its request id");
    const synced = await assistant.rpc("call", "world.sync", { since: 0 });
    assert.equal(synced.data.emits.filter((e) => e.event === "card" && e.data.card_id === data.card_id && e.data.op === "create").length, 1, "the action happened once");
    await ann.waitFor("messages", (ms) => ms.length === before + 1, { what: "Ann's one card" });
    // The GM's bridge comes back: the GM relays again, the assistant stops.
    await gm.rpc("dropRelayAnswers", false);
    await gm.rpc("reconnect");
    await connected(gm, "gm again");
    await assistant.waitFor("relaying", (r) => r === false, { what: "the assistant hands the relay back" });
    await gm.waitFor("relaying", (r) => r === true, { what: "the GM relays again" });
    await queue([0, 0, 0, 0]);
    assert.ok((await ann.rpc("startAction", ZIRD._id, "Athletics", { opposition: 1 }))?.card_id);
    await assistant.close();
    clients.splice(clients.indexOf(assistant), 1);
  });

  test("an assistant with no GM key is a GM through Foundry: told why it has no connection, it leaves and comes back, and the relay never moves", async () => {
    assistant = await launch("assistant-nokey", ASSISTANT);
    const status = await assistant.waitFor("status", (s) => s.state === "refused" && s.reason === "no_key", { what: "no key" });
    assert.match(status.badge, /No GM key in this browser: this GM plays through Foundry while another GM's browser relays/);
    assert.equal((await assistant.rpc("sockets")).created, 0, "it never dials the bridge as a GM without a key");
    await assistant.waitFor("relayHostId", (id) => id === GM.id, { what: "the assistant sees the GM relay" });
    assert.equal(await assistant.rpc("relaying"), false);
    await assistant.close();
    clients.splice(clients.indexOf(assistant), 1);
    assistant = await launch("assistant-nokey-back", ASSISTANT);
    await assistant.waitFor("relayHostId", (id) => id === GM.id, { what: "back: the GM still relays" });
    assert.equal(await gm.rpc("relaying"), true);
    assert.equal((await ann.rpc("status")).state, "connected");
    await queue([0, 0, 1, 0]);
    assert.ok((await ann.rpc("startAction", ZIRD._id, "Athletics", { opposition: 1 }))?.card_id, "Ann still plays through the GM");
  });

  test("the assistant spends a point from its own FCO pool: the bridge's GM budget loses one, once", async () => {
    const POOL = ["fate-core-official", "gmfatepoints"];
    assert.equal((await gm.rpc("call", "fate.gm_budget", { fate_points: 3 })).ok, true);
    // The GM's client writes the budget into every GM's pool.
    await gm.waitFor("user", (u) => u.flags?.["fate-core-official"]?.gmfatepoints === 3, { what: "the assistant's pool shown on the GM's client", args: [ASSISTANT.id] });
    const budgetsBefore = (await gm.rpc("sent")).filter((x) => x.event === "fate.gm_budget").length;
    // As Foundry syncs it, the assistant's client has the pool too; FCO takes a point off it there.
    await assistant.rpc("setUserFlag", ASSISTANT.id, ...POOL, 3);
    const spend = await assistant.rpc("setUserFlag", ASSISTANT.id, ...POOL, 2);
    await gm.rpc("receiveUserUpdate", ASSISTANT.id, spend, {}, ASSISTANT.id);
    await gm.waitFor("sent", (s) => s.filter((x) => x.event === "fate.gm_budget").length === budgetsBefore + 1, { what: "the budget sent" });
    const state = await gm.waitFor("scene", (sc) => sc?.gm_fate_points === 2, { what: "the bridge's budget is 2" });
    assert.equal(state.gm_fate_points, 2);
    // The update arrives again (a second tab, a re-sent hook): nothing more is spent.
    await gm.rpc("receiveUserUpdate", ASSISTANT.id, spend, {}, ASSISTANT.id);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal((await gm.rpc("sent")).filter((x) => x.event === "fate.gm_budget").length, budgetsBefore + 1, "landed once");
    assert.equal((await gm.rpc("call", "scene.read", {})).data.gm_fate_points, 2);
    assert.equal((await gm.rpc("user", GM.id)).flags["fate-core-official"].gmfatepoints, 2, "every GM's pool shows the budget");
    await assistant.close();
    clients.splice(clients.indexOf(assistant), 1);
  });

  test("the active GM leaves mid-request: the next GM takes the relay and the request is answered once", async () => {
    assistant = await launch("assistant-2", ASSISTANT, world.key);
    await connected(assistant, "assistant");
    assert.equal(await assistant.rpc("relaying"), false, "only the active GM relays");
    const before = (await ann.rpc("messages")).length;
    // The GM forwards Ann's request, the bridge commits it, and the GM leaves before answering.
    const starts = (sent) => sent.filter((x) => x.event === "relay" && x.payload.event === "action.start" && x.ack?.ok);
    const startsBefore = starts(await gm.rpc("sent")).length;
    await gm.rpc("dropRelayAnswers", true);
    await queue([1, 0, 0, 0]);
    const pending = ann.rpc("startAction", ZIRD._id, "Athletics", { opposition: 1 });
    await gm.waitFor("sent", (s) => starts(s).length === startsBefore + 1, { what: "the GM relayed it" });
    await gm.close();
    clients.splice(clients.indexOf(gm), 1);
    await assistant.waitFor("relaying", (r) => r === true, { what: "the assistant takes the relay" });
    const data = await pending;
    assert.ok(data?.card_id, "Ann's click is answered, by the next GM");
    const resent = (await relayed(assistant)).filter((e) => e.payload.payload.request_id === (e.payload.payload.request_id) && e.payload.event === "action.start");
    assert.equal(resent.length, 1, "sent again once, with the same request id");
    assert.deepEqual(resent[0].ack.data, { ...resent[0].ack.data, card_id: data.card_id });
    const synced = await assistant.rpc("call", "world.sync", { since: 0 });
    const creates = synced.data.emits.filter((e) => e.event === "card" && e.data.card_id === data.card_id && e.data.op === "create");
    assert.equal(creates.length, 1, "the action happened once");
    await ann.waitFor("messages", (ms) => ms.length === before + 1, { what: "Ann's one card" });
    gm = assistant;
  });

  test("no GM at all: the player waits for the GM's bridge and FCO's own roll answers the click; it resumes when a GM is back", async () => {
    await gm.close();
    clients.splice(clients.indexOf(gm), 1);
    const status = await ann.waitFor("status", (s) => s.state === "offline" && s.reason === "no_gm", { what: "no GM" });
    assert.match(status.badge, /offline/i);
    assert.equal(await ann.rpc("startAction", ZIRD._id, "Athletics", { opposition: 1 }), null);
    assert.ok((await ann.rpc("notifications")).some((n) => /waiting for a GM/.test(n.message)));
    await ann.rpc("renderSheet", ZIRD._id);
    const before = (await ann.rpc("nativeRolls")).length;
    await ann.rpc("clickSkill", ZIRD._id, "Athletics");
    const native = await ann.rpc("nativeRolls");
    assert.deepEqual(native.slice(before), [{ actor: ZIRD._id, skill: "Athletics" }], "fate-core-official rolled it");
    const notes = await ann.rpc("notifications");
    assert.match(notes.at(-1).message, /Athletics rolled by fate-core-official, not resolved by Fate Bridge: the bridge is offline\. Waiting for a GM/);
    gm = await launch("gm-back", GM, world.key);
    await connected(ann, "ann again");
    await queue([0, 0, 0, 0]);
    const again = await ann.rpc("startAction", ZIRD._id, "Athletics", { opposition: 1 });
    assert.ok(again?.card_id, "the bridge resolves Ann's rolls again");
  });

  test("a player who closes Foundry stops counting as present on the bridge (the GM's client says so)", async () => {
    await gm.waitFor("relaying", (r) => r === true, { what: "the GM relays" });
    await bob.close();
    clients.splice(clients.indexOf(bob), 1);
    const sent = await gm.waitFor("sent", (s) => s.some((x) => x.event === "relay.leave" && x.ack), { what: "relay.leave" });
    const leave = sent.find((x) => x.event === "relay.leave");
    assert.equal(leave.payload.user, BOB.id);
    assert.equal(leave.ack.ok, true);
  });

  test("the bridge restarts: the player is told the GM's bridge is down, FCO rolls meanwhile, and the relay resumes with nothing lost", async () => {
    const before = await gm.rpc("call", "world.sync", { since: 0 });
    await bridge.stop();
    const down = await ann.waitFor("status", (s) => s.state === "offline" && s.reason === "gm_offline", { what: "the GM's bridge down" });
    assert.match(down.badge, /GM's bridge is not connected/);
    const refused = await ann.rpc("call", "hello", {});
    assert.equal(refused.ok, false);
    assert.equal(refused.error.code, "offline");
    bridge = await startBridge({ dataDir, port: bridge.port });
    await connected(gm, "gm after the restart");
    await connected(ann, "ann after the restart");
    const after = await gm.rpc("call", "world.sync", { since: 0 });
    assert.equal(after.data.last_seq, before.data.last_seq, "the log is as it was");
    await queue([1, 0, 0, 0]);
    const data = await ann.rpc("startAction", ZIRD._id, "Athletics", { opposition: 1 });
    assert.ok(data?.card_id, "Ann acts again through the relay");
  });
});
