// Integration: a real bridge process (--dev-dice), the active GM, an assistant GM and a player,
// each a fake Foundry client in its own worker thread running the module's real code over
// socket.io-client. Foundry's server is simulated by the test: it relays a user's flag update
// and a chat message written by one client to the others.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { addWorld, freePort, startBridge, tempDataDir } from "./support/bridge-process.mjs";
import { byCard, cardIn, showMessage } from "./support/chat.mjs";
import { FoundryClient, directClient, launchGreeted } from "./support/clients.mjs";
import { startFoundryServer } from "./support/foundry-server.mjs";
import { check, loadValidators } from "./support/schemas.mjs";
import { ogre, zird } from "./fixtures/actors.mjs";
import { readJson } from "./support/node-foundry.mjs";

const GM = { id: "activeGmUser0001", name: "Active GM", isGM: true };
const ASSISTANT = { id: "assistGmUser0001", name: "Assistant GM", isGM: true, role: 3 };
const PLAYER = { id: "playerUserAnn001", name: "Ann", isGM: false };
const USERS = [GM, ASSISTANT, PLAYER];
const ZIRD = zird(PLAYER.id);
const OGRE = ogre();

let port;
let world;
let bridge;
let validators;
let foundry;
let gm;
let assistant;
let player;
const clients = [];

function clientOptions(user, key) {
  // Foundry's server: the GMs' clients hear each other and elect the one that writes.
  return directClient({ users: USERS, user, activeGM: GM.id, actors: [ZIRD, OGRE], port, worldId: world.id, key, foundryServer: foundry.url });
}

const launch = (name, user, key) => launchGreeted(clients, name, clientOptions(user, key));

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

const queue = async (rolls) => assert.equal((await gm.rpc("call", "dev.queue_dice", { rolls })).ok, true);

before(async () => {
  validators = await loadValidators();
  const dataDir = await tempDataDir();
  port = await freePort();
  world = await addWorld(dataDir, "integration-world", "Integration World");
  bridge = await startBridge({ dataDir, port });
  foundry = await startFoundryServer();
  gm = await launch("active-gm", GM, world.key);
  assistant = await launch("assistant-gm", ASSISTANT, world.key);
  // R2.1 Decision: this table trusts its players' ratings, so the scenarios about other rules
  // need no confirmation; the confirmation scenario below turns it off again.
  assert.equal((await gm.rpc("call", "world.settings", { trust_player_ratings: true })).ok, true);
});

after(async () => {
  for (const c of clients) await c.close();
  await foundry?.close();
  await bridge?.stop();
});

const aspectId = (card, name) => card.aspects.find((a) => a.name === name)?.id;

describe("player binding (DESIGN Trust)", () => {
  test("a player writes the bridge's nonce into its own user flag; the active GM binds it; the player is told", async () => {
    player = await launch("player", PLAYER);
    const hello = await player.rpc("hello");
    assert.equal(hello.role, "player");
    assert.equal(hello.bound, false);
    assert.ok(hello.bind_nonce.length >= 8);
    assert.equal("key" in (await player.rpc("sockets")).auths[0], false, "a player sends no key");
    const user = await player.waitFor("user", (u) => u.flags?.["fate-bridge"]?.bindNonce, { what: "nonce flag", args: [PLAYER.id] });
    assert.equal(user.flags["fate-bridge"].bindNonce, hello.bind_nonce);

    // Unbound: acting is refused, and the user reads the bridge's reason.
    assert.equal(await player.rpc("startAction", ZIRD._id, "Athletics", { opposition: 2 }), null);
    assert.ok((await player.rpc("notifications")).some((n) => n.type === "warn" && /confirmed which Foundry user/.test(n.message)));

    // Foundry's server broadcasts the user update to the GMs.
    for (const c of [gm, assistant]) await c.rpc("receiveUserUpdate", PLAYER.id, { flags: { "fate-bridge": { bindNonce: hello.bind_nonce } } });
    const notes = await player.waitFor("notifications", (n) => n.some((x) => x.type === "info"), { what: "bound notice" });
    assert.ok(notes.some((n) => n.type === "info" && /confirmed who you are/.test(n.message)), JSON.stringify(notes));
    // The bound notice can reach the player before the GM's client has its ack: wait for the ack.
    const sent = await gm.waitFor("sent", (s) => s.some((x) => x.event === "user.bind" && x.ack), { what: "user.bind ack" });
    const binds = sent.filter((s) => s.event === "user.bind");
    assert.equal(binds.length, 1);
    assert.deepEqual({ ...binds[0].payload, request_id: undefined }, { request_id: undefined, user_id: PLAYER.id, nonce: hello.bind_nonce });
    assert.equal(binds[0].ack.ok, true);
    assert.equal((await assistant.rpc("sent")).some((s) => s.event === "user.bind"), false, "only the active GM binds");
  });

  test("the active GM synced the player's actor on connect, in the bridge's model", async () => {
    const sync = (await gm.rpc("sent")).find((s) => s.event === "actor.sync" && s.payload.actor.id === ZIRD._id);
    const actor = sync.payload.actor;
    assert.deepEqual(actor.owners, [PLAYER.id]);
    assert.deepEqual(actor.skills, { Athletics: 3, Lore: 4, Will: 2 });
    assert.equal(actor.fate_points, 3);
    assert.deepEqual(actor.aspects.map((a) => a.name), ["Wizard of the Old School", "Rivals in the Collegia"]);
    assert.deepEqual(actor.stunts, [{ name: "Scholar", skill: "Lore", bonus: 2, actions: ["create_advantage", "take_advantage"] }]);
    assert.deepEqual(actor.consequences.map((c) => [c.severity, c.name ?? null]), [[2, null], [4, "Twisted Ankle"], [6, null]]);
    // R5.10: named tracks of a kind, each box's value (escalating 1, 2) and mark.
    assert.deepEqual(actor.stress.map((t) => [t.name, t.kind, t.boxes.map((b) => [b.value, b.marked])]), [
      ["Physical", "physical", [[1, false], [2, false]]],
      ["Mental", "mental", [[1, true], [2, false]]]
    ]);
    assert.equal((await gm.rpc("sent")).some((s) => s.event === "actor.sync" && s.payload.actor.id === OGRE._id), false, "NPCs wait until used");
  });
});

describe("actions through the card, permissions, patches and statuses", () => {
  test("an excelled overcome gives a boost: the card resolves on Pass and only the active GM sets the token status", async () => {
    await queue([[1, 1, 1, 1]]);
    const data = await player.rpc("startAction", ZIRD._id, "Athletics", { opposition: 0 });
    assert.ok(data?.card_id, "the bound player may act for its actor");
    assert.equal(data.card.state, "invoking");
    assert.equal(data.card.provisional, true);
    let message = await cardIn(player, data.card_id, (m) => m.card.state, "first card");
    assert.equal(message.author, PLAYER.id, "the acting user's client writes its card");
    assert.deepEqual(message.rollDice, [1, 1, 1, 1]);
    assert.equal(message.rollDieClass, "FateDie");
    assert.equal(message.rollTotal, 7);
    assert.match(message.card.outcome, /Excel .*so far/i);
    assert.deepEqual(message.controls, ["invoke:actor", "pass:actor"]);

    await player.rpc("clickCard", data.card_id, 'button[data-fb="pass"][data-side="actor"]');
    message = await cardIn(player, data.card_id, (m) => /Resolved/.test(m.card.state), "resolved card");
    assert.doesNotMatch(message.card.outcome, /so far/);
    assert.ok(message.card.effects.some((e) => /Zird the Arcane gains a boost/.test(e)), JSON.stringify(message.card.effects));
    assert.deepEqual(message.controls, []);

    const zirdOnGm = await gm.waitFor("actor", (a) => a.statuses.includes("fate-bridge-boost"), { what: "boost status", args: [ZIRD._id] });
    assert.ok(zirdOnGm.statuses.includes("fate-bridge-boost"));
    assert.deepEqual((await assistant.rpc("log")).statusToggles, [], "the assistant GM writes nothing");
    assert.deepEqual((await player.rpc("log")).statusToggles, []);
  });

  test("an invoke from the card: the fate point is paid, +2 shows, and the same message updates", async () => {
    await queue([[-1, -1, 0, 0]]);
    const data = await player.rpc("startAction", ZIRD._id, "Athletics", { opposition: 3, description: "Cross the rope bridge" });
    const cardId = data.card_id;
    let message = await cardIn(player, cardId, (m) => m.card.state, "second card");
    assert.match(message.card.outcome, /Fumble/);
    const createdBefore = (await player.rpc("log")).created;

    // Permissions: the player sees Invoke/Pass for its own side only; the GM may invoke for both.
    assert.deepEqual(message.controls, ["invoke:actor", "pass:actor"]);
    const gmView = await showMessage(player, gm, cardId);
    assert.deepEqual(gmView.controls, ["invoke:actor", "pass:actor", "invoke:opposition", "cancel"], "the GM may also cancel an open action");
    assert.equal(gmView.costPicker, false);

    await player.rpc("clickCard", cardId, 'button[data-fb="invoke"][data-side="actor"]');
    const wizard = aspectId(data.card, "Wizard of the Old School");
    assert.ok(wizard);
    const dialog = await player.rpc("answerDialog", { payment: "fate_point", effect: "bonus" }, "invoke", { radio: { aspect: wizard } });
    assert.equal(dialog.rejectClose, false);
    assert.match(dialog.text, /Wizard of the Old School/);
    assert.match(dialog.text, /Rivals in the Collegia/);
    assert.match(dialog.text, /Zird the Arcane \(3 fate points\)/);

    message = await cardIn(player, cardId, (m) => m.card.invokes.length === 1, "card with the invoke");
    assert.match(message.card.invokes[0], /Zird the Arcane invoked Wizard of the Old School for \+2 \(fate point\)/);
    assert.deepEqual(message.card.actor.bonuses, ["invokes +2"]);
    assert.equal(message.card.actor.total, "Good +3");
    assert.equal(message.card.actor.fp, "2 FP");
    assert.match(message.card.outcome, /Tie .*so far/);
    assert.equal((await player.rpc("log")).created, createdBefore, "no new message: the same one was updated");
    assert.equal((await player.rpc("messages")).length, 2);

    // actor.patch: only the active GM writes it, marked so it is not synced back (no echo).
    const syncsBefore = (await gm.rpc("sent")).filter((s) => s.event === "actor.sync").length;
    const onGm = await gm.waitFor("actor", (a) => a.system.details.fatePoints.current === 2, { what: "fate point written", args: [ZIRD._id] });
    assert.ok(Number.isInteger(onGm.flags["fate-bridge"].patchSeq));
    const patchWrite = (await gm.rpc("log")).actorUpdates.find((u) => u.id === ZIRD._id);
    assert.equal(patchWrite.options.fateBridgeWrite, true);
    assert.equal((await gm.rpc("sent")).filter((s) => s.event === "actor.sync").length, syncsBefore, "the bridge's own write is not sent back");
    assert.equal((await assistant.rpc("actor", ZIRD._id)).system.details.fatePoints.current, 3);
    assert.deepEqual((await assistant.rpc("log")).actorUpdates, []);
    assert.deepEqual((await player.rpc("log")).actorUpdates, []);
  });

  test("a tie turned into success at a minor cost: the player chooses, only the GM sees the cost picker", async () => {
    const [, second] = await player.rpc("messages");
    const cardId = second.flags["fate-bridge"].cardId;
    await player.rpc("clickCard", cardId, 'button[data-fb="pass"][data-side="actor"]');
    // R4.4: passive opposition has no one to answer an invoke, so it stays passed: the actor's
    // pass resolves the action.
    let message;
    message = await cardIn(player, cardId, (m) => /Awaiting a choice/.test(m.card.state), "choosing");
    assert.deepEqual(message.controls, ["choose:fail", "choose:succeed_at_cost"]);
    assert.doesNotMatch(message.card.outcome, /so far/);

    await player.rpc("clickCard", cardId, 'button[data-fb="choose"][data-choice="succeed_at_cost"]');
    message = await cardIn(player, cardId, (m) => /GM picks the cost/.test(m.card.state), "costing");
    assert.deepEqual(message.controls, [], "the player has nothing to press while the GM picks the cost");
    assert.equal(message.costPicker, false);

    const gmView = await showMessage(player, gm, cardId);
    assert.equal(gmView.costPicker, true);
    const hello = await gm.rpc("hello");
    assert.deepEqual(gmView.costKinds, hello.costs.minor);
    await gm.rpc("setCardField", cardId, "kind", "wrinkle");
    await gm.rpc("setCardField", cardId, "text", "The rope frays behind you");
    await gm.rpc("clickCard", cardId, 'button[data-fb="cost"]');

    message = await cardIn(player, cardId, (m) => /Resolved/.test(m.card.state), "resolved at a cost");
    assert.ok(message.card.effects.some((e) => e === "Minor cost — A new wrinkle: The rope frays behind you"), JSON.stringify(message.card.effects));
    assert.equal(message.card.verdict, "Success");
    assert.equal((await player.rpc("messages")).length, 2);
  });

  test("a refused press shows the refusal as a warning, said from its code and field", async () => {
    const [, second] = await player.rpc("messages");
    const ack = await player.rpc("call", "action.pass", { action_id: second.flags["fate-bridge"].card.action_id, side: "actor" });
    assert.equal(ack.ok, false);
    const result = await player.rpc("pass", second.flags["fate-bridge"].card.action_id);
    assert.equal(result, null);
    const notes = await player.rpc("notifications");
    // Protocol 7: the module words the refusal from its code and field (en.json), not from
    // the bridge's English message.
    assert.equal(ack.error.code, "wrong_state");
    assert.equal(ack.error.params.reason, "action_state");
    const state = (await readJson("foundry-module/lang/en.json")).FATEBRIDGE.Card.State[ack.error.params.state];
    assert.ok(notes.some((n) => n.type === "warn" && n.message === `Fate Bridge: That can't be done now (the action: ${state}).`), JSON.stringify(notes.at(-1)));
  });

  test("world.sync replays cards, patches and statuses through the same handlers without writing twice", async () => {
    const gmBefore = await gm.rpc("log");
    const playerBefore = await player.rpc("log");
    for (const c of [gm, player, assistant]) {
      const replay = await c.rpc("catchUp", 0);
      assert.equal(replay.ok, true);
      const events = new Set(replay.data.emits.map((e) => e.event));
      assert.deepEqual([...events].sort(), ["actor.patch", "card", "scene.state", "token.status"]);
    }
    const gmAfter = await gm.rpc("log");
    const playerAfter = await player.rpc("log");
    assert.equal(gmAfter.actorUpdates.length, gmBefore.actorUpdates.length, "patches already written are not written again");
    assert.equal(gmAfter.statusToggles.length, gmBefore.statusToggles.length);
    assert.equal(playerAfter.created, playerBefore.created, "cards already written are not created again");
    assert.equal((await player.rpc("messages")).length, 2);
    assert.deepEqual((await assistant.rpc("log")).actorUpdates, []);
  });

  test("everything every client sent matches the bridge's schemas", async () => {
    for (const c of [gm, assistant, player]) await assertSentValid(c);
  });
});

describe("the GM owns the numbers: confirming on the card (R2.1, R9.1, R10.1)", () => {
  test("a player's rating, danger and NPC helper wait; only the GM sees the pre-filled confirm form; then the dice", async () => {
    assert.equal((await gm.rpc("call", "world.settings", { trust_player_ratings: false })).ok, true);
    const syncsBefore = (await gm.rpc("sent")).filter((s) => s.event === "actor.sync").length;
    await gm.rpc("viewScene", [ZIRD._id, OGRE._id]); // the active GM sends the Ogre
    await gm.waitFor("sent", (s) => s.filter((x) => x.event === "actor.sync" && x.ack?.ok).length > syncsBefore, { what: "Ogre synced" });
    const data = await player.rpc("startAction", ZIRD._id, "Athletics", { opposition: -4, dangerous: { actor: true }, helpers: [{ character_id: OGRE._id }] });
    assert.equal(data.card.state, "confirming");
    assert.equal(data.card.proposal.passive_rating.value, -4);
    const cardId = data.card_id;
    let message = await cardIn(player, cardId, (m) => m.card.state, "confirming card");
    assert.match(message.card.state, /Awaiting confirmation/);
    assert.deepEqual(message.controls, [], "the player presses nothing: the GM confirms and answers for the NPC");
    let gmView = await showMessage(player, gm, cardId);
    assert.deepEqual(gmView.controls, ["confirm", `help:${OGRE._id}`, `help:${OGRE._id}`, "cancel"]);

    // R10.1: the GM accepts for the Ogre (an NPC has no other owner).
    await gm.rpc("clickCard", cardId, 'button[data-fb="help"][data-accept="true"]');
    message = await cardIn(player, cardId, (m) => m.flags["fate-bridge"].card.actor.helpers.length, "the Ogre joined");
    assert.deepEqual(message.flags["fate-bridge"].card.actor.helpers.map((h) => h.name), ["Grumpy Ogre"]);
    gmView = await showMessage(player, gm, cardId);
    assert.deepEqual(gmView.controls, ["confirm", "cancel"]);

    // R2.1, R9.1: the GM changes the rating to Fair (+2) and keeps the danger; one click.
    await gm.rpc("setCardField", cardId, "rating", "2");
    await gm.rpc("setCardField", cardId, "dangerActor", true);
    await gm.rpc("clickCard", cardId, 'button[data-fb="confirm"]');
    message = await cardIn(player, cardId, (m) => /Declared/.test(m.card.state), "declared card");
    assert.deepEqual(message.controls, ["roll", `concede:${ZIRD._id}`]);
    const confirm = (await gm.rpc("sent")).filter((s) => s.event === "action.confirm").at(-1);
    assert.deepEqual({ ...confirm.payload, request_id: undefined }, { request_id: undefined, action_id: data.action_id, dangerous: { actor: true, opposition: false }, passive_rating: 2 });
    assert.equal(confirm.ack.ok, true);

    await queue([[0, 0, 0, 0]]);
    await player.rpc("clickCard", cardId, 'button[data-fb="roll"]');
    message = await cardIn(player, cardId, (m) => /Invoking/.test(m.card.state), "rolled card");
    assert.equal(message.card.opposition.total, "Fair +2");
    for (const c of [gm, player]) await assertSentValid(c);
  });
});

describe("refusals", () => {
  test("a wrong GM key is refused with bad_key, shown in words, and not retried", async () => {
    const wrong = await FoundryClient.launch("wrong-key", clientOptions(GM, "not-the-key"));
    clients.push(wrong);
    await wrong.rpc("start");
    const status = await wrong.waitFor("status", (s) => s.state === "refused", { what: "refused" });
    assert.equal(status.reason, "bad_key");
    assert.match(status.badge, /GM key is wrong/);
    check(validators.auth, (await wrong.rpc("sockets")).auths[0], "handshake auth");
    await new Promise((r) => setTimeout(r, 2500)); // longer than the first backoff step
    assert.equal((await wrong.rpc("sockets")).connects, 1);
  });
});

describe("frames the bridge cannot read", () => {
  test("a message nested too deeply gets an error ack at once and the user sees the bridge's notice", async () => {
    // DESIGN Trust: a frame the bridge's decoder cannot parse is answered, never left to time out.
    const odd = await launch("deep-macro", ASSISTANT, world.key);
    let deep = {};
    for (let i = 0; i < 1500; i += 1) deep = { x: deep };
    const ack = await odd.rpc("call", "hello", { module_version: "0.1.0", deep });
    assert.equal(ack.ok, false);
    assert.equal(ack.error.code, "invalid", JSON.stringify(ack));
    assert.match(ack.error.message, /could not read a message/);
    const notes = await odd.waitFor("notifications", (n) => n.some((x) => x.type === "error"), { what: "malformed notice" });
    assert.ok(notes.some((n) => n.type === "error" && /^Fate Bridge: The bridge could not read a message/.test(n.message)), JSON.stringify(notes));
    const again = await odd.rpc("call", "hello", { module_version: "0.1.0" });
    assert.equal(again.ok, true, "the connection keeps serving");
  });
});

describe("an answer that never arrives", () => {
  test("the bridge committed a player's action but its answer was lost: the player's client catches up and writes the card", async () => {
    // Protocol 4: the sender hears its own commit only in the answer, so a lost answer loses
    // the card it alone writes (the acting user, present); the module catches up from the log.
    assert.equal((await gm.rpc("call", "world.settings", { trust_player_ratings: true })).ok, true);
    await queue([[0, 0, 0, 0]]);
    const before = (await player.rpc("messages")).length;
    const syncsBefore = (await player.rpc("sent")).filter((s) => s.event === "world.sync").length;
    await player.rpc("loseAnswerTo", "action.start");
    const started = await player.rpc("startAction", ZIRD._id, "Athletics", { opposition: 0 });
    assert.equal(started, null, "to the module the call failed");
    const notes = await player.waitFor("notifications", (n) => n.some((x) => /did not answer in time/.test(x.message)), { what: "timeout notice" });
    assert.ok(notes.some((n) => /did not answer in time/.test(n.message)), JSON.stringify(notes.at(-1)));
    const messages = await player.waitFor("messages", (ms) => ms.length === before + 1, { what: "the caught-up card" });
    const card = messages.at(-1);
    assert.equal(card.author, PLAYER.id, "the acting user's client writes its card");
    assert.match(card.card.state, /Invoking/);
    assert.deepEqual(card.rollDice, [0, 0, 0, 0]);
    const syncs = (await player.rpc("sent")).filter((s) => s.event === "world.sync");
    assert.equal(syncs.length, syncsBefore + 1, "one catch-up");
    // The action is real on the bridge: the card's buttons move it on.
    const actionId = card.flags["fate-bridge"].card.action_id;
    await player.rpc("clickCard", card.flags["fate-bridge"].cardId, 'button[data-fb="pass"][data-side="actor"]');
    const resolved = await cardIn(player, card.flags["fate-bridge"].cardId, (m) => /Resolved/.test(m.card.state), "resolved card");
    assert.equal(resolved.flags["fate-bridge"].card.action_id, actionId);
    assert.equal((await player.rpc("messages")).length, before + 1, "the same message, not a second one");
    assert.equal((await gm.rpc("call", "world.settings", { trust_player_ratings: false })).ok, true);
  });
});
