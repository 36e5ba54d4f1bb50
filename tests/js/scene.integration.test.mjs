// Integration: the scene panel against a real bridge (--dev-dice, queued dice). The active GM, an
// assistant GM and two players are fake Foundry clients in worker threads running the module's
// real code. The GM sets up a contest and a challenge from the panel without typing a number the
// bridge could have known; each player rolls and passes from the UI; the GM cards (contest
// exchanges, the challenge summary, the scene end) are written once, by the active GM only.
// A second world on the Fate Accelerated ruleset runs a conflict into the Combat tracker (ranked
// by Quick, R13.5; elective order and the ruleset switch: tests/js/rulesets.integration.test.mjs).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { addWorld, freePort, startBridge, tempDataDir } from "./support/bridge-process.mjs";
import { FoundryClient } from "./support/clients.mjs";
import { startFoundryServer } from "./support/foundry-server.mjs";
import { check, loadValidators } from "./support/schemas.mjs";
import { fcoTrack, ogre, zird } from "./fixtures/actors.mjs";

const GM = { id: "sceneGmUser00001", name: "Active GM", isGM: true };
const ASSISTANT = { id: "sceneAsstUser001", name: "Assistant GM", isGM: true, role: 3 };
const ANN = { id: "sceneAnnUser0001", name: "Ann", isGM: false };
const BOB = { id: "sceneBobUser0001", name: "Bob", isGM: false };
const USERS = [GM, ASSISTANT, ANN, BOB];

function vera(playerId) {
  return {
    _id: "actorVera0000001",
    name: "Vera Quickfoot",
    type: "fate-core-official",
    ownership: { default: 0, [playerId]: 3 },
    system: {
      details: { fatePoints: { current: 2, refresh: 3, boosts: 0 } },
      skills: { Athletics: { name: "Athletics", rank: 2 }, Quick: { name: "Quick", rank: 2 }, Lore: { name: "Lore", rank: 1 } },
      aspects: { "High Concept": { name: "High Concept", value: "Rooftop Runner" } },
      stunts: {},
      tracks: { "TWlsZA==": fcoTrack("Mild", { boxes: 1, harm: 2 }) }
    }
  };
}
const ZIRD = zird(ANN.id);
ZIRD.system.skills.Quick = { name: "Quick", rank: 2 };
const VERA = vera(BOB.id);
const OGRE = ogre();
OGRE.system.skills.Quick = { name: "Quick", rank: 1 };
const ACTORS = [ZIRD, VERA, OGRE];

let validators;
let bridge;
const clients = [];

/** One Foundry server per world (its clients hear each other, as a world's do): the GMs' clients elect who writes. */
const foundries = new Map();
async function foundryFor(world) {
  if (!foundries.has(world.id)) foundries.set(world.id, await startFoundryServer());
  return foundries.get(world.id);
}

function options(world, port, user, key) {
  return {
    users: USERS,
    userId: user.id,
    activeGM: GM.id,
    foundryServer: foundries.get(world.id)?.url,
    systemId: "fate-core-official",
    actors: ACTORS,
    settings: {
      "fate-bridge.bridgeUrl": `http://127.0.0.1:${port}`,
      "fate-bridge.worldId": world.id,
      // Every browser connects itself (relay mode: tests/js/relay.integration.test.mjs).
      "fate-bridge.connectionMode": "direct",
      ...(key === undefined ? {} : { "fate-bridge.gmKey": key })
    }
  };
}

async function launch(name, world, port, user, key) {
  await foundryFor(world);
  const client = await FoundryClient.launch(name, options(world, port, user, key));
  clients.push(client);
  await client.rpc("start");
  await client.waitFor("hello", (h) => h !== null, { what: `${name} hello` });
  return client;
}

/** The trust handshake, as Foundry's server would relay the players' flag updates to the GMs. */
async function bind(player, user, gms) {
  const hello = await player.rpc("hello");
  await player.waitFor("user", (u) => u.flags?.["fate-bridge"]?.bindNonce, { args: [user.id], what: "nonce" });
  for (const gm of gms) await gm.rpc("receiveUserUpdate", user.id, { flags: { "fate-bridge": { bindNonce: hello.bind_nonce } } });
  await player.waitFor("notifications", (n) => n.some((x) => /confirmed who you are/.test(x.message)), { what: `${user.name} bound` });
}

async function assertSentValid(client) {
  const sent = await client.rpc("sent");
  for (const { event, payload, ack } of sent) {
    assert.ok(validators.client[event], `${client.name} sent an undefined event ${event}`);
    check(validators.client[event], payload, `${client.name} ${event}`);
    if (ack) check(validators.ack, ack, `${event} ack`);
    if (ack?.ok) check(validators.results[event], ack.data, `${event} result`);
  }
  return sent;
}

const cardMessage = (cardId) => (ms) => ms.find((m) => m.flags["fate-bridge"]?.cardId === cardId);

/** A player's own card: wait for it, then pass for the actor's side from the card. */
async function passFromCard(client, cardId) {
  await client.waitFor("messages", (ms) => cardMessage(cardId)(ms)?.controls.includes("pass:actor"), { what: `pass on ${cardId}` });
  await client.rpc("clickCard", cardId, 'button[data-fb="pass"][data-side="actor"]');
}

/** The action card a click produced: the newest `*.roll` ack's card id in what the client sent. */
async function lastActionCard(client, event, before) {
  const sent = await client.waitFor("sent", (s) => s.filter((x) => x.event === event && x.ack).length > before, { what: event });
  const last = sent.filter((x) => x.event === event).at(-1);
  assert.equal(last.ack.ok, true, JSON.stringify(last.ack));
  return last.ack.data.card_id;
}

const sentCount = async (client, event) => (await client.rpc("sent")).filter((s) => s.event === event).length;

before(async () => {
  validators = await loadValidators();
});

after(async () => {
  for (const c of clients) await c.close();
  for (const f of foundries.values()) await f.close();
  await bridge?.stop();
});

describe("the scene panel on an Unwritten world", () => {
  let world;
  let port;
  let gm;
  let assistant;
  let ann;
  let bob;
  const queue = async (...rolls) => assert.equal((await gm.rpc("call", "dev.queue_dice", { rolls })).ok, true);

  before(async () => {
    const dataDir = await tempDataDir();
    port = await freePort();
    world = await addWorld(dataDir, "scene-world", "Scene World");
    bridge = await startBridge({ dataDir, port });
    gm = await launch("gm", world, port, GM, world.key);
    assistant = await launch("assistant", world, port, ASSISTANT, world.key);
    ann = await launch("ann", world, port, ANN);
    bob = await launch("bob", world, port, BOB);
    await bind(ann, ANN, [gm, assistant]);
    await bind(bob, BOB, [gm, assistant]);
    for (const c of [gm, ann, bob]) await c.rpc("openScene");
  });

  test("the GM adds a situation aspect and sets the budget; players see them read-only, with no GM controls", async () => {
    await gm.waitFor("panel", (p) => p?.head.includes("Scene 1"), { what: "panel with the scene" });
    await gm.rpc("panelField", '[name="aspectName"]', "Crowded Market");
    await gm.rpc("panelField", '[name="aspectHolder"]', ZIRD._id);
    await gm.rpc("clickPanel", '[data-action="addAspect"]');
    await gm.rpc("panelField", '[name="budget"]', "3");
    await gm.rpc("clickPanel", '[data-action="setBudget"]');
    const gmPanel = await gm.waitFor("panel", (p) => p.aspects.includes("Crowded Market") && p.head.includes("GM fate points 3"), { what: "aspect and budget" });
    assert.match(gmPanel.aspects, /Crowded Market Zird the Arcane ×1/);
    const gmActions = new Set(gmPanel.actions.map((a) => a.action));
    for (const a of ["addAspect", "editAspect", "removeAspect", "setBudget", "offerCompel", "startContest", "startChallenge", "endScene"]) assert.ok(gmActions.has(a), a);

    const aspectId = gmPanel.actions.find((a) => a.action === "editAspect").aspect;
    assert.deepEqual(gmPanel.actions.filter((a) => a.action === "giveInvokes"), [{ action: "giveInvokes", aspect: aspectId, from: ZIRD._id }], "the GM may hand on any character's free invokes");
    const annPanel = await ann.waitFor("panel", (x) => x?.aspects.includes("Crowded Market") && x.head.includes("GM fate points 3"), { what: "ann sees the aspect" });
    assert.deepEqual(annPanel.actions, [{ action: "giveInvokes", aspect: aspectId, from: ZIRD._id }], "Ann may only hand on Zird's free invoke");
    assert.deepEqual(annPanel.forms, []);
    const bobPanel = await bob.waitFor("panel", (x) => x?.aspects.includes("Crowded Market") && x.head.includes("GM fate points 3"), { what: "bob sees the aspect" });
    assert.deepEqual(bobPanel.actions, [], "Bob holds nothing: nothing to press on a quiet scene");
    assert.deepEqual(bobPanel.forms, []);
    const aspectAdd = (await gm.rpc("sent")).find((s) => s.event === "scene.aspect");
    assert.deepEqual({ ...aspectAdd.payload, request_id: undefined }, { request_id: undefined, op: "add", name: "Crowded Market", free_invokes: { [ZIRD._id]: 1 } });
    const budget = (await gm.rpc("sent")).filter((s) => s.event === "fate.gm_budget" || s.event === "scene.read");
    assert.deepEqual(budget.map((s) => s.event).slice(-1), ["fate.gm_budget"], "the budget's scene.state emit refreshes the panel: no re-read");
  });

  test("the GM trusts the players' passive ratings from the panel (R2.1 Decision); players never see the setting", async () => {
    const gmPanel = await gm.waitFor("panel", (p) => p.actions.some((a) => a.action === "toggleTrustRatings"), { what: "the trust setting" });
    assert.match(gmPanel.head, /Trust players' passive opposition ratings/);
    await gm.rpc("clickPanel", '[data-action="toggleTrustRatings"]');
    const sent = await gm.waitFor("sent", (s) => s.some((x) => x.event === "world.settings" && x.ack), { what: "world.settings sent" });
    const setting = sent.find((x) => x.event === "world.settings");
    assert.deepEqual({ ...setting.payload, request_id: undefined }, { request_id: undefined, trust_player_ratings: true });
    assert.equal(setting.ack.ok, true);
    assert.deepEqual(setting.ack.data.settings, { trust_player_ratings: true, full_defense: false });
    for (const c of [ann, bob]) {
      const panel = await c.waitFor("panel", (p) => p !== null, { what: `${c.name}'s panel` });
      assert.ok(!panel.actions.some((a) => a.action === "toggleTrustRatings"), `${c.name} sees no GM setting`);
      assert.doesNotMatch(panel.head, /Trust players/);
    }
    // From here on Ann's and Bob's ratings go straight to the dice, as this table chose.
    await queue([0, 0, 0, 0]); // Good +3 against Fair +2: a plain success, no boost
    const data = await ann.rpc("startAction", ZIRD._id, "Athletics", { opposition: 2 });
    assert.equal(data.card.state, "invoking");
    const passed = await ann.rpc("pass", data.action_id, "actor");
    assert.equal(passed.card.outcome, "succeed");
  });

  test("stacking advantages (R10.2): Ann hands Zird's free invoke to Vera from the panel; then Bob holds it", async () => {
    const annPanel = await ann.waitFor("panel", (p) => p.actions.some((a) => a.action === "giveInvokes"), { what: "ann's give button" });
    const aspectId = annPanel.actions.find((a) => a.action === "giveInvokes").aspect;
    await ann.rpc("clickPanel", `[data-action="giveInvokes"][data-from="${ZIRD._id}"]`);
    const dialog = await ann.rpc("answerDialog", { to: VERA._id, count: "1" }, "give");
    assert.match(dialog.title, /Give free invokes: Crowded Market/);
    assert.equal(dialog.rejectClose, false);
    assert.match(dialog.text, /Zird the Arcane holds 1 free invokes on Crowded Market/);
    const give = (await ann.waitFor("sent", (s) => s.some((x) => x.event === "aspect.give" && x.ack), { what: "aspect.give" })).find((x) => x.event === "aspect.give");
    assert.equal(give.ack.ok, true, JSON.stringify(give.ack));
    assert.deepEqual({ ...give.payload, request_id: undefined }, { request_id: undefined, aspect_id: aspectId, from_id: ZIRD._id, to_id: VERA._id, count: 1 });
    assert.deepEqual(give.ack.data.free_invokes, { [VERA._id]: 1 });
    for (const c of [gm, ann, bob]) await c.waitFor("panel", (p) => /Crowded Market Vera Quickfoot ×1/.test(p.aspects), { what: `${c.name} sees Vera's invoke` });
    const after = await ann.rpc("panel");
    assert.deepEqual(after.actions, [], "Zird holds nothing now");
    const bobPanel = await bob.rpc("panel");
    assert.deepEqual(bobPanel.actions, [{ action: "giveInvokes", aspect: aspectId, from: VERA._id }], "Vera's owner may hand it on");
  });

  test("the active GM sends the actors of the scene's tokens, NPCs too, once; a player can then pick the NPC as opposer", async () => {
    const refused = await ann.rpc("startAction", ZIRD._id, "Athletics", { opposerId: OGRE._id });
    assert.equal(refused, null, "the bridge does not know the Ogre yet");
    const failed = (await ann.rpc("sent")).filter((s) => s.event === "action.start").at(-1);
    assert.equal(failed.ack.ok, false);
    const syncs = async (c) => (await c.rpc("sent")).filter((s) => s.event === "actor.sync").map((s) => s.payload.actor.id);
    const gmBefore = await syncs(gm);
    for (const c of [gm, assistant, ann, bob]) await c.rpc("viewScene", [ZIRD._id, OGRE._id]);
    const gmSyncs = await gm.waitFor("sent", (s) => s.filter((x) => x.event === "actor.sync" && x.ack).length > gmBefore.length, { what: "token actors synced" });
    const fresh = gmSyncs.filter((x) => x.event === "actor.sync").slice(gmBefore.length);
    assert.deepEqual(fresh.map((x) => x.payload.actor.id), [OGRE._id], "Zird was sent at connect and is unchanged: only the Ogre goes");
    assert.ok(fresh.every((x) => x.ack.ok));
    for (const c of [assistant, ann, bob]) assert.deepEqual(await syncs(c), [], `${c.name} sends no actor data`);
    // Viewing the scene again, or another token of a known actor, sends nothing again.
    await gm.rpc("viewScene", [ZIRD._id, OGRE._id]);
    await gm.rpc("createToken", OGRE._id);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal((await syncs(gm)).length, gmBefore.length + 1, "no echo: an unchanged actor is not sent twice");

    const started = await ann.rpc("startAction", ZIRD._id, "Athletics", { opposerId: OGRE._id });
    assert.ok(started?.action_id, "now the player can name the NPC");
    // Consent to harm (DESIGN Reach and trust): the GM says yes to the Ogre opposing.
    const yes = await gm.rpc("call", "action.help", { action_id: started.action_id, character_id: OGRE._id, accept: true });
    assert.equal(yes.ok, true, JSON.stringify(yes));
    // The GM opposes, so the action does not stay in the way.
    await queue([0, 0, 0, 0], [0, 0, 0, 0]);
    const oppose = await gm.rpc("call", "action.oppose", { action_id: started.action_id, skill: "Fight" });
    assert.equal(oppose.ok, true, JSON.stringify(oppose));
  });

  test("after a fumbled advantage the GM, and only the GM, gives a free invoke from the card (R5.2, R5.3)", async () => {
    const state = await gm.rpc("call", "scene.read", {});
    const market = state.data.aspects.find((a) => a.name === "Crowded Market");
    // Athletics 3 − 2 = Average against Fair: a fumble.
    await queue([-1, -1, 0, 0]);
    const started = await ann.rpc("startAction", ZIRD._id, "Athletics", { type: "create_advantage", opposition: 2, aspectName: "Distracted Guard" });
    const cardId = `${world.id}.${started.action_id}`;
    await passFromCard(ann, cardId);
    const annView = await ann.waitFor("messages", (ms) => cardMessage(cardId)(ms)?.controls.some((c) => c.startsWith("choose")), { what: "ann's fumble choice" });
    assert.ok(!cardMessage(cardId)(annView).controls.includes("gift"), "the player sees no gift");
    // Foundry relays Ann's message to the GMs.
    const data = await ann.rpc("messageData", cardId);
    for (const g of [gm, assistant]) await g.rpc("receiveMessage", data);
    const gmView = await gm.waitFor("messages", (ms) => cardMessage(cardId)(ms)?.controls.includes("gift"), { what: "gm's gift button" });
    assert.ok(cardMessage(cardId)(gmView).controls.includes("gift"));
    await gm.rpc("clickCard", cardId, 'button[data-fb="gift"]');
    const dialog = await gm.rpc("answerDialog", { aspect: market.id, holder: VERA._id }, "gift");
    assert.match(dialog.title, /free invoke/);
    assert.equal(dialog.rejectClose, false);
    assert.doesNotMatch(dialog.html, new RegExp(`value="${ZIRD._id}"`), "never the acting side");
    const gift = (await gm.waitFor("sent", (s) => s.some((x) => x.event === "action.gift" && x.ack), { what: "action.gift" })).find((x) => x.event === "action.gift");
    assert.equal(gift.ack.ok, true, JSON.stringify(gift.ack));
    assert.deepEqual({ ...gift.payload, request_id: undefined }, { request_id: undefined, action_id: started.action_id, aspect_id: market.id, holder: VERA._id });
    const annAfter = await ann.waitFor("messages", (ms) => cardMessage(cardId)(ms)?.card.effects.some((e) => /The GM gives Vera Quickfoot a free invoke on Crowded Market/.test(e)), { what: "gift on ann's card" });
    assert.ok(cardMessage(cardId)(annAfter));
    await gm.rpc("receiveMessage", await ann.rpc("messageData", cardId));
    const gmAfter = await gm.waitFor("messages", (ms) => /The GM gives/.test(cardMessage(cardId)(ms)?.card.effects.join(" ") ?? ""), { what: "gift on gm's copy" });
    assert.ok(!cardMessage(cardId)(gmAfter).controls.includes("gift"), "one gift per action");
    await gm.waitFor("panel", (p) => /Crowded Market Vera Quickfoot ×2/.test(p.aspects), { what: "Vera holds two now" });
    await ann.rpc("clickCard", cardId, 'button[data-fb="choose"][data-choice="fail"]');
  });

  test("a contest from the tracker: each side rolls and passes from the UI, a tie asks the GM for a twist, progress reaches 3, the exchange cards are written once by the active GM", async () => {
    // Set-up: name, mode, skill, and who is on which side. No number at all in a direct contest.
    await gm.rpc("panelField", '[name="contestName"]', "Chase across the rooftops");
    await gm.rpc("panelField", '[name="contestMode"]', "direct");
    await gm.rpc("panelField", '[name="contestSkill"]', "Athletics");
    await gm.rpc("panelField", '[name="contestSide1"]', "Zird");
    await gm.rpc("panelField", '[name="contestSide2"]', "Vera");
    await gm.rpc("panelField", `[name="contestMember-${ZIRD._id}"]`, "1");
    await gm.rpc("panelField", `[name="contestMember-${VERA._id}"]`, "2");
    await gm.rpc("clickPanel", '[data-action="startContest"]');
    const start = (await gm.waitFor("sent", (s) => s.some((x) => x.event === "contest.start" && x.ack), { what: "contest.start" })).find((x) => x.event === "contest.start");
    assert.equal(start.ack.ok, true, JSON.stringify(start.ack));
    assert.deepEqual({ ...start.payload, request_id: undefined }, {
      request_id: undefined, name: "Chase across the rooftops", mode: "direct", skill: "Athletics",
      sides: [{ name: "Zird", members: [ZIRD._id] }, { name: "Vera", members: [VERA._id] }]
    });
    const contestId = start.ack.data.contests[0].id;

    // Each player sees a Roll button for its own side only; the GM for both.
    const annPanel = await ann.waitFor("panel", (p) => p.contests.includes("Chase across the rooftops"), { what: "ann sees the contest" });
    assert.deepEqual(annPanel.actions.filter((a) => a.action === "contestRoll").map((a) => a.side), ["s1"]);
    assert.ok(!annPanel.actions.some((a) => a.action === "startContest" || a.action === "nameTwist"));
    const bobPanel = await bob.waitFor("panel", (p) => p.contests.includes("Chase across the rooftops"), { what: "bob sees the contest" });
    assert.deepEqual(bobPanel.actions.filter((a) => a.action === "contestRoll").map((a) => a.side), ["s2"]);
    const gmPanel = await gm.waitFor("panel", (p) => p.actions.filter((a) => a.action === "contestRoll").length === 2, { what: "gm sees both rolls" });
    assert.match(gmPanel.contests, /Exchange 1/);

    const exchange = async (zirdDice, veraDice) => {
      await queue(zirdDice);
      const annBefore = await sentCount(ann, "contest.roll");
      await ann.waitFor("panel", (p) => p.actions.some((a) => a.action === "contestRoll" && a.side === "s1"), { what: "ann's roll button" });
      await ann.rpc("clickPanel", '[data-action="contestRoll"][data-side="s1"]');
      const annCard = await lastActionCard(ann, "contest.roll", annBefore);
      await passFromCard(ann, annCard);
      await ann.waitFor("messages", (ms) => /Resolved/.test(cardMessage(annCard)(ms)?.card.state ?? ""), { what: "ann's roll resolved" });
      await queue(veraDice);
      const before = await sentCount(bob, "contest.roll");
      await bob.waitFor("panel", (p) => p.actions.some((a) => a.action === "contestRoll" && a.side === "s2"), { what: "bob's roll button" });
      await bob.rpc("clickPanel", '[data-action="contestRoll"][data-side="s2"]');
      const bobCard = await lastActionCard(bob, "contest.roll", before);
      await passFromCard(bob, bobCard);
      return { annCard, bobCard };
    };

    // Exchange 1: Athletics 3 + 0 against 2 + 1: a tie at the top, a twist.
    const first = await exchange([0, 0, 0, 0], [1, 0, 0, 0]);
    const annMsgs = await ann.rpc("messages");
    assert.equal(cardMessage(first.annCard)(annMsgs).author, ANN.id, "the rolling player writes its own contest roll card");
    let cards = await gm.waitFor("gmCards", (cs) => cs.length === 1, { what: "exchange 1 card" });
    assert.equal(cards[0].kind, "contest");
    assert.equal(cards[0].author, GM.id);
    assert.match(cards[0].text, /Exchange 1/);
    assert.match(cards[0].text, /Zird Zird the Arcane Good \+3/);
    assert.match(cards[0].text, /Vera Vera Quickfoot Good \+3/);
    assert.match(cards[0].text, /a twist happens/);
    const twistPanel = await gm.waitFor("panel", (p) => p.actions.some((a) => a.action === "nameTwist"), { what: "twist prompt" });
    assert.match(twistPanel.contests, /the GM names the twist/);
    const annTwist = await ann.waitFor("panel", (p) => /the GM names the twist/.test(p.contests), { what: "ann sees the twist pending" });
    assert.ok(!annTwist.actions.some((a) => a.action === "nameTwist"), "only the GM names the twist");
    await gm.rpc("panelField", '[name="twistName"]', "Loose Tiles");
    await gm.rpc("clickPanel", '[data-action="nameTwist"]');
    await gm.waitFor("panel", (p) => p.aspects.includes("Loose Tiles") && !p.actions.some((a) => a.action === "nameTwist"), { what: "twist placed" });
    await ann.waitFor("panel", (p) => p.aspects.includes("Loose Tiles"), { what: "players see the twist aspect" });
    // The bridge updates the exchange's card: the same message now names the twist.
    cards = await gm.waitFor("gmCards", (cs) => cs.length === 1 && /The twist: Loose Tiles/.test(cs[0].text), { what: "twist named on the exchange card" });
    assert.equal(cards[0].cardId, `${world.id}.${contestId}.x1`);
    assert.equal(cards[0].author, GM.id);
    for (const c of [assistant, ann, bob]) assert.deepEqual(await c.rpc("gmCards"), [], `${c.name} writes no twist update`);

    // Exchange 2: 3 + 1 = Great against 2 + 0 = Fair: Zird by 2, one progress.
    await exchange([1, 0, 0, 0], [0, 0, 0, 0]);
    cards = await gm.waitFor("gmCards", (cs) => cs.length === 2, { what: "exchange 2 card" });
    assert.match(cards[1].text, /Zird wins the exchange by 2 and marks 1 progress/);
    assert.match(cards[1].text, /Zird 1\/3/);

    // Exchange 3: 3 + 4 = Epic against Fair: by 5, excels alone, two progress: 3 of 3, Zird wins.
    await exchange([1, 1, 1, 1], [0, 0, 0, 0]);
    cards = await gm.waitFor("gmCards", (cs) => cs.length === 3, { what: "winning card" });
    assert.match(cards[2].text, /Zird wins the exchange by 5 and marks 2 progress/);
    assert.match(cards[2].text, /Zird 3\/3/);
    assert.match(cards[2].text, /Zird wins the contest!/);
    const done = await ann.waitFor("panel", (p) => /Zird wins the contest!/.test(p.contests), { what: "winner in ann's panel" });
    assert.ok(!done.actions.some((a) => a.action === "contestRoll"), "no rolls after the contest is won");

    // Written once, by the active GM only; a full replay writes nothing again.
    const ids = cards.map((c) => c.cardId);
    assert.deepEqual(ids, [`${world.id}.${contestId}.x1`, `${world.id}.${contestId}.x2`, `${world.id}.${contestId}.x3`]);
    for (const c of [assistant, ann, bob]) assert.deepEqual(await c.rpc("gmCards"), [], `${c.name} writes no GM card`);
    for (const c of [gm, assistant, ann, bob]) assert.equal((await c.rpc("catchUp", 0)).ok, true);
    assert.equal((await gm.rpc("gmCards")).length, 3, "a replay writes no card twice");
    for (const c of [assistant, ann, bob]) assert.deepEqual(await c.rpc("gmCards"), []);
  });

  test("a challenge from the board: tasks with skill and opposition from the ladder, each player rolls a task, the summary card follows", async () => {
    await gm.rpc("panelField", '[name="challengeName"]', "Ready the airship");
    const rows = [["Patch the envelope", "Lore", "2"], ["Climb the rigging", "Athletics", "3"]];
    for (const [i, [name, skill, rating]] of rows.entries()) {
      await gm.rpc("panelField", `[data-task-row]:nth-child(${i + 1}) [name="taskName"]`, name);
      await gm.rpc("panelField", `[data-task-row]:nth-child(${i + 1}) [name="taskSkill"]`, skill);
      await gm.rpc("panelField", `[data-task-row]:nth-child(${i + 1}) [name="taskRating"]`, rating);
    }
    await gm.rpc("clickPanel", '[data-action="startChallenge"]');
    const start = (await gm.waitFor("sent", (s) => s.some((x) => x.event === "challenge.start" && x.ack), { what: "challenge.start" })).find((x) => x.event === "challenge.start");
    assert.equal(start.ack.ok, true, JSON.stringify(start.ack));
    assert.deepEqual(start.payload.tasks, [{ name: "Patch the envelope", skill: "Lore", rating: 2 }, { name: "Climb the rigging", skill: "Athletics", rating: 3 }], "the third, empty row is left out");
    const challengeId = start.ack.data.challenges[0].id;

    const annPanel = await ann.waitFor("panel", (p) => p.challenges.includes("Ready the airship"), { what: "ann sees the board" });
    assert.match(annPanel.challenges, /Patch the envelope open Lore vs Fair \+2/);
    assert.match(annPanel.challenges, /Climb the rigging open Athletics vs Good \+3/);
    assert.ok(!annPanel.actions.some((a) => a.action === "toggleCarry"), "carrying boosts is the GM's call");

    // Zird patches the envelope: Lore 4 + 2 = Fantastic against Fair: excels, a boost.
    await queue([1, 1, 0, 0]);
    await ann.rpc("clickPanel", '[data-action="challengeRoll"][data-task="t1"]');
    const annCard = await lastActionCard(ann, "challenge.roll", 0);
    await passFromCard(ann, annCard);
    const boardMid = await bob.waitFor("panel", (p) => /Zird the Arcane: Fantastic \+6/.test(p.challenges), { what: "task 1 on bob's board" });
    assert.match(boardMid.challenges, /1 of 2 tasks rolled/);
    assert.deepEqual(await gm.rpc("gmCards").then((cs) => cs.filter((c) => c.kind === "challenge")), [], "no summary before every task is in");

    // Vera climbs: Athletics 2 − 1 = Average against Good: a fumble; Bob takes the failure.
    await queue([-1, 0, 0, 0]);
    await bob.rpc("clickPanel", '[data-action="challengeRoll"][data-task="t2"]');
    const bobCard = await lastActionCard(bob, "challenge.roll", 0);
    await passFromCard(bob, bobCard);
    await bob.waitFor("messages", (ms) => cardMessage(bobCard)(ms)?.controls.includes("choose:fail"), { what: "bob's choice" });
    await bob.rpc("clickCard", bobCard, 'button[data-fb="choose"][data-choice="fail"]');

    const cards = await gm.waitFor("gmCards", (cs) => cs.some((c) => c.kind === "challenge"), { what: "challenge summary" });
    const summary = cards.find((c) => c.kind === "challenge");
    assert.equal(summary.cardId, `${world.id}.${challengeId}`);
    assert.equal(summary.author, GM.id);
    assert.match(summary.text, /Ready the airship/);
    assert.match(summary.text, /1 of 2 tasks succeeded/);
    assert.match(summary.text, /Patch the envelope Success Lore vs Fair \+2 Zird the Arcane: Fantastic \+6 · Excel \+4/);
    assert.match(summary.text, /Climb the rigging Failure Athletics vs Good \+3 Vera Quickfoot: Average \+1 · Fumble −2/);
    for (const c of [assistant, ann, bob]) assert.deepEqual(await c.rpc("gmCards"), []);

    // The GM keeps the unused boost for the next scene.
    await gm.rpc("clickPanel", `[data-action="toggleCarry"][data-challenge="${challengeId}"]`);
    const carry = (await gm.waitFor("sent", (s) => s.some((x) => x.event === "challenge.carry" && x.ack), { what: "carry" })).find((x) => x.event === "challenge.carry");
    assert.equal(carry.ack.ok, true, JSON.stringify(carry.ack));
    assert.equal(carry.payload.carry, true);
    assert.equal(carry.ack.data.challenges[0].carry_boosts, true);
  });

  test("a compel offered from the panel is answered by the character's player only", async () => {
    await gm.rpc("panelField", '[name="compelCharacter"]', VERA._id);
    await gm.rpc("panelField", '[name="compelText"]', "The guild calls in your debt");
    await gm.rpc("clickPanel", '[data-action="offerCompel"]');
    const bobPanel = await bob.waitFor("panel", (p) => p.compels.includes("The guild calls in your debt") && p.actions.some((a) => a.action === "answerCompel"), { what: "bob's compel" });
    assert.deepEqual(bobPanel.actions.filter((a) => a.action === "answerCompel").map((a) => a.accept), ["true", "false"]);
    const annPanel = await ann.waitFor("panel", (p) => p.compels.includes("The guild calls in your debt"), { what: "ann sees it" });
    assert.ok(!annPanel.actions.some((a) => a.action === "answerCompel"), "not Ann's character");
    await bob.rpc("clickPanel", '[data-action="answerCompel"][data-accept="true"]');
    await gm.waitFor("panel", (p) => /No compel waiting/.test(p.compels), { what: "compel answered" });
  });

  test("ending the scene from the panel asks which aspects stay; the scene-end card says what changed", async () => {
    // One contest conceded (Vera earns a fate point at the scene's end), one left unfinished.
    const sides = [{ name: "Zird", members: [ZIRD._id] }, { name: "Vera", members: [VERA._id] }];
    const tug = await gm.rpc("api", "contest.start", { name: "Tug of war", mode: "direct", skill: "Athletics", sides });
    const tugId = tug.contests.find((c) => c.name === "Tug of war").id;
    await bob.waitFor("panel", (p) => p.actions.some((a) => a.action === "contestConcede" && a.contest === tugId), { what: "bob may concede" });
    await bob.rpc("clickPanel", `[data-action="contestConcede"][data-contest="${tugId}"]`);
    await gm.waitFor("panel", (p) => !p.actions.some((a) => a.action === "contestConcede" && a.contest === tugId), { what: "conceded" });
    await gm.rpc("api", "contest.start", { name: "Race to the gate", mode: "direct", skill: "Athletics", sides });
    const state = await gm.rpc("call", "scene.read", {});
    const twist = state.data.aspects.find((a) => a.name === "Loose Tiles");
    await gm.rpc("clickPanel", '[data-action="endScene"][data-scope="scene"]');
    const dialog = await gm.rpc("answerDialog", {}, "ok", { check: [] , radio: {} }).catch((e) => { throw e; });
    assert.match(dialog.title, /End scene/);
    assert.match(dialog.text, /Crowded Market/);
    assert.match(dialog.text, /Loose Tiles/);
    assert.equal(dialog.rejectClose, false);
    const end = (await gm.waitFor("sent", (s) => s.some((x) => x.event === "scene.end" && x.ack), { what: "scene.end" })).find((x) => x.event === "scene.end");
    assert.equal(end.ack.ok, true, JSON.stringify(end.ack));
    assert.deepEqual(end.payload.keep_aspects, []);
    assert.equal(end.payload.scope, "scene");
    assert.ok(twist);
    const card = (await gm.waitFor("gmCards", (cs) => cs.some((c) => c.kind === "scene_end"), { what: "scene end card" })).find((c) => c.kind === "scene_end");
    assert.equal(card.author, GM.id);
    assert.match(card.text, /Scene 1 ends/);
    assert.match(card.text, /Situation aspects cleared Crowded Market Loose Tiles/);
    assert.doesNotMatch(card.text, /momentum/, "the challenge's boost was carried into the next scene (R11.1)");
    assert.match(card.text, /Fate points gained Vera Quickfoot \+1 conceded the contest/);
    assert.match(card.text, /Closed with the scene, unfinished Race to the gate no result/);
    assert.doesNotMatch(card.text, /unfinished[^]*Tug of war/, "the conceded contest had its result");
    const after = await gm.waitFor("panel", (p) => p.head.includes("Scene 2"), { what: "scene 2" });
    assert.doesNotMatch(after.contests, /Race to the gate|Tug of war|Chase/, "the scene's end closed its contests");
    for (const c of [assistant, ann, bob]) assert.deepEqual(await c.rpc("gmCards"), []);
    await ann.waitFor("panel", (p) => p.head.includes("Scene 2"), { what: "next scene in ann's panel" });
  });

  test("everything every client sent matches the bridge's schemas", async () => {
    for (const c of [gm, assistant, ann, bob]) await assertSentValid(c);
  });
});

describe("a conflict on a Fate Accelerated world", () => {
  let condensed;
  let gm;
  let assistant;

  before(async () => {
    const dataDir = await tempDataDir();
    const port = await freePort();
    const world = await addWorld(dataDir, "accelerated-world", "Accelerated World", "fate-accelerated");
    condensed = await startBridge({ dataDir, port });
    gm = await launch("condensed-gm", world, port, GM, world.key);
    assistant = await launch("condensed-assistant", world, port, ASSISTANT, world.key);
    await gm.rpc("openScene");
  });

  after(async () => {
    await condensed?.stop();
  });

  test("the bridge's turn order goes into the Combat tracker, written by the active GM only; ties reorder, Next turn moves the tracker", async () => {
    await gm.rpc("panelField", '[name="conflictName"]', "Brawl on the roof");
    await gm.rpc("panelField", '[name="conflictKind"]', "physical");
    await gm.rpc("panelField", '[name="conflictZones"]', "Roof: Street\nStreet: Roof");
    await gm.rpc("panelField", '[name="conflictSide1"]', "Heroes");
    await gm.rpc("panelField", '[name="conflictSide2"]', "Thugs");
    await gm.rpc("panelField", `[name="conflictMember-${ZIRD._id}"]`, "1");
    await gm.rpc("panelField", `[name="conflictMember-${VERA._id}"]`, "2");
    await gm.rpc("panelField", `[name="conflictMember-${OGRE._id}"]`, "2");
    await gm.rpc("clickPanel", '[data-action="startConflict"]');
    const start = (await gm.waitFor("sent", (s) => s.some((x) => x.event === "conflict.start" && x.ack), { what: "conflict.start" })).find((x) => x.event === "conflict.start");
    assert.equal(start.ack.ok, true, JSON.stringify(start.ack));
    assert.deepEqual(start.payload.zones, [{ name: "Roof", adjacent: ["Street"] }, { name: "Street", adjacent: ["Roof"] }]);
    const conflict = start.ack.data.conflicts[0];
    const order = conflict.order.map((t) => t.character.id);
    assert.equal(order.at(-1), OGRE._id, "Quick 1 acts last");
    assert.deepEqual([...conflict.ties[0]].sort(), [ZIRD._id, VERA._id].sort(), "Quick 2 and Quick 2 tie");

    let [combat] = await gm.waitFor("combats", (cs) => cs.length === 1 && cs[0].turns.length === 3, { what: "combat written" });
    assert.deepEqual(combat.turns.map((t) => t.actorId), order, "Foundry's initiative sort gives the bridge's order");
    assert.deepEqual(combat.turns.map((t) => t.initiative), [3, 2, 1]);
    assert.equal(combat.flags["fate-bridge"].conflictId, conflict.id);
    assert.equal(combat.current, order[0]);
    assert.deepEqual(await assistant.rpc("combats"), [], "the assistant GM writes no Combat");
    assert.deepEqual((await assistant.rpc("log")).combatWrites, []);

    // The GM breaks the tie from the panel: the second in the tie group moves up.
    const panel = await gm.waitFor("panel", (p) => p.actions.some((a) => a.action === "conflictOrder"), { what: "tie controls" });
    assert.match(panel.conflicts, /tie 1/);
    await gm.rpc("clickPanel", `[data-action="conflictOrder"][data-character="${order[1]}"][data-dir="-1"]`);
    [combat] = await gm.waitFor("combats", (cs) => cs[0].turns[0].actorId === order[1], { what: "reordered" });
    assert.deepEqual(combat.turns.map((t) => t.actorId), [order[1], order[0], order[2]]);

    await gm.rpc("clickPanel", '[data-action="conflictNext"]');
    [combat] = await gm.waitFor("combats", (cs) => cs[0].turn === 1, { what: "next turn" });
    assert.equal(combat.current, order[0]);

    await gm.rpc("clickPanel", '[data-action="conflictEnd"]');
    await gm.waitFor("combats", (cs) => cs.length === 0, { what: "combat removed at the end" });
    assert.deepEqual((await assistant.rpc("log")).combatWrites, []);
    await assertSentValid(gm);
    await assertSentValid(assistant);
  });

  test("the GM redraws the zones from the macro API (R11.3): conflict.zones with the new map and positions, the panel shows it", async () => {
    const started = await gm.rpc("api", "conflict.start", {
      name: "Spill into the street", kind: "physical",
      sides: [{ name: "Heroes", members: [ZIRD._id] }, { name: "Thugs", members: [OGRE._id] }],
      zones: [{ name: "Roof", adjacent: ["Stairs"] }, { name: "Stairs", adjacent: ["Roof"] }],
      positions: { [ZIRD._id]: "Roof", [OGRE._id]: "Stairs" }
    });
    const conflictId = started.conflicts.find((c) => c.state === "open").id;
    const zones = [{ name: "Roof", adjacent: ["Street"] }, { name: "Street", adjacent: ["Roof"] }];

    const redrawn = await gm.rpc("api", "conflict.zones", conflictId, zones, { [OGRE._id]: "Street" });
    const sent = (await gm.rpc("sent")).filter((x) => x.event === "conflict.zones").at(-1);
    assert.deepEqual({ ...sent.payload, request_id: undefined }, { request_id: undefined, conflict_id: conflictId, zones, positions: { [OGRE._id]: "Street" } });
    assert.equal(sent.ack.ok, true, JSON.stringify(sent.ack));
    const map = redrawn.conflicts.find((c) => c.id === conflictId).zones;
    assert.deepEqual(map.map((z) => [z.name, z.adjacent, z.occupants.map((o) => o.id)]), [["Roof", ["Street"], [ZIRD._id]], ["Street", ["Roof"], [OGRE._id]]]);
    await gm.waitFor("panel", (p) => /Street/.test(p.conflicts) && !/Stairs/.test(p.conflicts), { what: "the panel shows the new map" });

    // The Stairs are gone and the Ogre stood there: without a new zone, the bridge refuses.
    await gm.rpc("api", "conflict.zones", conflictId, [{ name: "Roof", adjacent: [] }]);
    const refused = (await gm.rpc("sent")).filter((x) => x.event === "conflict.zones").at(-1);
    assert.equal(refused.ack.ok, false);
    assert.deepEqual([refused.ack.error.code, refused.ack.error.field], ["invalid", "positions"]);

    await gm.rpc("api", "conflict.end", conflictId);
    await assertSentValid(gm);
  });
});

describe("the bridge restarts", () => {
  let dataDir;
  let port;
  let world;
  let first;
  let gm;
  let ann;
  const restarted = [];

  before(async () => {
    dataDir = await tempDataDir();
    port = await freePort();
    world = await addWorld(dataDir, "restart-world", "Restart World");
    first = await startBridge({ dataDir, port });
    gm = await launch("restart-gm", world, port, GM, world.key);
    ann = await launch("restart-ann", world, port, ANN);
    await bind(ann, ANN, [gm]);
    // R2.1 Decision: this table trusts its players' ratings (the panel's setting).
    assert.equal((await gm.rpc("call", "world.settings", { trust_player_ratings: true })).ok, true);
  });

  after(async () => {
    await first?.stop();
    for (const b of restarted) await b.stop();
  });

  test("clients reconnect with backoff and catch up with world.sync from their last seq, writing nothing twice", async () => {
    const { io } = await import("socket.io-client");
    const { PROTOCOL_VERSION } = await import("../../foundry-module/scripts/protocol.mjs");
    // Before: Ann rolls; her card is hers to write.
    assert.equal((await gm.rpc("call", "dev.queue_dice", { rolls: [[1, 0, 0, 0]] })).ok, true);
    const started = await ann.rpc("startAction", ZIRD._id, "Athletics", { opposition: 1 });
    const annCard = `${world.id}.${started.action_id}`;
    await passFromCard(ann, annCard);
    await ann.waitFor("messages", (ms) => /Resolved/.test(cardMessage(annCard)(ms)?.card.state ?? ""), { what: "ann's card resolved" });
    const counts = async (c) => ({ messages: (await c.rpc("messages")).length, created: await c.rpc("created"), log: await c.rpc("log") });
    const gmBefore = await counts(gm);
    const annBefore = await counts(ann);
    assert.equal((await gm.rpc("sent")).filter((s) => s.event === "world.sync").length, 1, "one world.sync at the first connect");

    const nonceBefore = (await ann.rpc("hello")).bind_nonce;
    await first.stop();
    first = null;
    for (const c of [gm, ann]) await c.waitFor("status", (s) => s.state !== "connected", { what: `${c.name} offline` });

    // While they are away, the GM acts from another browser (the same user, another connection)
    // on a bridge on another port with the same data: a card and a scene change they missed.
    const otherPort = await freePort();
    const away = await startBridge({ dataDir, port: otherPort });
    const raw = io(`${away.url}/fate`, { transports: ["websocket"], reconnection: false, auth: { world: world.id, role: "gm", key: world.key, user: GM.id, protocol: PROTOCOL_VERSION } });
    await new Promise((resolve, reject) => { raw.once("connect", resolve); raw.once("connect_error", reject); });
    const call = (event, payload) => raw.timeout(10000).emitWithAck(event, { request_id: `restart-${event}-${Date.now()}`, ...payload });
    const hello = await call("hello", {});
    assert.equal(hello.ok, true, JSON.stringify(hello));
    const sinceBefore = hello.data.last_seq;
    assert.equal((await call("dev.queue_dice", { rolls: [[0, 0, 0, 1]] })).ok, true);
    const missed = await call("action.start", { type: "overcome", actor_id: ZIRD._id, skill: "Lore", opposition: { kind: "passive", rating: 2 } });
    assert.equal(missed.ok, true, JSON.stringify(missed));
    assert.equal((await call("scene.aspect", { op: "add", name: "Fog Rolls In" })).ok, true);
    raw.disconnect();
    await away.stop();

    // The bridge comes back where they expect it; they reconnect on their own.
    const back = await startBridge({ dataDir, port });
    restarted.push(back);
    for (const c of [gm, ann]) await c.waitFor("status", (s) => s.state === "connected", { ms: 60000, what: `${c.name} reconnected` });
    for (const c of [gm, ann]) {
      const sockets = await c.rpc("sockets");
      assert.equal(sockets.created, 1, `${c.name} reuses its socket`);
      assert.ok(sockets.connects >= 2, `${c.name} connected again (${sockets.connects} attempts)`);
    }
    // A reconnected player is a new connection: it hears the world again only once Foundry has
    // relayed its new nonce to the GM's client and the GM's client has vouched for it.
    let annHello = await ann.rpc("hello");
    for (let i = 0; i < 200 && annHello?.bind_nonce === nonceBefore; i++) {
      await new Promise((r) => setTimeout(r, 50));
      annHello = await ann.rpc("hello");
    }
    assert.notEqual(annHello.bind_nonce, nonceBefore, "a fresh nonce for the new connection");
    assert.equal((await ann.rpc("sent")).filter((x) => x.event === "world.sync").length, 1, "no catch-up before she is vouched for");
    await bind(ann, ANN, [gm]);
    const syncs = (await gm.waitFor("sent", (s) => s.filter((x) => x.event === "world.sync" && x.ack).length === 2, { what: "gm's catch-up" })).filter((x) => x.event === "world.sync");
    assert.equal(syncs[1].payload.since, sinceBefore, "from the last seq it had");
    assert.ok(syncs[1].ack.data.emits.length > 0, "what it missed came with the catch-up");
    const missedCard = `${world.id}.${missed.data.action_id}`;
    await gm.waitFor("messages", (ms) => cardMessage(missedCard)(ms), { what: "the missed card written by the GM" });
    const gmAfter = await counts(gm);
    assert.equal(gmAfter.created, gmBefore.created + 1, "the GM writes the missed card once, and nothing it had again");
    const annSyncs = (await ann.waitFor("sent", (s) => s.filter((x) => x.event === "world.sync" && x.ack).length === 2, { what: "ann's catch-up" })).filter((x) => x.event === "world.sync");
    assert.equal(annSyncs[1].payload.since, sinceBefore);
    const annAfter = await counts(ann);
    assert.equal(annAfter.created, annBefore.created, "Ann writes no card she had, nor the GM's");
    assert.equal(annAfter.messages, annBefore.messages);
    // The scene she missed reaches her view too.
    await ann.rpc("openScene");
    await ann.waitFor("panel", (p) => p?.aspects.includes("Fog Rolls In"), { what: "ann sees the missed aspect" });
    // A full replay changes nothing more.
    for (const c of [gm, ann]) assert.equal((await c.rpc("catchUp", 0)).ok, true);
    assert.deepEqual(await counts(gm), gmAfter);
    assert.equal((await counts(ann)).created, annBefore.created);
    for (const c of [gm, ann]) {
      const sent = await c.rpc("sent");
      for (const { event, payload } of sent) check(validators.client[event], payload, `${c.name} ${event}`);
    }
  });
});
