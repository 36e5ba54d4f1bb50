// Headless Chromium: the fake Foundry page loads the module's real scripts, connects to a real
// bridge, and a user clicks the roll control, answers the dialog and sees the card in chat.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { promisify } from "node:util";
import path from "node:path";
import { after, before, test } from "node:test";
import { tempDataDir } from "./support/bridge-process.mjs";
import { ARTIFACTS, VENDOR_URL, launchChromium, openConnectedPage, serveRepo, startStage, writeCardOnPage } from "./support/browser-page.mjs";
import { REPO } from "./support/node-foundry.mjs";

let stage;
let bridge;
let browser;
let pageUrl;
let scenePageUrl;
let confirmPageUrl;
let confirmWorld;
let fcoPageUrl;
let fco14PageUrl;
let historyPageUrl;
let cancelPageUrl;
let stressPageUrl;
let corePageUrl;
let coreFcoPageUrl;
let condensedPageUrl;
let relayPage;

before(async () => {
  stage = await startStage([
    ["browser-world", "Browser World"],
    ["browser-scene", "Browser Scene"],
    ["browser-confirm", "Browser Confirm"],
    ["browser-fco", "Browser FCO"],
    ["browser-fco14", "Browser FCO on Foundry 14"],
    ["browser-history", "Browser History"],
    ["browser-cancel", "Browser Cancel"],
    ["browser-stress", "Browser Stress", "fate-condensed"],
    ["browser-relay", "Browser Relay"],
    ["browser-core", "Browser Core", "fate-core"],
    ["browser-core-fco", "Browser Core FCO", "fate-core"],
    ["browser-condensed", "Browser Condensed", "fate-condensed"]
  ], { foundry: true });
  ({ bridge, browser } = stage);
  const [world, sceneWorld, confirm, fcoWorld, fco14World, historyWorld, cancelWorld, stressWorld, relayWorld, coreWorld, coreFcoWorld, condensedWorld] = stage.worlds;
  confirmWorld = confirm;
  pageUrl = stage.pageUrl(world);
  scenePageUrl = stage.pageUrl(sceneWorld);
  confirmPageUrl = stage.pageUrl(confirmWorld);
  fcoPageUrl = stage.pageUrl(fcoWorld);
  fco14PageUrl = stage.pageUrl(fco14World, { generation: "14" });
  historyPageUrl = stage.pageUrl(historyWorld);
  cancelPageUrl = stage.pageUrl(cancelWorld);
  stressPageUrl = stage.pageUrl(stressWorld, { actors: "fco" });
  corePageUrl = stage.pageUrl(coreWorld);
  coreFcoPageUrl = stage.pageUrl(coreFcoWorld, { actors: "fco" });
  condensedPageUrl = stage.pageUrl(condensedWorld, { actors: "fco" });
  relayPage = (user, key) => `${stage.base}?${new URLSearchParams({ bridge: bridge.url, world: relayWorld.id, foundry: stage.foundryServer.url, user, ...(key ? { key } : {}) })}`;
  relayPage.gmKey = relayWorld.key;
});

after(() => stage?.stop());

test("a GM creates an advantage against an active opposer from the sheet, invokes from the card, and the finished card reads well", async () => {
  const { page, errors, call: api } = await openConnectedPage(browser, pageUrl);
  // The ogre opposes first (Fight +3, dice − − 0 0 = Average +1), then Zird rolls (Athletics +3, + 0 + 0 = Superb +5).
  assert.equal((await api("dev.queue_dice", { rolls: [[-1, -1, 0, 0], [1, 0, 1, 0]] })).ok, true);
  assert.equal((await api("fate.gm_budget", { fate_points: 2 })).ok, true);

  await page.click('.fate-bridge-roll[data-skill="Athletics"]');
  const dialog = page.locator("dialog.fake-dialog-v2");
  await dialog.waitFor();
  assert.equal(await dialog.locator(".window-title").textContent(), "Zird the Arcane: take an action");
  assert.equal(await dialog.locator("select[name=skill]").inputValue(), "Athletics");
  await dialog.locator("select[name=type]").selectOption("create_advantage");
  assert.equal(await dialog.locator("input[name=aspectName]").isVisible(), true, "create advantage asks for the aspect's name");
  assert.equal(await dialog.locator("input[name=situation]").isVisible(), true);
  await dialog.locator("select[name=opposition]").selectOption("actor:actorOgre0000001");
  await dialog.locator("select[name=target]").selectOption("actorOgre0000001");
  await dialog.locator("input[name=aspectName]").fill("Ogre Off Balance");
  await dialog.locator("input[name=description]").fill("Swing from the chandelier into the ogre");
  await page.screenshot({ path: path.join(ARTIFACTS, "action-dialog.png"), clip: { x: 100, y: 60, width: 480, height: 460 } });
  await dialog.locator('button[data-action="roll"]').click();

  const card = page.locator("#chat-log .fate-bridge-card");
  await card.waitFor();
  // R2.2: the opposer picks its skill and rolls first; the GM controls the NPC.
  await card.locator('[data-fb="oppose"]').waitFor();
  await card.locator('select[name="skill"]').selectOption("Fight");
  await card.locator('[data-fb="oppose"]').click();
  await card.locator('[data-fb="invoke"][data-side="actor"]').waitFor();
  assert.match(await card.locator(".fate-bridge-card__outcome").innerText(), /so far/i);

  // Invoke Zird's high concept with a fate point, from the card.
  await card.locator('[data-fb="invoke"][data-side="actor"]').click();
  const picker = page.locator("dialog.fake-dialog-v2");
  await picker.waitFor();
  await picker.locator("select[name=invoker]").selectOption("actorZird0000001");
  await picker.locator(".fate-bridge-picker__aspect", { hasText: "Wizard of the Old School" }).locator("input").check();
  await page.screenshot({ path: path.join(ARTIFACTS, "invoke-picker.png"), clip: { x: 100, y: 60, width: 480, height: 420 } });
  await picker.locator('button[data-action="invoke"]').click();
  await card.locator(".fate-bridge-card__invoke").waitFor();
  assert.equal(await page.locator("#chat-log .chat-message").count(), 1, "the same message was updated");

  await card.locator('[data-fb="pass"][data-side="actor"]').click();
  await card.locator('[data-fb="pass"][data-side="opposition"]').click();
  // Excel against a target: place the aspect or leave a mark (R5.4).
  await card.locator('[data-fb="choose"][data-choice="aspect"]').click();
  await page.locator("#chat-log .fate-bridge-card--state-resolved").waitFor();

  const text = (await card.textContent()).replace(/\s+/g, " ");
  assert.match(text, /Create an Advantage/);
  assert.match(text, /Zird the Arcane invoked Wizard of the Old School for \+2 \(fate point\)/);
  assert.match(text, /Aspect placed: Ogre Off Balance, 2 free invokes for Zird the Arcane/);
  assert.match(text, /Epic \+7/);
  assert.match(text, /Average \+1/);
  assert.doesNotMatch(text, /so far/);
  const faces = await card.locator(".fate-bridge-side--actor .fate-bridge-die").evaluateAll((els) => els.map((e) => Number(e.dataset.face)));
  assert.deepEqual(faces, [1, 0, 1, 0]);
  const banner = await card.locator(".fate-bridge-card__outcome").evaluate((el) => getComputedStyle(el).backgroundColor);
  assert.notEqual(banner, "rgba(0, 0, 0, 0)");
  const rolls = await page.evaluate(() => game.messages.contents[0].rolls.map((r) => r.total));
  assert.deepEqual(rolls, [7, 1]);

  await page.screenshot({ path: path.join(ARTIFACTS, "chat-card-dark.png") });
  await page.locator("#chat-log .chat-message").screenshot({ path: path.join(ARTIFACTS, "chat-card-dark-closeup.png") });
  await page.evaluate(() => {
    document.body.classList.replace("theme-dark", "theme-light");
    document.getElementById("sidebar").classList.replace("theme-dark", "theme-light");
  });
  await page.locator("#chat-log .chat-message").screenshot({ path: path.join(ARTIFACTS, "chat-card-light-closeup.png") });
  assert.deepEqual(errors, []);
  await page.close();
});

test("odds before rolling (issue 8.7): the dialog shows the bridge's exact odds, the invoke picker what +2 or a reroll would do", async () => {
  const { page, errors } = await openConnectedPage(browser, pageUrl, { width: 1100, height: 900 });
  const api = (fn, payload) => page.evaluate(([f, a]) => settled(game.modules.get("fate-bridge").api.connection.call(f, a)), [fn, payload]);

  await page.click('.fate-bridge-roll[data-skill="Athletics"]');
  const dialog = page.locator("dialog.fake-dialog-v2");
  await dialog.waitFor();
  // R1.1, R3.1: Good (+3) against Great (+4): 15 of the 81 rolls succeed or better, 16 tie.
  await dialog.locator("select[name=opposition]").selectOption("4");
  const odds = dialog.locator("[data-odds]");
  await odds.locator(".fate-bridge-odds__success", { hasText: "18.5%" }).waitFor();
  assert.match(await odds.locator(".fate-bridge-odds__success").innerText(), /18\.5% to succeed or better \(15\/81\)/);
  const row = async (id) => (await odds.locator(`[data-outcome="${id}"] .fate-bridge-odds__value`).innerText()).replace(/\s+/g, " ");
  assert.equal(await row("tie"), "19.8% (16/81)");
  assert.equal(await row("fumble"), "61.7% (50/81)");
  assert.equal(await row("excel"), "1.2% (1/81)");
  await dialog.screenshot({ path: path.join(ARTIFACTS, "roll-dialog-odds.png") });
  // An opposer who has not rolled yet: the odds wait for its roll.
  await dialog.locator("select[name=opposition]").selectOption("actor:actorOgre0000001");
  await odds.locator(".fate-bridge-odds__note").waitFor();
  await dialog.locator("select[name=opposition]").selectOption("4");
  await odds.locator(".fate-bridge-odds__success", { hasText: "18.5%" }).waitFor();

  // Dice 0 0 0 0: Good +3 against Great +4, a fumble so far; the picker weighs an invoke.
  assert.equal((await api("dev.queue_dice", { rolls: [[0, 0, 0, 0]] })).ok, true);
  await dialog.locator('button[data-action="roll"]').click();
  const card = page.locator("#chat-log .chat-message").last();
  await card.locator('[data-fb="invoke"][data-side="actor"]').waitFor();
  await card.locator('[data-fb="invoke"][data-side="actor"]').click();
  const picker = page.locator("dialog.fake-dialog-v2");
  await picker.waitFor();
  const invokeOdds = picker.locator("[data-invoke-odds]");
  assert.match((await invokeOdds.innerText()).replace(/\s+/g, " "), /Now: Fumble\. A \+2 invoke makes it: Succeed\. If you reroll: 18\.5% to succeed or better \(15\/81\)/);
  await picker.screenshot({ path: path.join(ARTIFACTS, "invoke-picker-odds.png") });
  await picker.locator('button[data-action="cancel"]').click();
  assert.deepEqual(errors, []);
  await page.close();
});

test("without a global io the module connects through its packed socket.io-client fallback", async () => {
  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  const requested = [];
  page.on("request", (r) => requested.push(new URL(r.url()).pathname));
  await page.goto(`${pageUrl}&noio=1`);
  await page.waitForSelector("body[data-booted=true]");
  await page.waitForSelector("#fate-bridge-status[data-state=connected]");
  assert.equal(await page.evaluate(() => typeof window.io), "undefined");
  assert.ok(requested.includes(VENDOR_URL));
  assert.deepEqual(errors, []);
  await page.close();
});

test("a wrong key shows the refusal in words in the status badge", async () => {
  const page = await browser.newPage({ viewport: { width: 1100, height: 400 } });
  await page.goto(pageUrl.replace(/key=[^&]*/, "key=wrong"));
  await page.waitForSelector("#fate-bridge-status[data-state=refused]");
  assert.equal(await page.locator("#fate-bridge-status").getAttribute("data-reason"), "bad_key");
  assert.match(await page.locator("#fate-bridge-status").innerText(), /Refused[\s\S]*GM key is wrong/);
  await page.locator("#sidebar").screenshot({ path: path.join(ARTIFACTS, "status-refused.png") });
  await page.close();
});

test("the scene panel, the contest tracker, the challenge board and the GM cards read well on the dark UI", async () => {
  const { page, errors, call, api } = await openConnectedPage(browser, scenePageUrl, { width: 1260, height: 1000 });
  const queue = async (...rolls) => assert.equal((await call("dev.queue_dice", { rolls })).ok, true);
  const ZIRD = "actorZird0000001";
  const OGRE = "actorOgre0000001";
  const pass = async (cardId) => {
    const card = page.locator(`#chat-log .chat-message:has([data-action-id="${cardId.split(".").pop()}"])`);
    await card.locator('[data-fb="pass"][data-side="actor"]').click();
    await card.locator(".fate-bridge-card--state-resolved, .fate-bridge-card--state-choosing").first().waitFor();
  };

  await api("setGmBudget", 2);
  assert.ok(await api("aspects.add", "Crowded Market", { [ZIRD]: 1 }));
  await page.evaluate(() => game.modules.get("fate-bridge").api.openScene());
  const panel = page.locator("#fate-bridge-scene-panel");
  await panel.locator(".fate-bridge-aspect", { hasText: "Crowded Market" }).waitFor();

  // The GM sets up the contest from the tracker's form: no number in a direct contest.
  await panel.locator('details[data-key="setup-contest"] summary').click();
  await panel.locator('[name="contestName"]').fill("Chase across the rooftops");
  await panel.locator('[name="contestSkill"]').selectOption("Athletics");
  await panel.locator('[name="contestSide1"]').fill("Zird");
  await panel.locator('[name="contestSide2"]').fill("The Ogre");
  await panel.locator(`[name="contestMember-${ZIRD}"]`).selectOption("1");
  await panel.locator(`[name="contestMember-${OGRE}"]`).selectOption("2");
  assert.equal(await panel.locator('[name="contestPassive"]').isVisible(), false, "a direct contest asks for no opposition");
  await panel.locator('[name="contestMode"]').selectOption("environment");
  assert.equal(await panel.locator('[name="contestPassive"]').isVisible(), true, "an environment contest asks for its opposition on the ladder");
  await panel.locator('[name="contestMode"]').selectOption("direct");
  await panel.screenshot({ path: path.join(ARTIFACTS, "contest-setup.png") });
  await panel.locator('[data-action="startContest"]').click();
  const tracker = panel.locator(".fate-bridge-tracker--contest");
  await tracker.waitFor();

  // Exchange 1 from the tracker's Roll buttons and the cards' Pass: a tie at the top, a twist.
  await queue([0, 0, 0, 0]);
  await tracker.locator('[data-action="contestRoll"][data-side="s1"]').click();
  await page.locator("#chat-log .fate-bridge-card").first().waitFor();
  let cards = await page.evaluate(() => game.messages.contents.map((m) => m.flags["fate-bridge"].cardId));
  await pass(cards.at(-1));
  await queue([1, 1, 1, 0]);
  await tracker.locator('[data-action="contestRoll"][data-side="s2"]').click();
  await page.waitForFunction((n) => game.messages.contents.length > n, cards.length);
  cards = await page.evaluate(() => game.messages.contents.map((m) => m.flags["fate-bridge"].cardId));
  await pass(cards.at(-1));
  await panel.locator('[data-action="nameTwist"]').waitFor();
  await panel.locator('[name="twistName"]').fill("Loose Tiles");
  await panel.locator('[data-action="nameTwist"]').click();
  await panel.locator(".fate-bridge-aspect", { hasText: "Loose Tiles" }).waitFor();

  // Exchange 2 through the API: Zird by 4, excels alone, two marks. Exchange 3: Zird has rolled.
  const contestId = (await api("readScene")).contests[0].id;
  await queue([1, 0, 0, 0]);
  let roll = await api("contest.roll", contestId, "s1");
  await api("pass", roll.action_id, "actor");
  await queue([0, 0, 0, 0]);
  roll = await api("contest.roll", contestId, "s2");
  await api("pass", roll.action_id, "actor");
  await queue([0, 1, 0, 0]);
  roll = await api("contest.roll", contestId, "s1");
  await api("pass", roll.action_id, "actor");
  await tracker.locator(".fate-bridge-tracker__side", { hasText: "2/3" }).waitFor();

  // A challenge from the board: two tasks, opposition from the ladder.
  await panel.locator('details[data-key="setup-challenge"] summary').click();
  await panel.locator('[name="challengeName"]').fill("Ready the airship");
  const rows = panel.locator("[data-task-row]");
  await rows.nth(0).locator('[name="taskName"]').fill("Patch the envelope");
  await rows.nth(0).locator('[name="taskSkill"]').selectOption("Lore");
  await rows.nth(0).locator('[name="taskRating"]').selectOption("2");
  await rows.nth(1).locator('[name="taskName"]').fill("Hold the mooring lines");
  await rows.nth(1).locator('[name="taskSkill"]').selectOption("Fight");
  await rows.nth(1).locator('[name="taskRating"]').selectOption("4");
  await panel.locator('[data-action="startChallenge"]').click();
  const board = panel.locator(".fate-bridge-tracker--challenge");
  await board.waitFor();
  await queue([1, 1, 0, 0]);
  await board.locator('[data-task="t1"] [name="roller"]').selectOption(ZIRD);
  await board.locator('[data-action="challengeRoll"][data-task="t1"]').click();
  await board.locator('[data-task="t1"]', { hasText: "Fantastic" }).waitFor();
  const challengeId = (await api("readScene")).challenges[0].id;
  const t1 = (await api("readScene")).challenges[0].tasks[0].action_id;
  await api("pass", t1, "actor");
  await board.locator('[data-task="t1"]', { hasText: "Success" }).waitFor();
  await panel.screenshot({ path: path.join(ARTIFACTS, "scene-panel-gm.png") });

  await queue([-1, 0, 0, 0]);
  roll = await api("challenge.roll", challengeId, "t2", OGRE);
  await api("pass", roll.action_id, "actor");
  await api("choose", roll.action_id, "succeed_at_cost");
  await api("cost", roll.action_id, { kind: "delay", text: "The storm arrives first" });
  await page.locator("#chat-log .fate-bridge-gm-card--challenge").waitFor();
  await board.locator('[data-action="toggleCarry"]').check();
  await page.waitForFunction(() => game.modules.get("fate-bridge").api.scene.challenges[0].carry_boosts === true);
  await panel.screenshot({ path: path.join(ARTIFACTS, "challenge-board.png") });

  const contestCards = page.locator("#chat-log .fate-bridge-gm-card--contest");
  assert.equal(await contestCards.count(), 2, "one card per finished exchange");
  assert.match(await contestCards.nth(0).innerText(), /The twist: Loose Tiles/, "the named twist updated its exchange card");
  assert.equal(await contestCards.nth(0).locator("[data-twist-aspect]").innerText(), "Loose Tiles");
  assert.match(await contestCards.nth(1).innerText(), /Zird wins the exchange by 4 and marks 2 progress/);
  await contestCards.nth(0).screenshot({ path: path.join(ARTIFACTS, "contest-card-twist.png") });
  await contestCards.nth(1).screenshot({ path: path.join(ARTIFACTS, "contest-card-exchange.png") });
  const challengeCard = page.locator("#chat-log .fate-bridge-gm-card--challenge");
  const challengeText = (await challengeCard.textContent()).replace(/\s+/g, " ");
  assert.match(challengeText, /2 of 2 tasks succeeded/i);
  assert.match(challengeText, /Serious cost Delay the success: The storm arrives first/);
  await challengeCard.screenshot({ path: path.join(ARTIFACTS, "challenge-card.png") });

  // A contest left open: the scene's end closes it without a result.
  await api("contest.start", { name: "Haggle with the harbourmaster", mode: "direct", skill: "Will", sides: [{ name: "Zird", members: [ZIRD] }, { name: "The Ogre", members: [OGRE] }] });

  // End the scene from the panel: keep the twist; the card says what changed.
  await panel.locator('[data-action="endScene"][data-scope="scene"]').click();
  const dialog = page.locator("dialog.fake-dialog-v2");
  await dialog.waitFor();
  await dialog.locator("label", { hasText: "Loose Tiles" }).locator("input").check();
  await page.screenshot({ path: path.join(ARTIFACTS, "scene-end-dialog.png"), clip: { x: 100, y: 60, width: 520, height: 380 } });
  await dialog.locator('button[data-action="ok"]').click();
  const endCard = page.locator("#chat-log .fate-bridge-gm-card--scene-end");
  await endCard.waitFor();
  const endText = (await endCard.textContent()).replace(/\s+/g, " ");
  assert.match(endText, /Scene 1 ends/);
  assert.match(endText, /Situation aspects cleared Crowded Market/);
  assert.doesNotMatch(endText, /Loose Tiles/, "the kept aspect stays");
  assert.match(endText, /Closed with the scene, unfinished Chase across the rooftops no result Haggle with the harbourmaster no result/);
  await endCard.screenshot({ path: path.join(ARTIFACTS, "scene-end-card.png") });
  await panel.locator(".fate-bridge-scene__label", { hasText: "Scene 2" }).waitFor();

  // The player's view of the same scene: read-only aspects, no GM controls.
  await page.evaluate(async () => {
    game.user = game.users.get("pagePlayerAnn001");
    await game.modules.get("fate-bridge").api.openScene();
  });
  await panel.locator(".fate-bridge-scene--player").waitFor();
  assert.equal(await panel.locator('[data-action="endScene"], [data-action="editAspect"], [data-action="startContest"], form[data-form="aspect"]').count(), 0);
  await panel.screenshot({ path: path.join(ARTIFACTS, "scene-panel-player.png") });
  await page.screenshot({ path: path.join(ARTIFACTS, "scene-overview.png") });
  assert.deepEqual(errors, []);
  await page.close();
});

test("the GM confirms a player's proposed rating and danger on the card: the form starts from the proposal (R2.1, R9.1)", async () => {
  const { page, errors } = await openConnectedPage(browser, confirmPageUrl);
  const api = (fn, payload) => page.evaluate(([f, a]) => settled(game.modules.get("fate-bridge").api.connection.call(f, a)), [fn, payload]);
  const { io } = await import("socket.io-client");
  const { NAMESPACE, PROTOCOL_VERSION, cardPutBack } = await import(path.join(REPO, "foundry-module/scripts/protocol.mjs"));

  // Ann plays from her own browser: a real Socket.IO client, bound through the GM's page.
  const ann = io(`${bridge.url}${NAMESPACE}`, { transports: ["websocket"], reconnection: false, auth: { world: confirmWorld.id, role: "player", user: "pagePlayerAnn001", protocol: PROTOCOL_VERSION } });
  const annCards = [];
  const heard = (emits) => annCards.push(...emits.filter((e) => e.event === "card").map((e) => e.data));
  ann.on("emits", (frame) => heard(frame.emits));
  let n = 0;
  // Ann's own commits come back in her acks (protocol 4), everyone else's as frames.
  const annSend = async (event, payload) => {
    const ack = await ann.timeout(10000).emitWithAck(event, { request_id: `ann-${++n}`, ...payload });
    if (Array.isArray(ack?.emits)) heard(ack.emits);
    return cardPutBack(ack);
  };
  try {
    const hello = await annSend("hello", {});
    assert.equal(hello.ok, true);
    assert.equal((await api("user.bind", { user_id: "pagePlayerAnn001", nonce: hello.data.bind_nonce })).ok, true);
    const start = {
      type: "overcome", actor_id: "actorZird0000001", skill: "Athletics", description: "Leap the gap between the towers",
      opposition: { kind: "passive", rating: -4 }, dangerous: { actor: true }
    };
    let started = await annSend("action.start", start);
    for (let i = 0; i < 50 && started.error?.code === "unknown_actor"; i++) {
      await new Promise((r) => setTimeout(r, 100)); // the GM's page syncs Zird once connected
      started = await annSend("action.start", start);
    }
    assert.equal(started.ok, true, JSON.stringify(started));
    assert.equal(started.data.card.state, "confirming");
    const emitOf = async (predicate) => {
      for (let i = 0; i < 200; i++) {
        const found = annCards.find(predicate);
        if (found) return found;
        await new Promise((r) => setTimeout(r, 25));
      }
      throw new Error("no such card emit");
    };
    // Ann's client writes her card and Foundry shows the message to the GM; on this one page the
    // GM's client writes it instead (the path taken when the acting player is away).
    const relay = (emit) => writeCardOnPage(page, { ...emit, writer: "gm" });
    await relay(await emitOf((e) => e.card.state === "confirming"));

    const message = page.locator("#chat-log .chat-message").last();
    await message.locator('[data-fb="confirm"]').waitFor();
    assert.equal(await message.locator('select[name="rating"]').inputValue(), "-4", "pre-filled with the proposal");
    assert.equal(await message.locator('input[name="dangerActor"]').isChecked(), true);
    assert.equal(await message.locator('input[name="dangerOpposition"]').isChecked(), false);
    const text = (await message.innerText()).replace(/\s+/g, " ");
    assert.match(text, /Awaiting confirmation/);
    assert.match(text, /Proposed by the player: opposition \u22124, dangerous for the actor\. The GM confirms or changes it\./);
    await message.screenshot({ path: path.join(ARTIFACTS, "confirm-card.png") });

    // One change and one click: Fair (+2), still dangerous; the concession window opens.
    await message.locator('select[name="rating"]').selectOption("2");
    await message.locator('[data-fb="confirm"]').click();
    const declared = await emitOf((e) => e.card.state === "declared");
    assert.equal(declared.card.opposition.total.value, 2);
    assert.equal(declared.card.actor.dangerous, true);
    assert.equal(declared.card.proposal, null);
    await relay(declared);
    await message.locator('[data-fb="roll"]').waitFor();
    assert.equal(await message.locator('[data-fb="confirm"]').count(), 0);
    await message.screenshot({ path: path.join(ARTIFACTS, "confirm-card-declared.png") });
  } finally {
    ann.disconnect();
  }
  assert.deepEqual(errors, []);
  await page.close();
});

test("one click, one roll: a click on an FCO skill rolls through the bridge, never natively; offline FCO rolls it and the sheet says why", async () => {
  const { page, errors } = await openConnectedPage(browser, fcoPageUrl);
  const nativeRolls = () => page.evaluate(() => window.fakeFoundry.log.fcoNativeRolls.length);
  const dialog = page.locator("dialog.fake-dialog-v2");
  const sheet = page.locator(".fcoSheet").first();

  // One control per skill: FCO's own die icon is the bridge's; no second die is added.
  assert.equal(await sheet.locator('[name="skill"]').count(), 3);
  assert.equal(await sheet.locator(".mfate-skills-list .fa-dice").count(), 3);
  assert.equal(await sheet.locator(".fate-bridge-roll").count(), 3);
  assert.equal(await sheet.locator(".fate-bridge-sheet-status").isVisible(), false, "connected: nothing to say");

  // A click on the skill's name (FCO's click-to-roll area) opens the bridge's dialog.
  await sheet.locator('[name="skill"][data-skillname="Lore"]').click({ position: { x: 8, y: 6 } });
  await dialog.waitFor();
  assert.equal(await dialog.locator("select[name=skill]").inputValue(), "Lore");
  await dialog.locator('[data-action="close"]').click();
  await dialog.waitFor({ state: "detached" });
  // A double click is FCO's (it shares the skill to chat): no roll at all (issue 25).
  await sheet.locator('[name="skill"][data-skillname="Will"]').dblclick({ position: { x: 8, y: 6 } });
  await page.waitForFunction(() => window.fakeFoundry.log.fcoShared.length === 1);
  await page.waitForTimeout(400);
  assert.equal(await page.locator("dialog.fake-dialog-v2").count(), 0);

  // The die icon rolls through the bridge: the card arrives, and FCO neither rolled nor recorded it.
  const call = (fn, payload) => page.evaluate(([f, p]) => settled(game.modules.get("fate-bridge").api.connection.call(f, p)), [fn, payload]);
  assert.equal((await call("dev.queue_dice", { rolls: [[1, 1, 0, -1]] })).ok, true);
  await sheet.locator('.fate-bridge-roll[data-skill="Athletics"]').click();
  await dialog.waitFor();
  await dialog.locator('button[data-action="roll"]').click();
  await page.locator("#chat-log .fate-bridge-card").waitFor();
  assert.equal(await nativeRolls(), 0, "FCO's native roll was suppressed for every click");
  assert.deepEqual(await page.evaluate(() => game.scenes.viewed.getFlag("fate-core-official", "rolls") ?? []), [], "FCO did not record the bridge's roll");
  assert.deepEqual(await page.evaluate(() => window.fakeFoundry.log.hookErrors.map((e) => String(e.error))), []);

  // Offline: the click is FCO's again (its own dice), the sheet and a notice say why.
  await page.evaluate(() => game.modules.get("fate-bridge").api.connection.disconnect());
  await sheet.locator(".fate-bridge-sheet-status").waitFor();
  assert.match(await sheet.locator(".fate-bridge-sheet-status").innerText(), /Fate Bridge is offline: skill clicks roll with fate-core-official's own dice until it is back/);
  await sheet.locator('[name="skill"][data-skillname="Lore"]').click({ position: { x: 8, y: 6 } });
  // FCO rolls once its 300 ms double-click guard has passed.
  await page.waitForFunction(() => window.fakeFoundry.log.fcoNativeRolls.length === 1);
  assert.equal(await page.locator("dialog.fake-dialog-v2").count(), 0);
  assert.equal(await nativeRolls(), 1, "a bridge that is down never takes a roll away");
  const notes = await page.evaluate(() => window.fakeFoundry.log.notifications.map((n) => n.message));
  assert.ok(notes.some((n) => /Lore rolled by fate-core-official, not resolved by Fate Bridge: the bridge is offline/.test(n)), JSON.stringify(notes));
  await sheet.screenshot({ path: path.join(ARTIFACTS, "fco-sheet-offline.png") });
  // Back online, clicks are the bridge's again.
  await page.evaluate(() => game.modules.get("fate-bridge").api.connection.connect());
  await page.waitForSelector("#fate-bridge-status[data-state=connected]");
  await sheet.locator('[name="skill"][data-skillname="Lore"]').click({ position: { x: 8, y: 6 } });
  await dialog.waitFor();
  await dialog.locator('[data-action="close"]').click();
  assert.equal(await nativeRolls(), 1);
  assert.deepEqual(errors, []);
  await page.close();
});

const ZIRD = "actorZird0000001";
const OGRE = "actorOgre0000001";

/**
 * A GM's page on a history world, booted and connected, with its calls: the module api by
 * dotted path, the dev dice queue and Zird's fate points.
 */
async function historyTable(url) {
  const { page, errors, call, api } = await openConnectedPage(browser, url, { width: 1260, height: 900 });
  const queue = async (...rolls) => assert.equal((await call("dev.queue_dice", { rolls })).ok, true);
  const fatePoints = async () => (await api("state")).characters.find((c) => c.id === ZIRD).fate_points;
  return { page, errors, api, queue, fatePoints };
}


test("FCO 4.7.14 on Foundry 14: a boost's status icon comes off though FCO keeps statuses empty; a double click on a skill is FCO's share to chat", async () => {
  const { page, errors } = await openConnectedPage(browser, fco14PageUrl);
  assert.equal(await page.evaluate(() => game.release.generation), 14);
  const call = (fn, payload) => page.evaluate(([f, p]) => settled(game.modules.get("fate-bridge").api.connection.call(f, p)), [fn, payload]);
  const zird = () => page.evaluate(() => {
    const a = game.actors.get("actorZird0000001");
    return { effects: a.effects.contents.flatMap((e) => [...e.statuses]), statuses: [...a.statuses], boosts: a.system.details.fatePoints.boosts };
  });
  const sheet = page.locator(".fcoSheet").first();
  const dialog = page.locator("dialog.fake-dialog-v2");

  // An excelled overcome gives Zird a boost: the bridge's token.status puts the icon on.
  assert.equal((await call("dev.queue_dice", { rolls: [[1, 1, 1, 1]] })).ok, true);
  const started = await page.evaluate(() => settled(game.modules.get("fate-bridge").api.start("actorZird0000001", "Athletics", { opposition: 0 })));
  assert.ok(started?.card_id);
  const card = page.locator("#chat-log .fate-bridge-card").last();
  await card.locator('[data-fb="pass"][data-side="actor"]').click();
  await page.waitForFunction(() => game.actors.get("actorZird0000001").effects.contents.some((e) => e.statuses.has("fate-bridge-boost")));
  // What Zird's token shows (its actor's status effects), drawn beside the sheet for the screenshots.
  const tokenStrip = () => page.evaluate(() => {
    const a = game.actors.get("actorZird0000001");
    let el = document.getElementById("token-strip");
    if (!el) {
      el = document.createElement("div");
      el.id = "token-strip";
      el.style.cssText = "margin:8px 16px;padding:6px 10px;border:2px solid #888;border-radius:6px;background:#f0ebe0;color:#222;font:14px sans-serif;width:380px";
      document.getElementById("sheets").append(el);
    }
    const shown = a.effects.contents.map((e) => e.name).join(", ") || "none";
    el.textContent = `Token of ${a.name} (Foundry ${game.release.generation}): status icons: ${shown}; actor.statuses: [${[...a.statuses].join(", ")}]`;
  });
  await tokenStrip();
  await page.locator("#sheets").screenshot({ path: path.join(ARTIFACTS, "fco14-status-on.png") });
  let now = await zird();
  // Zird's sheet names a moderate consequence (Twisted Ankle): its icon is there too.
  assert.deepEqual(now.effects.sort(), ["fate-bridge-boost", "fate-bridge-moderate"]);
  assert.deepEqual(now.statuses, [], "FCO 4.7.14's actor leaves statuses empty on Foundry 14");
  assert.equal(now.boosts, 1, "FCO's boost counter shows the bridge's boost");
  // The GM takes the boost off the scene: the icon comes off too.
  const boost = await page.evaluate(() => game.modules.get("fate-bridge").api.scene.aspects.find((a) => a.kind === "boost")?.id);
  assert.ok(boost);
  assert.equal((await call("scene.aspect", { op: "remove", aspect_id: boost })).ok, true);
  await page.waitForFunction(() => !game.actors.get("actorZird0000001").effects.contents.some((e) => e.statuses.has("fate-bridge-boost")));
  now = await zird();
  assert.deepEqual(now.effects, ["fate-bridge-moderate"]);
  assert.equal(now.boosts, 0);
  await tokenStrip();
  await page.locator("#sheets").screenshot({ path: path.join(ARTIFACTS, "fco14-status-off.png") });

  // A double click on a skill name is FCO's share to chat; no roll dialog, no native roll.
  const messages = await page.locator("#chat-log .chat-message").count();
  await sheet.locator('[name="skill"][data-skillname="Lore"]').dblclick({ position: { x: 8, y: 6 } });
  await page.locator("#chat-log .chat-message", { hasText: "Shared from Zird the Arcane" }).waitFor();
  await page.waitForTimeout(400);
  assert.equal(await dialog.count(), 0, "the double click opened no roll dialog");
  assert.equal(await page.locator("#chat-log .chat-message").count(), messages + 1);
  assert.deepEqual(await page.evaluate(() => window.fakeFoundry.log.fcoShared), [{ actor: "actorZird0000001", type: "skill", name: "Lore" }]);
  assert.equal(await page.evaluate(() => window.fakeFoundry.log.fcoNativeRolls.length), 0);
  // One click: the bridge's dialog, once FCO's double-click wait is over.
  await sheet.locator('[name="skill"][data-skillname="Lore"]').click({ position: { x: 8, y: 6 } });
  await dialog.waitFor();
  assert.equal(await dialog.locator("select[name=skill]").inputValue(), "Lore");
  await dialog.locator('[data-action="close"]').click();
  await dialog.waitFor({ state: "detached" });
  // FCO's stunt button: the bridge's action with the stunt's skill and action.
  await sheet.locator('button[name="stunt_name"][data-linkedskill^="Scholar_"]').click();
  await dialog.waitFor();
  assert.equal(await dialog.locator("select[name=skill]").inputValue(), "Lore");
  assert.equal(await dialog.locator("select[name=type]").inputValue(), "create_advantage");
  await dialog.locator('[data-action="close"]').click();
  await dialog.waitFor({ state: "detached" });
  assert.equal(await page.evaluate(() => window.fakeFoundry.log.fcoNativeRolls.length), 0);
  await page.locator("#sheets").screenshot({ path: path.join(ARTIFACTS, "fco14-sheet.png") });
  await page.screenshot({ path: path.join(ARTIFACTS, "fco14-page.png") });
  assert.deepEqual(errors, []);
  await page.close();
});
test("the roll history window pages the bridge's record with its dice chart, and the GM's undo marks the card", async () => {
  // R1.1 dice against the expected 4dF shares; R4 invokes and who paid; undo returns the fate point.
  const { page, errors, api, queue, fatePoints } = await historyTable(historyPageUrl);

  // Three resolved rolls: Zird (Lore +4, a reroll paid with a fate point), the ogre, Zird again.
  await queue([-1, -1, 0, 0], [1, 1, 0, 1]);
  let roll = await api("start", ZIRD, "Lore", { type: "overcome", opposition: 3, description: "Read the runes" });
  const wizard = (await api("state")).aspects.find((a) => a.name === "Wizard of the Old School").id;
  assert.ok(await api("invoke", roll.action_id, { invoker: ZIRD, aspect_id: wizard, payment: "fate_point", effect: "reroll" }));
  await api("pass", roll.action_id, "actor");
  await queue([0, 1, -1, 0]);
  roll = await api("start", OGRE, "Fight", { type: "overcome", opposition: 2 });
  await api("pass", roll.action_id, "actor");
  const spent = await fatePoints();
  await queue([1, 0, 1, 0]);
  roll = await api("start", ZIRD, "Athletics", { type: "overcome", opposition: 1, description: "Vault the fence" });
  assert.ok(await api("invoke", roll.action_id, { invoker: ZIRD, aspect_id: wizard, payment: "fate_point", effect: "bonus" }));
  await api("pass", roll.action_id, "actor");
  const lastAction = roll.action_id;
  assert.equal(await fatePoints(), spent - 1);

  await api("history.open");
  const win = page.locator("#fate-bridge-history");
  await win.locator(".fate-bridge-entry").nth(2).waitFor();
  assert.equal(await win.locator(".fate-bridge-entry").count(), 3);
  const first = (await win.locator(".fate-bridge-entry").nth(2).innerText()).replace(/\s+/g, " ");
  assert.match(first, /Zird the Arcane: Overcome \(Lore\)/);
  assert.match(first, /invoked Wizard of the Old School to reroll \(fate point\)/);
  assert.equal(await win.locator(".fate-bridge-entry").nth(2).locator(".fate-bridge-entry__roll").count(), 2, "the first roll and its reroll");
  assert.match(first, /Event #\d+/);
  // The chart: 4 rolls this world; the expected bar for 0 is the tallest.
  assert.match(await win.locator(".fate-bridge-chart__legend").innerText(), /4 rolls/);
  const expected = await win.locator(".fate-bridge-chart__bar--expected").evaluateAll((els) => els.map((e) => parseInt(e.style.height, 10)));
  assert.equal(Math.max(...expected), expected[4]);
  await win.screenshot({ path: path.join(ARTIFACTS, "history-window.png") });

  // Filter by the ogre: one entry; by kind "discover": none.
  await win.locator('select[name="character"]').selectOption(OGRE);
  await win.locator('[data-action="applyFilters"]').click();
  await win.locator(".fate-bridge-entry", { hasText: "Grumpy Ogre" }).waitFor();
  await page.waitForFunction(() => document.querySelectorAll("#fate-bridge-history .fate-bridge-entry").length === 1);
  await win.locator('select[name="character"]').selectOption("");
  await win.locator('select[name="kind"]').selectOption("discover");
  await win.locator('[data-action="applyFilters"]').click();
  await win.locator(".fate-bridge-history__empty").waitFor();
  await win.locator('select[name="kind"]').selectOption("");
  await win.locator('[data-action="applyFilters"]').click();
  await win.locator(".fate-bridge-entry").nth(2).waitFor();

  // Undo the last resolution from the window: the fate point comes back, the card says undone.
  await win.locator('[data-action="undoLast"]').click();
  const undone = page.locator(`#chat-log .chat-message:has([data-action-id="${lastAction}"]) .fate-bridge-card--undone`);
  await undone.waitFor();
  assert.equal(await fatePoints(), spent);
  assert.match(await undone.innerText(), /undone/i);
  assert.equal(await undone.locator("[data-fb]").count(), 0, "an undone card has no controls");
  await win.locator(".fate-bridge-entry--undone").waitFor();
  await page.locator(`#chat-log .chat-message:has([data-action-id="${lastAction}"])`).screenshot({ path: path.join(ARTIFACTS, "undone-card.png") });
  await win.screenshot({ path: path.join(ARTIFACTS, "history-window-undone.png") });
  const rejected = await page.evaluate(() => settled(game.modules.get("fate-bridge").api.undo({ backTo: 1 }).then(() => null, (e) => ({ name: e.name, code: e.code }))));
  assert.equal(rejected.name, "BridgeError");
  assert.equal(rejected.code, "mid_commit", "event 1 is inside the first actor sync");
  assert.deepEqual(errors, []);
  await page.close();
});

test("a roll the GM cancels from its card stays in the roll history, tagged cancelled, with its dice, refund and reason", async () => {
  // R1.1: a roll made is on the record and in the chart; R4.2: the invoke's fate point comes back.
  const { page, errors, api, queue, fatePoints } = await historyTable(cancelPageUrl);

  await queue([0, 1, 0, 0]);
  let roll = await api("start", OGRE, "Fight", { type: "overcome", opposition: 2 });
  await api("pass", roll.action_id, "actor");
  const points = await fatePoints();
  await queue([-1, -1, 0, -1]);
  roll = await api("start", ZIRD, "Lore", { type: "overcome", opposition: 4, description: "Read the runes" });
  const wizard = (await api("state")).aspects.find((a) => a.name === "Wizard of the Old School").id;
  assert.ok(await api("invoke", roll.action_id, { invoker: ZIRD, aspect_id: wizard, payment: "fate_point", effect: "bonus" }));
  assert.equal(await fatePoints(), points - 1);

  // The GM calls it off from the card, with a reason.
  const card = page.locator(`#chat-log .chat-message:has([data-action-id="${roll.action_id}"])`);
  await card.locator('[data-fb="cancel"]').click();
  const dialog = page.locator("dialog.fake-dialog-v2");
  await dialog.locator('input[name="reason"]').fill("Wrong skill");
  await dialog.locator('button[data-action="cancelAction"]').click();
  await card.locator(".fate-bridge-card--cancelled").waitFor();
  assert.equal(await fatePoints(), points);

  await api("history.open");
  const win = page.locator("#fate-bridge-history");
  await win.locator(".fate-bridge-entry").nth(1).waitFor();
  assert.equal(await win.locator(".fate-bridge-entry").count(), 2);
  const entry = win.locator(".fate-bridge-entry").first();
  assert.ok(await entry.evaluate((e) => e.classList.contains("fate-bridge-entry--cancelled")));
  assert.equal((await entry.locator(".fate-bridge-tag--cancelled").innerText()).toLowerCase(), "cancelled");
  assert.equal(await entry.locator(".fate-bridge-die").count(), 4);
  const text = (await entry.innerText()).replace(/\s+/g, " ");
  assert.match(text, /Zird the Arcane: Overcome \(Lore\)/);
  assert.match(text, /invoked Wizard of the Old School for \+2 \(fate point\)/);
  assert.match(text, /gets back what the invoke on Wizard of the Old School cost/);
  assert.match(text, /The GM cancelled this action: Wrong skill/);
  assert.equal(await win.locator(".fate-bridge-entry").nth(1).locator(".fate-bridge-tag--cancelled").count(), 0);
  // The chart counts both rolls and says one was called off.
  assert.match(await win.locator(".fate-bridge-chart__legend").innerText(), /2 rolls \(1 cancelled by the GM\)/);
  await win.screenshot({ path: path.join(ARTIFACTS, "history-window-cancelled.png") });

  // The rolls filter: only the cancelled one, then only the resolution.
  await win.locator('select[name="rolls"]').selectOption("cancelled");
  await win.locator('[data-action="applyFilters"]').click();
  await page.waitForFunction(() => document.querySelectorAll("#fate-bridge-history .fate-bridge-entry").length === 1);
  assert.equal(await win.locator(".fate-bridge-entry--cancelled").count(), 1);
  await win.locator('select[name="rolls"]').selectOption("resolved");
  await win.locator('[data-action="applyFilters"]').click();
  await win.locator(".fate-bridge-entry", { hasText: "Grumpy Ogre" }).waitFor();
  await page.waitForFunction(() => document.querySelectorAll("#fate-bridge-history .fate-bridge-entry--cancelled").length === 0);
  assert.equal(await win.locator(".fate-bridge-entry").count(), 1);
  assert.deepEqual(errors, []);
  await page.close();
});

test("the absorb picker names each stress track of the hit's kind and each box's value (R5.10, R11.3)", async () => {
  const { page, errors, call: api } = await openConnectedPage(browser, stressPageUrl);
  const [brawler, scrapper] = ["fcoCoreBrawler01", "fcoCondensed0001"];
  // A physical conflict; the Condensed Scrapper (Fight +3) hits the Core Brawler for 2 (0000 vs Average +1).
  const started = await page.evaluate(([a, b]) => settled(game.modules.get("fate-bridge").api.conflict.start({ name: "Dockside brawl", kind: "physical", sides: [{ name: "Core", members: [a] }, { name: "Condensed", members: [b] }] })), [brawler, scrapper]);
  assert.ok(started, "the conflict started");
  assert.equal((await api("dev.queue_dice", { rolls: [[0, 0, 0, 0]] })).ok, true);
  const data = await page.evaluate(([a, b]) => settled(game.modules.get("fate-bridge").api.start(a, "Fight", { type: "attack", opposition: 1, targetId: b })), [scrapper, brawler]);
  assert.equal(data.card.attack_kind, "physical");
  const card = page.locator("#chat-log .fate-bridge-card");
  await card.locator('[data-fb="pass"][data-side="actor"]').click();
  await card.locator('[data-fb="absorb"]').click();

  const picker = page.locator("dialog.fake-dialog-v2");
  await picker.waitFor();
  const text = (await picker.textContent()).replace(/\s+/g, " ");
  assert.match(text, /Core Brawler must absorb a physical hit of 2 shifts/);
  assert.match(text, /Physical Stress 1 2 3 4/, "Fate Core's escalating boxes keep their values");
  assert.doesNotMatch(text, /Mental Stress/, "a physical hit offers no mental box");
  await picker.locator('input[data-track][value="1"]').check();
  await page.screenshot({ path: path.join(ARTIFACTS, "absorb-picker.png"), clip: { x: 100, y: 60, width: 480, height: 360 } });
  await picker.locator('button[data-action="absorb"]').click();
  await page.locator("#chat-log .fate-bridge-card--state-resolved").waitFor();
  assert.match((await card.textContent()).replace(/\s+/g, " "), /Core Brawler marks a box of Physical Stress, absorbing 2 shifts/);
  await page.waitForFunction((id) => game.actors.get(id).system.tracks.UGh5c2ljYWwgU3RyZXNz.box_values[1] === true, brawler);
  const tracks = await page.evaluate((id) => game.actors.get(id).system.tracks, brawler);
  assert.deepEqual(tracks.UGh5c2ljYWwgU3RyZXNz.box_values, [false, true, false, false], "the 2-box of Physical Stress is ticked on the sheet");
  assert.deepEqual(tracks.TWVudGFsIFN0cmVzcw.box_values, [false, false, false], "Mental Stress untouched");
  await page.locator("#chat-log .chat-message").screenshot({ path: path.join(ARTIFACTS, "absorb-card.png") });
  assert.deepEqual(errors, []);
  await page.close();
});

test("the GM cancels an open action from its card: a confirm with a reason, and the card says what came back", async () => {
  const { page, errors, call } = await openConnectedPage(browser, pageUrl);
  assert.equal((await call("dev.queue_dice", { rolls: [[-1, -1, 0, 0]] })).ok, true);
  const started = await call("action.start", {
    request_id: "browser-cancel-1", type: "overcome", actor_id: "actorZird0000001", skill: "Athletics",
    opposition: { kind: "passive", rating: 4 }, description: "Leap the gap"
  });
  assert.equal(started.ok, true, JSON.stringify(started));
  const card = page.locator(`#chat-log .chat-message:has([data-action-id="${started.data.action_id}"])`);
  await card.locator('[data-fb="invoke"][data-side="actor"]').click();
  const picker = page.locator("dialog.fake-dialog-v2");
  await picker.waitFor();
  await picker.locator("select[name=invoker]").selectOption("actorZird0000001");
  await picker.locator(".fate-bridge-picker__aspect", { hasText: "Wizard of the Old School" }).locator("input").check();
  await picker.locator('button[data-action="invoke"]').click();
  await card.locator(".fate-bridge-card__invoke").waitFor();
  await card.locator('[data-fb="cancel"]').waitFor();
  await card.screenshot({ path: path.join(ARTIFACTS, "chat-card-open-gm.png") });

  await card.locator('[data-fb="cancel"]').click();
  const dialog = page.locator("dialog.fake-dialog-v2");
  await dialog.waitFor();
  assert.match(await dialog.innerText(), /Fate points, free invokes and boosts spent on its invokes go back/);
  await dialog.locator('[name="reason"]').fill("Wrong skill: Zird flies");
  await page.screenshot({ path: path.join(ARTIFACTS, "cancel-dialog.png"), clip: { x: 0, y: 0, width: 760, height: 320 } });
  await dialog.locator('button[data-action="cancelAction"]').click();
  await page.locator("#chat-log .fate-bridge-card--state-cancelled").waitFor();
  const text = (await card.textContent()).replace(/\s+/g, " ");
  assert.match(text, /Cancelled by the GM/);
  assert.match(text, /Cancelled — no outcome/);
  assert.doesNotMatch(text, /Not rolled yet|Fumble/);
  assert.match(text, /Zird the Arcane gets back what the invoke on Wizard of the Old School cost/);
  assert.match(text, /The GM cancelled this action: Wrong skill: Zird flies/);
  assert.equal(await card.locator("[data-fb]").count(), 0, "a cancelled card offers nothing to press");
  await card.screenshot({ path: path.join(ARTIFACTS, "chat-card-cancelled.png") });
  assert.deepEqual(errors, []);
  await page.close();
});

test("alike boosts read as one line with their count in the invoke picker and the scene panel (R12.6, issue 9)", async () => {
  const { page, errors } = await openConnectedPage(browser, pageUrl, { width: 1100, height: 900 });
  const call = (fn, p) => page.evaluate(([f, a]) => settled(game.modules.get("fate-bridge").api.connection.call(f, a)), [fn, p]);
  const start = async (id, dice, rating) => {
    assert.equal((await call("dev.queue_dice", { rolls: [dice] })).ok, true);
    const started = await call("action.start", { request_id: id, type: "overcome", actor_id: "actorZird0000001", skill: "Athletics", opposition: { kind: "passive", rating } });
    assert.equal(started.ok, true, JSON.stringify(started));
    return started.data.action_id;
  };
  // Two excels (R5.1): each leaves Zird a momentum boost.
  for (const n of [1, 2]) {
    const actionId = await start(`browser-boost-${n}`, [1, 1, 1, 1], 0);
    assert.equal((await call("action.pass", { request_id: `browser-boost-pass-${n}`, action_id: actionId, side: "actor" })).ok, true);
  }
  const momentum = (await call("scene.read", { request_id: "browser-boost-scene" })).data.aspects.find((a) => a.name === "Zird the Arcane's momentum");
  assert.ok(momentum.count >= 2, JSON.stringify(momentum));

  const actionId = await start("browser-boost-3", [0, 0, 0, 0], 4);
  const card = page.locator(`#chat-log .chat-message:has([data-action-id="${actionId}"])`);
  await card.locator('[data-fb="invoke"][data-side="actor"]').click();
  const picker = page.locator("dialog.fake-dialog-v2");
  await picker.waitFor();
  const line = picker.locator(".fate-bridge-picker__aspect", { hasText: "momentum" });
  assert.equal(await line.count(), 1, "one line for the alike boosts");
  assert.match((await line.innerText()).replace(/\s+/g, " "), new RegExp(`Zird the Arcane's momentum ×${momentum.count}.*Zird the Arcane ×${momentum.count}`));
  await picker.screenshot({ path: path.join(ARTIFACTS, "invoke-picker-boosts.png") });
  await picker.locator('button[data-action="cancel"]').click();

  await page.evaluate(() => game.modules.get("fate-bridge").api.openScene());
  const panel = page.locator("#fate-bridge-scene-panel");
  const boost = panel.locator(".fate-bridge-aspect", { hasText: "momentum" });
  await boost.first().waitFor();
  assert.equal(await boost.count(), 1);
  assert.match(await boost.innerText(), new RegExp(`×${momentum.count}`));
  await panel.screenshot({ path: path.join(ARTIFACTS, "scene-panel-boosts.png") });
  assert.deepEqual(errors, []);
  await page.close();
});

test("relay mode: a player's page reaches the bridge only through Foundry, rolls from its sheet and plays its card; with no GM, FCO rolls", async () => {
  const sockets = (page) => {
    const urls = [];
    page.on("websocket", (ws) => urls.push(ws.url()));
    return urls;
  };
  const errors = [];
  const gmPage = await browser.newPage({ viewport: { width: 1100, height: 760 }, deviceScaleFactor: 1 });
  gmPage.on("pageerror", (e) => errors.push(`gm: ${e}`));
  const gmSockets = sockets(gmPage);
  await gmPage.goto(relayPage("pageGmUser000001", relayPage.gmKey));
  await gmPage.waitForSelector("#fate-bridge-status[data-state=connected]");
  const gmCall = (fn, payload) => gmPage.evaluate(([f, p]) => settled(game.modules.get("fate-bridge").api.connection.call(f, p)), [fn, payload]);
  assert.equal((await gmCall("world.settings", { trust_player_ratings: true })).ok, true);

  const page = await browser.newPage({ viewport: { width: 1100, height: 760 }, deviceScaleFactor: 1 });
  page.on("pageerror", (e) => errors.push(`player: ${e}`));
  const playerSockets = sockets(page);
  await page.goto(relayPage("pagePlayerAnn001"));
  await page.waitForSelector("body[data-booted=true]");
  await page.waitForSelector("#fate-bridge-status[data-state=connected]");
  assert.equal(await page.evaluate(() => game.user.isGM), false);

  assert.equal((await gmCall("dev.queue_dice", { rolls: [[1, 0, 1, 0]] })).ok, true);
  const sheet = page.locator(".fcoSheet").first();
  await sheet.locator('.fate-bridge-roll[data-skill="Athletics"]').click();
  const dialog = page.locator("dialog.fake-dialog-v2");
  await dialog.waitFor();
  assert.equal(await dialog.locator(".window-title").textContent(), "Zird the Arcane: take an action");
  await dialog.locator('button[data-action="roll"]').click();
  const card = page.locator("#chat-log .fate-bridge-card");
  await card.locator('[data-fb="pass"][data-side="actor"]').waitFor();
  assert.deepEqual(await card.locator(".fate-bridge-side--actor .fate-bridge-die").evaluateAll((ds) => ds.map((d) => Number(d.dataset.face))), [1, 0, 1, 0]);
  await page.screenshot({ path: path.join(ARTIFACTS, "relay-player-card.png") });
  await card.locator('[data-fb="pass"][data-side="actor"]').click();
  await page.locator("#chat-log .fate-bridge-card--state-resolved").waitFor();
  assert.equal(await page.locator("#chat-log .chat-message").count(), 1, "the player's own client wrote its card once");
  await page.screenshot({ path: path.join(ARTIFACTS, "relay-player-resolved.png") });

  // Only the GM's browser dialed the bridge; the player's only Foundry.
  const bridgePort = new URL(bridge.url).port;
  assert.ok(gmSockets.some((u) => u.includes(`:${bridgePort}/`)), JSON.stringify(gmSockets));
  assert.equal(playerSockets.some((u) => u.includes(`:${bridgePort}/`)), false, JSON.stringify(playerSockets));

  // The GM leaves: the player waits for a GM, and a skill click is FCO's own roll, with a notice.
  await gmPage.close();
  await page.waitForSelector("#fate-bridge-status[data-state=offline][data-reason=no_gm]");
  assert.match(await page.locator("#fate-bridge-status").innerText(), /waiting for a GM/);
  await sheet.locator('[name="skill"][data-skillname="Lore"]').click({ position: { x: 8, y: 6 } });
  // FCO rolls once its 300 ms double-click guard has passed.
  await page.waitForFunction(() => window.fakeFoundry.log.fcoNativeRolls.length === 1);
  assert.equal(await page.locator("dialog.fake-dialog-v2").count(), 0);
  const notes = await page.evaluate(() => window.fakeFoundry.log.notifications.map((n) => n.message));
  assert.ok(notes.some((n) => /Lore rolled by fate-core-official, not resolved by Fate Bridge: the bridge is offline\. Waiting for a GM/.test(n)), JSON.stringify(notes));
  await page.screenshot({ path: path.join(ARTIFACTS, "relay-player-no-gm.png") });
  assert.deepEqual(errors, []);
  await page.close();
});

test("an https Foundry page: loopback's ws:// is allowed, another host's ws:// is refused as mixed content and the badge says so", async () => {
  // A self-signed certificate for this test's https page (openssl, as Debian ships it).
  const dir = await tempDataDir();
  await promisify(execFile)("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
    "-keyout", path.join(dir, "key.pem"), "-out", path.join(dir, "cert.pem")]);
  const tlsServer = serveRepo({ key: await readFile(path.join(dir, "key.pem")), cert: await readFile(path.join(dir, "cert.pem")) });
  await new Promise((r) => tlsServer.listen(0, "127.0.0.1", r));
  // "bridge.test" names the same loopback bridge, but to the browser it is another machine.
  const strict = await launchChromium(["--host-resolver-rules=MAP bridge.test 127.0.0.1"]);
  try {
    const context = await strict.newContext({ ignoreHTTPSErrors: true, viewport: { width: 900, height: 500 } });
    const pageFor = async (bridgeUrl) => {
      const page = await context.newPage();
      const q = new URLSearchParams({ bridge: bridgeUrl, world: "browser-world", key: "not-needed" });
      await page.goto(`https://127.0.0.1:${tlsServer.address().port}/tests/js/browser/index.html?${q}`);
      await page.waitForSelector("body[data-booted=true]");
      assert.equal(await page.evaluate(() => location.protocol), "https:");
      return page;
    };
    // Loopback: the websocket opens (the bridge then refuses the made-up key: it was reached).
    const local = await pageFor(bridge.url);
    await local.waitForSelector("#fate-bridge-status[data-state=refused][data-reason=bad_key]");
    // Another host over ws://: Chromium refuses before any connection, the badge names why.
    const remote = await pageFor(`http://bridge.test:${new URL(bridge.url).port}`);
    await remote.waitForSelector("#fate-bridge-status[data-state=offline][data-reason=mixed_content]");
    assert.match(await remote.locator("#fate-bridge-status").innerText(), /This https page may not open ws:\/\/ to http:\/\/bridge\.test/);
    await remote.screenshot({ path: path.join(ARTIFACTS, "status-mixed-content.png") });
  } finally {
    await strict.close();
    await new Promise((r) => tlsServer.close(r));
  }
});

test("Fate Core (R13.8, R13.2): the roll dialog lists the skill's stunts unticked and the card names the one ticked; the absorb picker offers one box, the smallest that fits", async () => {
  const { page, errors, call: api } = await openConnectedPage(browser, corePageUrl);
  // Zird (Lore +4, Scholar: +2 to create an advantage with Lore) rolls 0000 against Fair +2.
  assert.equal((await api("dev.queue_dice", { rolls: [[0, 0, 0, 0]] })).ok, true);
  await page.click('.fate-bridge-roll[data-skill="Lore"]');
  const dialog = page.locator("dialog.fake-dialog-v2:has(.fate-bridge-roll-dialog)");
  await dialog.waitFor();
  const stunts = dialog.locator("[data-stunts]");
  assert.equal(await stunts.isVisible(), false, "an overcome with Lore: no stunt matches");
  await dialog.locator("select[name=type]").selectOption("create_advantage");
  await stunts.waitFor();
  const box = stunts.locator('input[data-stunt][value="Scholar"]');
  assert.equal(await box.isChecked(), false, "none ticked by default under Fate Core");
  await box.check();
  await dialog.locator("select[name=opposition]").selectOption("2");
  await dialog.locator("input[name=aspectName]").fill("Footnotes Everywhere");
  await dialog.screenshot({ path: path.join(ARTIFACTS, "roll-dialog-stunts.png") });
  await dialog.locator('button[data-action="roll"]').click();
  const card = page.locator("#chat-log .fate-bridge-card").last();
  await card.locator('[data-fb="pass"][data-side="actor"]').click();
  await page.locator("#chat-log .fate-bridge-card--state-resolved").waitFor();
  assert.deepEqual(await card.locator(".fate-bridge-side--actor .fate-bridge-chip--stunt").allInnerTexts(), ["Scholar"]);
  assert.match((await card.innerText()).replace(/\s+/g, " "), /Fantastic \+6/, "Lore +4 and Scholar +2");
  await page.locator("#chat-log .chat-message").last().screenshot({ path: path.join(ARTIFACTS, "card-stunts.png") });
  assert.deepEqual(errors, []);
  await page.close();

  // The Core Brawler (Physical Stress 1 2 3 4) takes a hit of 2: one box per hit, the 2-box.
  const fco = await browser.newPage({ viewport: { width: 1100, height: 760 }, deviceScaleFactor: 1 });
  fco.on("pageerror", (e) => errors.push(String(e)));
  await fco.goto(coreFcoPageUrl);
  await fco.waitForSelector("body[data-booted=true]");
  await fco.waitForSelector("#fate-bridge-status[data-state=connected]");
  const call = (fn, arg) => fco.evaluate(([f, a]) => settled(game.modules.get("fate-bridge").api.connection.call(f, a)), [fn, arg]);
  const [brawler, scrapper] = ["fcoCoreBrawler01", "fcoCondensed0001"];
  const started = await fco.evaluate(([a, b]) => settled(game.modules.get("fate-bridge").api.conflict.start({ name: "Harbour brawl", kind: "physical", sides: [{ name: "Core", members: [a] }, { name: "Condensed", members: [b] }] })), [brawler, scrapper]);
  assert.ok(started, "the conflict started");
  assert.equal((await call("dev.queue_dice", { rolls: [[0, 0, 0, 0]] })).ok, true);
  const data = await fco.evaluate(([a, b]) => settled(game.modules.get("fate-bridge").api.start(a, "Fight", { type: "attack", opposition: 1, targetId: b })), [scrapper, brawler]);
  assert.equal(data.card.stress_rule, "one_box");
  const attack = fco.locator("#chat-log .fate-bridge-card").last();
  await attack.locator('[data-fb="pass"][data-side="actor"]').click();
  await attack.locator('[data-fb="absorb"]').click();
  // (The GM may also be offered the ruleset FCO's characters suggest: another dialog.)
  const picker = fco.locator("dialog.fake-dialog-v2:has(.fate-bridge-picker)");
  await picker.waitFor();
  const boxes = picker.locator("input[data-track][data-free]");
  assert.deepEqual(await boxes.evaluateAll((els) => els.map((e) => !e.disabled)), [false, true, false, false], "only the 2-box");
  assert.match(await picker.locator(".fate-bridge-picker__box").nth(3).getAttribute("title"), /smaller box worth 2/);
  assert.equal(await picker.locator("[data-absorb-total]").innerText(), "Absorbs 0 of 2 shifts");
  await boxes.nth(1).check();
  assert.equal(await picker.locator("[data-absorb-total]").innerText(), "Absorbs 2 of 2 shifts");
  await picker.screenshot({ path: path.join(ARTIFACTS, "absorb-picker-core.png") });
  await picker.locator('button[data-action="absorb"]').click();
  await fco.locator("#chat-log .fate-bridge-card--state-resolved").waitFor();
  assert.match((await attack.textContent()).replace(/\s+/g, " "), /Core Brawler marks a box of Physical Stress, absorbing 2 shifts/);
  assert.deepEqual(errors, []);
  await fco.close();
});

test("a Fate Condensed conflict on the scene panel: whose turn, the elective pick of who goes next, full defense, the GM redrawing the zones and concession (R13.5-R13.7, R11.3)", async () => {
  const { page, errors, call } = await openConnectedPage(browser, condensedPageUrl, { width: 1100, height: 900 });
  const [brawler, scrapper] = ["fcoCoreBrawler01", "fcoCondensed0001"];
  // The GM turns Fate Condensed's optional full defense on from the panel (R13.7).
  await page.evaluate(() => game.modules.get("fate-bridge").api.openScene());
  const panel = page.locator("#fate-bridge-scene-panel");
  const option = panel.locator('[data-action="toggleFullDefense"]');
  assert.equal(await option.isChecked(), false, "off until the GM turns it on");
  await option.check();
  await page.waitForFunction(() => game.modules.get("fate-bridge").api.scene.settings.full_defense === true);
  const started = await page.evaluate(([a, b]) => settled(game.modules.get("fate-bridge").api.conflict.start({
    name: "Harbour brawl", kind: "physical", firstId: b, sides: [{ name: "Core", members: [a] }, { name: "Condensed", members: [b] }],
    zones: [{ name: "Quay", adjacent: ["Warehouse"] }, { name: "Warehouse", adjacent: ["Quay"] }], positions: { [a]: "Quay", [b]: "Warehouse" }
  })), [brawler, scrapper]);
  const conflict = started.conflicts.find((c) => c.state === "open");
  assert.deepEqual([conflict.order_method, conflict.current], ["elective", scrapper], "the GM's pick opens");

  await panel.locator(`form[data-form="next-${conflict.id}"]`).waitFor();
  assert.match(await panel.innerText(), /Condensed Scrapper's turn/);
  assert.equal(await panel.locator(`[data-action="conflictFullDefense"][data-character="${scrapper}"]`).count(), 1, "full defense for the one whose turn it is");
  assert.equal(await panel.locator(`[data-action="conflictFullDefense"][data-character="${brawler}"]`).count(), 0);
  await panel.locator(`[data-action="conflictFullDefense"][data-character="${scrapper}"]`).click();
  await panel.locator(".fate-bridge-scene", { hasText: "full defense" }).waitFor();
  // Elective order (R13.5): the scrapper acted and picks who goes next; only the brawler waits.
  const next = panel.locator(`form[data-form="next-${conflict.id}"] [name="nextId"]`);
  assert.deepEqual(await next.locator("option").evaluateAll((os) => os.map((o) => o.value).filter(Boolean)), [brawler]);
  await panel.screenshot({ path: path.join(ARTIFACTS, "scene-panel-conflict-elective.png") });
  await next.selectOption(brawler);
  await panel.locator(`[data-action="conflictNext"][data-conflict="${conflict.id}"]`).click();
  await panel.locator(".fate-bridge-scene", { hasText: "Core Brawler's turn" }).waitFor();

  // R11.3: the GM redraws the zones from the panel. The editor starts from the current map; the
  // warehouse goes and a pier comes first, so the scrapper, who stood in the warehouse, is put
  // on the pier; the brawler stays on the quay.
  const article = panel.locator(`article[data-conflict="${conflict.id}"]`);
  const redraw = article.locator(`details[data-key="zones-${conflict.id}"]`);
  assert.equal(await redraw.getAttribute("open"), null, "closed until the GM opens it");
  await redraw.locator("summary").click();
  const map = redraw.locator('textarea[name="conflictMap"]');
  assert.equal(await map.inputValue(), "Quay: Warehouse\nWarehouse: Quay");
  await map.fill("Pier: Quay\nQuay: Pier");
  await redraw.locator(`[data-action="conflictZones"]`).scrollIntoViewIfNeeded();
  await panel.screenshot({ path: path.join(ARTIFACTS, "scene-panel-conflict-zones.png") });
  await redraw.locator(`[data-action="conflictZones"][data-conflict="${conflict.id}"]`).click();
  await article.locator(".fate-bridge-zone strong", { hasText: "Pier" }).waitFor();
  const zoneRows = await article.locator(".fate-bridge-zone").evaluateAll((rows) => rows.map((r) => [r.querySelector("strong").textContent, r.querySelector(".fate-bridge-zone__who").textContent]));
  assert.deepEqual(zoneRows, [["Pier", "Condensed Scrapper"], ["Quay", "Core Brawler"]]);
  const redrawn = (await call("scene.read")).data.conflicts.find((c) => c.id === conflict.id);
  assert.deepEqual(redrawn.zones.map((z) => [z.name, z.occupants.map((o) => o.id)]), [["Pier", [scrapper]], ["Quay", [brawler]]]);
  assert.equal(await redraw.getAttribute("open"), null, "the editor closes once the bridge took the map");
  assert.equal(await map.inputValue(), "Pier: Quay\nQuay: Pier", "and starts from the new map next time");
  assert.deepEqual(await article.locator(`form[data-form="move-${conflict.id}-${scrapper}"] [name="zone"] option`).evaluateAll((os) => os.map((o) => o.value)), ["Pier", "Quay"]);

  // The brawler concedes (R13.6): one side is left, so the conflict is over at once. (Both
  // are the GM's characters here, so no point is paid: R4.5; the rulesets suite pays a player.)
  const before = (await call("world.state")).data.characters.find((c) => c.id === brawler);
  assert.deepEqual(before.owners, [], "the GM's own character");
  await panel.locator(`[data-action="conflictConcede"][data-conflict="${conflict.id}"][data-character="${brawler}"]`).click();
  await page.waitForFunction((id) => game.modules.get("fate-bridge").api.scene.conflicts.find((c) => c.id === id)?.state === "ended", conflict.id);
  const ended = (await call("scene.read")).data.conflicts.find((c) => c.id === conflict.id);
  assert.deepEqual([ended.state, ended.winner, ended.conceded], ["ended", "s2", [brawler]]);
  assert.equal((await call("world.state")).data.characters.find((c) => c.id === brawler).fate_points, before.fate_points);
  await panel.screenshot({ path: path.join(ARTIFACTS, "scene-panel-conflict-ended.png") });
  assert.deepEqual(errors, []);
  await page.close();
});
