// Integration (issue 8): a real bridge process (--dev-dice) and fake Foundry clients (each in its
// own worker, the module's real code) whose fake enforces Foundry's document permissions:
// a ChatMessage is updated only by its author or a GM, an Actor by an owner or a GM, a User by
// itself or a GM, a Combat by a GM. Foundry's server is simulated by the test (relays).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { addWorld, freePort, startBridge, tempDataDir } from "./support/bridge-process.mjs";
import { byCard, cardIn, showMessage } from "./support/chat.mjs";
import { directClient, launchGreeted } from "./support/clients.mjs";
import { check, loadValidators } from "./support/schemas.mjs";
import { goblin, ogre, zird } from "./fixtures/actors.mjs";

const GM = { id: "activeGmUser0001", name: "Active GM", isGM: true };
const PLAYER = { id: "playerUserAnn001", name: "Ann", isGM: false };
const USERS = [GM, PLAYER];
const ZIRD = zird(PLAYER.id);
const OGRE = ogre();
const GOBLIN = goblin();

let port;
let world;
let bridge;
let validators;
let gm;
let player;
const clients = [];

const launch = (name, user, key) => launchGreeted(clients, name, directClient({ users: USERS, user, activeGM: GM.id, actors: [ZIRD, OGRE, GOBLIN], port, worldId: world.id, key }));

/** What Foundry's server does with the player's nonce flag: the GM's client sees it and binds. */
async function bindPlayer() {
  const hello = await player.waitFor("hello", (h) => h?.bind_nonce, { what: "player nonce" });
  await player.waitFor("user", (u) => u.flags?.["fate-bridge"]?.bindNonce === hello.bind_nonce, { what: "nonce flag", args: [PLAYER.id] });
  await gm.rpc("receiveUserUpdate", PLAYER.id, { flags: { "fate-bridge": { bindNonce: hello.bind_nonce } } });
  await player.waitFor("notifications", (n) => n.some((x) => /confirmed who you are/.test(x.message)), { what: "bound notice" });
}

const queue = async (rolls) => assert.equal((await gm.rpc("call", "dev.queue_dice", { rolls })).ok, true);

before(async () => {
  validators = await loadValidators();
  const dataDir = await tempDataDir();
  port = await freePort();
  world = await addWorld(dataDir, "fco-world", "FCO World");
  bridge = await startBridge({ dataDir, port });
  gm = await launch("active-gm", GM, world.key);
  player = await launch("player", PLAYER);
  await bindPlayer();
  // R2.1 Decision: this table trusts its players' ratings; these scenarios are about cards
  // and tokens, not about the GM confirming a proposal.
  assert.equal((await gm.rpc("call", "world.settings", { trust_player_ratings: true })).ok, true);
});

after(async () => {
  for (const c of clients) await c.close();
  await bridge?.stop();
});

describe("cards never freeze (issue 8.4)", () => {
  test("the GM wrote the card while the player was away; back, the player's choice still lands on the GM's message", async () => {
    // Athletics +3, dice 0 vs passive +3: a tie, which waits for the player's choice (R5.1).
    await queue([[0, 0, 0, 0]]);
    await player.rpc("dropCards", true); // the player's tab closes as the card comes in
    const started = await player.rpc("startAction", ZIRD._id, "Athletics", { opposition: 3 });
    const cardId = started.card_id;
    await player.rpc("disconnect");
    await player.rpc("dropCards", false);
    assert.equal((await player.rpc("messages")).length, 0, "the player never wrote its card");

    // The GM moves the action on; the player is away, so the GM's client writes — and creates — it.
    const pass = await gm.rpc("call", "action.pass", { action_id: started.action_id, side: "actor" });
    assert.equal(pass.ok, true, JSON.stringify(pass));
    const onGm = await cardIn(gm, cardId, (m) => /Awaiting a choice/.test(m.card.state), "GM-written card");
    assert.equal(onGm.author, GM.id);
    const report = (await gm.waitFor("sent", (s) => s.some((x) => x.event === "card.written" && x.ack), { what: "card.written" })).find((x) => x.event === "card.written");
    assert.deepEqual({ ...report.payload, request_id: undefined }, { request_id: undefined, action_id: started.action_id, author: GM.id });
    assert.equal(report.ack.ok, true);
    check(validators.client["card.written"], report.payload, "card.written payload");
    check(validators.results["card.written"], report.ack.data, "card.written result");

    // The player comes back: Foundry gives it the GM's message; the bridge binds it again.
    await showMessage(gm, player, cardId);
    await player.rpc("reconnect");
    await bindPlayer();
    await player.rpc("clickCard", cardId, 'button[data-fb="choose"][data-choice="fail"]');

    // The choice lands: the card's writer is the message's author (the GM), not the player.
    const resolved = await cardIn(gm, cardId, (m) => /Resolved/.test(m.card.state), "resolved on the GM's message");
    assert.equal(resolved.card.verdict, "Failure");
    assert.equal((await gm.rpc("messages")).filter((m) => m.flags["fate-bridge"].cardId === cardId).length, 1);
    assert.deepEqual(await player.rpc("refused"), [], "the player's client never tried a write Foundry refuses");
    assert.deepEqual(await gm.rpc("refused"), []);
  });

  test("a player's own card stays its own: the player writes every update of the message it authored", async () => {
    await queue([[1, 1, 0, 0]]);
    const started = await player.rpc("startAction", ZIRD._id, "Athletics", { opposition: 1 });
    const first = await cardIn(player, started.card_id, (m) => m.card.state, "player's card");
    assert.equal(first.author, PLAYER.id);
    await player.waitFor("sent", (s) => s.some((x) => x.event === "card.written" && x.payload.action_id === started.action_id && x.ack?.ok), { what: "player's card.written" });
    await player.rpc("clickCard", started.card_id, 'button[data-fb="pass"][data-side="actor"]');
    const done = await cardIn(player, started.card_id, (m) => /Resolved/.test(m.card.state), "resolved by the player");
    assert.equal(done.author, PLAYER.id);
    assert.deepEqual(await player.rpc("refused"), []);
  });
});

describe("every token is its own character (issue 8.5)", () => {
  const SCENE = "sceneGoblinsInt1";
  const TOKENS = ["tokGoblinA000001", "tokGoblinB000001", "tokGoblinC000001"].map((id, i) => ({ id, actorId: GOBLIN._id, actorLink: false, name: `Goblin ${"ABC"[i]}` }));
  const uuid = (t) => `Scene.${SCENE}.Token.${t.id}`;

  test("three unlinked goblins of one actor get distinct consequences and statuses", async () => {
    await gm.rpc("viewScene", [...TOKENS, ZIRD._id], SCENE);
    // The GM's client sends each goblin as its own character.
    const synced = await gm.waitFor("sent", (s) => TOKENS.every((t) => s.some((x) => x.event === "actor.sync" && x.payload.actor.id === uuid(t) && x.ack?.ok)), { what: "three goblins synced" });
    const goblins = synced.filter((x) => x.event === "actor.sync" && x.payload.actor.id.startsWith(`Scene.${SCENE}`));
    assert.deepEqual(goblins.map((x) => x.payload.actor.name), ["Goblin A", "Goblin B", "Goblin C"]);
    for (const x of goblins) check(validators.client["actor.sync"], x.payload, "token actor.sync");
    const state = await gm.rpc("call", "world.state", {});
    assert.equal(state.data.characters.filter((c) => c.id.startsWith(`Scene.${SCENE}`)).length, 3);

    // Goblin A takes a mild consequence, goblin B a moderate one (R12.5 sacrifices, the GM's NPCs);
    // goblin C excels at an overcome and gains a boost (R5.1).
    assert.equal((await gm.rpc("call", "fate.sacrifice", { character_id: uuid(TOKENS[0]), severity: 2, name: "Bloody Nose" })).ok, true);
    assert.equal((await gm.rpc("call", "fate.sacrifice", { character_id: uuid(TOKENS[1]), severity: 4, name: "Broken Arm" })).ok, true);
    await queue([[1, 1, 1, 1]]);
    const roll = await gm.rpc("startAction", uuid(TOKENS[2]), "Fight", { opposition: 0 });
    assert.ok(roll?.card_id, "the GM acts for a token character");
    assert.equal(roll.card.actor.leader.id, uuid(TOKENS[2]));
    assert.equal(roll.card.actor.leader.name, "Goblin C");
    assert.equal((await gm.rpc("call", "action.pass", { action_id: roll.action_id, side: "actor" })).ok, true);

    const a = await gm.waitFor("tokenActor", (x) => x?.statuses.includes("fate-bridge-mild"), { what: "goblin A mild", args: [uuid(TOKENS[0])] });
    const b = await gm.waitFor("tokenActor", (x) => x?.statuses.includes("fate-bridge-moderate"), { what: "goblin B moderate", args: [uuid(TOKENS[1])] });
    const c = await gm.waitFor("tokenActor", (x) => x?.statuses.includes("fate-bridge-boost"), { what: "goblin C boost", args: [uuid(TOKENS[2])] });
    const consequence = (x, key) => x.system.tracks[key].aspect.name;
    assert.deepEqual([consequence(a, "TWlsZA=="), consequence(a, "TW9kZXJhdGU=")], ["Bloody Nose", ""]);
    assert.deepEqual([consequence(b, "TWlsZA=="), consequence(b, "TW9kZXJhdGU=")], ["", "Broken Arm"]);
    assert.deepEqual([consequence(c, "TWlsZA=="), consequence(c, "TW9kZXJhdGU=")], ["", ""]);
    assert.deepEqual(a.statuses, ["fate-bridge-mild"]);
    assert.deepEqual(b.statuses, ["fate-bridge-moderate"]);
    assert.deepEqual(c.statuses, ["fate-bridge-boost"]);
    const base = await gm.rpc("actor", GOBLIN._id);
    assert.deepEqual(base.statuses, [], "the base actor carries none of it");
    assert.equal(base.system.tracks["TWlsZA=="].aspect.name, "");
    assert.equal(base.system.tracks["TW9kZXJhdGU="].aspect.name, "");
    // The card's speaker is the goblin's token.
    const card = await cardIn(gm, roll.card_id, (m) => /Resolved/.test(m.card.state), "goblin C's card");
    assert.equal(card.speaker.token, TOKENS[2].id);
    assert.equal(card.card.actor.name, "Goblin C");
    assert.deepEqual(await gm.rpc("refused"), []);
  });
});
