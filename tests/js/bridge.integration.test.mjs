// Integration: a real bridge process, two fake Foundry GM clients (active GM and assistant GM) and
// a player, each in its own worker thread running the module's real code over socket.io-client.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { addWorld, freePort, startBridge, tempDataDir } from "./support/bridge-process.mjs";
import { FoundryClient } from "./support/clients.mjs";
import { check, loadValidators } from "./support/schemas.mjs";

const GM = { id: "activeGmUser0001", name: "Active GM", isGM: true };
const ASSISTANT = { id: "assistGmUser0001", name: "Assistant GM", isGM: true };
const PLAYER = { id: "playerUserAnn001", name: "Ann", isGM: false };
const USERS = [GM, ASSISTANT, PLAYER];
const ACTOR = {
  _id: "actorZird0000001",
  name: "Zird the Arcane",
  type: "fate-core-official",
  system: { skills: { Athletics: { name: "Athletics", rank: 3 }, Lore: { name: "Lore", rank: 4 } } },
  ownership: { default: 0, [PLAYER.id]: 3 }
};

let dataDir;
let port;
let world;
let bridge;
let validators;
const clients = [];

function clientOptions(user, key) {
  return {
    users: USERS,
    userId: user.id,
    activeGM: GM.id,
    systemId: "fate-core-official",
    actors: [ACTOR],
    settings: {
      "fate-bridge.bridgeUrl": `http://127.0.0.1:${port}`,
      "fate-bridge.worldId": world.id,
      ...(key === undefined ? {} : { "fate-bridge.gmKey": key })
    }
  };
}

async function launch(name, user, key) {
  const client = await FoundryClient.launch(name, clientOptions(user, key));
  clients.push(client);
  await client.rpc("start");
  return client;
}

/** Everything a client sent must match the bridge's schemas, and every ack the ack schema. */
async function assertSentValid(client) {
  const sent = await client.rpc("sent");
  assert.ok(sent.length > 0);
  for (const { event, payload, ack } of sent) {
    const validate = validators.client[event];
    assert.ok(validate, `${client.name} sent an event the bridge does not define: ${event}`);
    check(validate, payload, `${client.name} ${event} payload`);
    if (ack) check(validators.ack, ack, `${event} ack`);
    if (ack?.ok) check(validators.results[event], ack.data, `${event} result`);
  }
  const ids = sent.map((s) => s.payload.request_id);
  assert.equal(new Set(ids).size, ids.length, "every request has a fresh request_id");
  return sent;
}

before(async () => {
  validators = await loadValidators();
  dataDir = await tempDataDir();
  port = await freePort();
  world = await addWorld(dataDir, "integration-world", "Integration World");
  assert.equal(world.id, "integration-world");
  assert.ok(world.key);
  bridge = await startBridge({ dataDir, port });
});

after(async () => {
  for (const c of clients) await c.close();
  await bridge?.stop();
});

describe("one overcome roll from a Foundry sheet through the bridge and back", () => {
  let activeGm;
  let assistant;
  let card;
  let cardSeq;

  test("both GM clients connect and greet the bridge", async () => {
    activeGm = await launch("active-gm", GM, world.key);
    assistant = await launch("assistant-gm", ASSISTANT, world.key);
    for (const c of [activeGm, assistant]) {
      const status = await c.waitFor("status", (s) => s.state === "connected", { what: "connected" });
      assert.equal(status.badgeState, "connected");
      const hello = await c.waitFor("hello", (h) => h !== null, { what: "hello" });
      assert.equal(hello.protocol, 1);
      assert.equal(hello.role, "gm");
      assert.equal(hello.dev_dice, true);
      const sockets = await c.rpc("sockets");
      check(validators.auth, sockets.auths[0], "handshake auth");
      assert.equal(sockets.auths[0].key, world.key);
    }
  });

  test("the assistant GM rolls Athletics (+3) against Great (+4) with dice + + 0 0: Superb (+5), 1 shift, Succeed", async () => {
    const queued = await assistant.rpc("call", "dev.queue_dice", { rolls: [[1, 1, 0, 0]] });
    assert.equal(queued.ok, true, JSON.stringify(queued));

    await assistant.rpc("renderSheet", ACTOR._id);
    await assistant.rpc("clickRoll", ACTOR._id, "Athletics");
    const dialog = await assistant.rpc("answerDialog", { opposition: 4, description: "Leap the chasm" });
    assert.equal(dialog.rejectClose, false);

    const [message] = await assistant.waitFor("messages", (m) => m.length === 1, { what: "the chat message" });
    assert.equal(message.author, ASSISTANT.id);
    assert.equal(message.speaker.actor, ACTOR._id);
    assert.equal(message.rollDieClass, "FateDie");
    assert.deepEqual(message.rollDice, [1, 1, 0, 0]);
    card = message.flags["fate-bridge"].card;
    cardSeq = message.flags["fate-bridge"].seq;
    assert.ok(Number.isInteger(cardSeq) && cardSeq >= 1);
    assert.equal(message.rollTotal, card.total.value);
    assert.equal(card.total.value, 5);
    assert.equal(message.roll.formula, "4dF + 3");
    assert.deepEqual(message.card.dice, [1, 1, 0, 0]);
    assert.equal(message.card.actor, "Zird the Arcane");
    assert.equal(message.card.action, "Overcome");
    assert.match(message.card.skill, /^Athletics Good \(\+3\)$/);
    assert.equal(message.card.total, "Superb +5");
    assert.equal(message.card.opposition, "Great +4");
    assert.equal(message.card.shifts, "+1");
    assert.equal(message.card.outcome, "Succeed");
    assert.match(message.card.outcomeClass, /fate-bridge-card--succeed/);
    assert.match(message.card.footer, new RegExp(`Event #${card.event_seq} ${card.event_hash.slice(0, 10)}`));
    assert.equal(card.description, "Leap the chasm");
    assert.equal(message.flags["fate-bridge"].cardId.length > 0, true);
  });

  test("exactly one client wrote it: the acting user's; the active GM wrote nothing", async () => {
    // Give the active GM time to have received the same emit: it answers a call after it.
    const ping = await activeGm.rpc("call", "world.sync", { since: 0 });
    assert.equal(ping.ok, true);
    assert.ok(ping.data.emits.some((e) => e.card.action_id === card.action_id && e.writer === ASSISTANT.id));
    assert.equal(await assistant.rpc("created"), 1);
    assert.equal(await activeGm.rpc("created"), 0);
    assert.deepEqual(await activeGm.rpc("messages"), []);
  });

  test("the assistant synced the actor before acting, and everything sent matches the schemas", async () => {
    const sent = await assertSentValid(assistant);
    const events = sent.map((s) => s.event);
    assert.ok(events.indexOf("actor.sync") < events.indexOf("action.start"));
    const sync = sent.find((s) => s.event === "actor.sync");
    assert.deepEqual(sync.payload.actor, { id: ACTOR._id, name: ACTOR.name, owners: [PLAYER.id], skills: { Athletics: 3, Lore: 4 } });
    const start = sent.find((s) => s.event === "action.start");
    assert.deepEqual(
      { ...start.payload, request_id: undefined },
      { request_id: undefined, type: "overcome", actor_id: ACTOR._id, skill: "Athletics", opposition: { kind: "passive", rating: 4 }, description: "Leap the chasm" }
    );
    assert.equal(start.ack.ok, true);
    await assertSentValid(activeGm);
  });

  test("a player is not yet bound to a user: action.start is refused and the user is told", async () => {
    const player = await launch("player", PLAYER);
    const status = await player.waitFor("status", (s) => s.state === "connected", { what: "player connected" });
    assert.equal(status.state, "connected");
    const sockets = await player.rpc("sockets");
    assert.equal(sockets.auths[0].role, "player");
    assert.equal("key" in sockets.auths[0], false, "a player sends no key");
    const result = await player.rpc("roll", ACTOR._id, "Athletics", { opposition: 2 });
    assert.equal(result, null);
    const sent = await assertSentValid(player);
    const start = sent.find((s) => s.event === "action.start");
    assert.equal(start.ack.ok, false);
    assert.equal(start.ack.error.code, "unbound");
    assert.equal(sent.some((s) => s.event === "actor.sync"), false, "players never sync actors");
    const notes = await player.rpc("notifications");
    assert.ok(notes.some((n) => n.type === "warn" && n.message.includes(start.ack.error.message)), JSON.stringify(notes));
    assert.equal(await player.rpc("created"), 0);
  });

  test("after a bridge restart both clients reconnect, catch up with world.sync, and nothing is written twice", async () => {
    const beforeSent = (await assistant.rpc("sent")).length;
    await bridge.stop();
    await assistant.waitFor("status", (s) => s.state !== "connected", { what: "offline after stop" });
    bridge = await startBridge({ dataDir, port });
    for (const c of [assistant, activeGm]) await c.waitFor("status", (s) => s.state === "connected", { what: "reconnected", ms: 60000 });
    const sent = await assistant.waitFor("sent", (s) => s.slice(beforeSent).some((e) => e.event === "world.sync" && e.ack), { what: "world.sync after reconnect" });
    const resync = sent.slice(beforeSent).find((e) => e.event === "world.sync");
    assert.ok(resync.payload.since >= cardSeq, "catch-up starts after the last processed seq, not from 0");
    // Replay everything from the start: the card is replayed, and still written only once.
    const replay = await assistant.rpc("catchUp", 0);
    assert.equal(replay.ok, true);
    assert.ok(replay.data.emits.some((e) => e.card.action_id === card.action_id));
    assert.equal(await assistant.rpc("created"), 1);
    assert.equal((await assistant.rpc("messages")).length, 1);
    assert.equal(await activeGm.rpc("created"), 0);
    await assertSentValid(assistant);
  });

  test("a roll after the restart still works and adds exactly one more message", async () => {
    assert.equal((await assistant.rpc("call", "dev.queue_dice", { rolls: [[-1, -1, -1, 0]] })).ok, true);
    const data = await assistant.rpc("roll", ACTOR._id, "Lore", { opposition: 2 });
    assert.ok(data?.card_id, "action.start answered with a card id");
    const messages = await assistant.waitFor("messages", (m) => m.length === 2, { what: "second message" });
    const second = messages.find((m) => m.flags["fate-bridge"].cardId === data.card_id);
    assert.deepEqual(second.rollDice, [-1, -1, -1, 0]);
    assert.equal(second.card.total, "Average +1"); // Lore +4, dice -3
    assert.equal(second.card.shifts, "\u22121");
    assert.match(second.card.outcomeClass, /--fumble/);
    assert.equal(await activeGm.rpc("created"), 0);
  });
});

describe("refusals", () => {
  test("a wrong GM key is refused with bad_key, shown in words, and not retried", async () => {
    const wrong = await launch("wrong-key", GM, "not-the-key");
    const status = await wrong.waitFor("status", (s) => s.state === "refused", { what: "refused" });
    assert.equal(status.reason, "bad_key");
    assert.match(status.badge, /refused/i);
    assert.match(status.badge, /GM key is wrong/);
    check(validators.auth, (await wrong.rpc("sockets")).auths[0], "handshake auth");
    // Longer than the first backoff step: a retry would have happened by now.
    await new Promise((r) => setTimeout(r, 2500));
    assert.equal((await wrong.rpc("sockets")).connects, 1);
    assert.equal((await wrong.rpc("status")).state, "refused");
  });
});
