// Headless Chromium, issue 34: the rules a table reaches for, on the GM's page of the fake
// Foundry with the module's real scripts and a real bridge. R13.10: an NPC in the scene not
// taking part invokes for Zird's side from "Invoke for …" (the picker names every holder of a
// free invoke, never an id); R13.11: in a Fate Core conflict the GM lets the goblin step in
// for the ogre, and the card says so; R13.1: under Fate Accelerated the roll dialog offers the
// six approaches only; the sheet's banner and the status line say the cause in words.
// Screenshots go to tests/artifacts.
import assert from "node:assert/strict";
import path from "node:path";
import { after, before, test } from "node:test";
import { ARTIFACTS, openConnectedPage, startStage, writeCardOnPage } from "./support/browser-page.mjs";

const ZIRD = "actorZird0000001";
const OGRE = "actorOgre0000001";
const GOBLIN = "actorGoblin00001";
const ANN = "pagePlayerAnn001";
const GM_USER = "pageGmUser000001";

let stage;
let bridge;
let browser;
let pageUrl;
let relayPage;
let germanPage;

const text = async (locator) => (await locator.innerText()).replace(/\s+/g, " ");

before(async () => {
  stage = await startStage([
    ["browser-teamwork", "Browser Teamwork"],
    ["browser-teamwork-relay", "Browser Teamwork Relay"],
    ["browser-teamwork-de", "Browser Teamwork DE"]
  ], { foundry: true });
  ({ bridge, browser } = stage);
  const [world, relayWorld, germanWorld] = stage.worlds;
  pageUrl = stage.pageUrl(world, { npcs: "goblin" });
  relayPage = (user, key) => `${stage.base}?${new URLSearchParams({ bridge: bridge.url, world: relayWorld.id, foundry: stage.foundryServer.url, user, npcs: "goblin", ...(key ? { key } : {}) })}`;
  relayPage.gmKey = relayWorld.key;
  germanPage = stage.pageUrl(germanWorld, { npcs: "goblin", lang: "de" });
});

after(() => stage?.stop());

/**
 * The GM's page at `url` with Zird, the ogre and the goblin on the viewed scene, once the page has
 * synced them to the bridge. `api(event, payload)` sends an intent that must be accepted and
 * resolves to its answer's data.
 */
async function openScenePage(url) {
  const { page, errors, call } = await openConnectedPage(browser, url, { width: 1100, height: 800 });
  const api = async (event, payload = {}) => {
    const ack = await call(event, payload);
    assert.equal(ack.ok, true, `${event}: ${JSON.stringify(ack.error)}`);
    return ack.data;
  };
  await page.evaluate(([z, o, g]) => window.fakeFoundry.viewScene([z, o, g]), [ZIRD, OGRE, GOBLIN]);
  for (let i = 0; i < 100; i++) {
    const state = await api("world.state");
    if ([ZIRD, OGRE, GOBLIN].every((id) => state.characters.some((c) => c.id === id))) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return { page, errors, api, lastCard: () => page.locator("#chat-log .chat-message").last() };
}

test("R13.10 Invoke for …, R13.11 Step in, R13.1 approaches only, and the causes in words, in Chromium", async () => {
  // Zird, the ogre and the goblin stand on the viewed scene; the GM's page syncs them.
  const { page, errors, api, lastCard } = await openScenePage(pageUrl);
  await api("fate.gm_budget", { fate_points: 3 });
  // A situation aspect whose free invoke the ogre holds (not on Zird's action).
  await api("scene.aspect", { op: "add", name: "Rickety Bridge", free_invokes: { [OGRE]: 1 } });

  // --- R13.10: the GM's goblin invokes for Zird's side --------------------------------------
  await api("dev.queue_dice", { rolls: [[0, 0, 0, 0]] });
  const started = await api("action.start", { type: "overcome", actor_id: ZIRD, skill: "Lore", opposition: { kind: "passive", rating: 6 } });
  const actionId = started.card.action_id;
  const card = lastCard();
  const allyButton = card.locator('[data-fb="invoke-ally"][data-side="actor"]');
  await allyButton.waitFor();
  assert.equal((await allyButton.innerText()).trim(), "Invoke for Zird the Arcane");
  assert.equal(await card.locator('[data-fb="invoke-ally"][data-side="opposition"]').count(), 0, "a passive opposition has nobody to help");
  await card.screenshot({ path: path.join(ARTIFACTS, "teamwork-invoke-for-control.png") });

  await allyButton.click();
  const dialog = page.locator("dialog.fake-dialog-v2").last();
  await dialog.locator('select[name="invoker"]').waitFor();
  const invokers = await dialog.locator('select[name="invoker"] option').allInnerTexts();
  assert.deepEqual(invokers, ["Grumpy Ogre (GM budget: 3)", "Goblin (GM budget: 3)"]);
  const picker = await text(dialog);
  assert.match(picker, /Sneaky Goblin/, "the goblin's own aspect is offered");
  assert.match(picker, /Rickety Bridge .*free: Grumpy Ogre ×1/, "a holder off the card is named");
  assert.doesNotMatch(picker, /actor[A-Z][A-Za-z]*\d/, "no id in the picker");
  await dialog.screenshot({ path: path.join(ARTIFACTS, "teamwork-ally-picker.png") });
  await dialog.locator('select[name="invoker"]').selectOption(GOBLIN);
  await dialog.locator("label", { hasText: "Sneaky Goblin" }).locator('input[name="aspect"]').check();
  await dialog.locator('select[name="payment"]').selectOption("fate_point");
  await dialog.locator('button[data-action="invoke"]').click();
  await page.waitForFunction(() => /Goblin invoked Sneaky Goblin for \+2/.test(document.querySelector("#chat-log .chat-message:last-child")?.innerText ?? ""));
  assert.match(await text(card), /Goblin invoked Sneaky Goblin for \+2 \(fate point\)/);
  assert.equal((await api("world.state")).gm_fate_points, 2, "the GM's budget paid for its NPC");
  await card.screenshot({ path: path.join(ARTIFACTS, "teamwork-ally-invoked.png") });
  await api("action.cancel", { action_id: actionId });

  // --- R13.11: in a Fate Core conflict, the goblin steps in for the ogre ---------------------
  await api("world.ruleset", { ruleset: "fate-core" });
  await api("conflict.start", { name: "Bridge Brawl", kind: "physical", sides: [{ name: "Zird", members: [ZIRD] }, { name: "Monsters", members: [OGRE, GOBLIN] }] });
  const attack = await api("action.start", { type: "attack", actor_id: ZIRD, skill: "Will", opposition: { kind: "active", opposer_id: OGRE } });
  const attackCard = lastCard();
  const stepIn = attackCard.locator('[data-fb="interpose"]');
  await stepIn.waitFor();
  assert.match(await text(attackCard), /Defend instead of Grumpy Ogre: Goblin/);
  await attackCard.screenshot({ path: path.join(ARTIFACTS, "teamwork-step-in-control.png") });
  await stepIn.click();
  await page.waitForFunction(() => /defending for Grumpy Ogre/.test(document.querySelector("#chat-log .chat-message:last-child")?.innerText ?? ""));
  const stepped = await text(attackCard);
  assert.match(stepped, /vs Goblin, defending for Grumpy Ogre/);
  assert.match(stepped, /Oppose as Goblin/);
  // The ogre may take its own defense back.
  assert.deepEqual(await attackCard.locator('select[name="defender"] option').allInnerTexts(), ["Grumpy Ogre"]);
  await attackCard.screenshot({ path: path.join(ARTIFACTS, "teamwork-stepped-in.png") });
  await api("action.cancel", { action_id: attack.card.action_id });
  const scene = await api("scene.read");
  await api("conflict.end", { conflict_id: scene.conflicts.find((c) => c.state === "open").id });

  // --- R13.1: Fate Accelerated's roll dialog offers the six approaches only ------------------
  await api("world.ruleset", { ruleset: "fate-accelerated" });
  await page.waitForFunction(() => game.modules.get("fate-bridge").api !== undefined);
  await page.evaluate((z) => {
    // No skill and no opposition: the action dialog asks.
    window.asked = game.modules.get("fate-bridge").api.start(z);
  }, ZIRD);
  const rollDialog = page.locator("dialog.fake-dialog-v2").last();
  await rollDialog.locator('select[name="skill"]').waitFor();
  const skills = await rollDialog.locator('select[name="skill"] option').evaluateAll((os) => os.map((o) => o.value).sort());
  assert.deepEqual(skills, ["Careful", "Clever", "Flashy", "Forceful", "Quick", "Sneaky"]);
  await rollDialog.screenshot({ path: path.join(ARTIFACTS, "teamwork-accelerated-dialog.png") });
  await rollDialog.locator('button[data-action="cancel"]').click();

  // --- the causes in words: the status line and the sheet's banner ---------------------------
  await page.evaluate(() => game.modules.get("fate-bridge").api.connection.disconnect());
  await page.waitForSelector("#fate-bridge-status[data-state=offline]");
  const badge = await text(page.locator("#fate-bridge-status"));
  assert.doesNotMatch(badge, /websocket|transport|io client/i);
  const banner = page.locator(".fate-bridge-sheet-status").first();
  await banner.waitFor();
  const bannerText = await text(banner);
  assert.match(bannerText, /^Fate Bridge is offline: skill clicks roll with fate-core-official's own dice until it is back\. \S/);
  assert.doesNotMatch(bannerText, /\)\)|\(\(/);
  await banner.screenshot({ path: path.join(ARTIFACTS, "teamwork-sheet-banner.png") });
  assert.deepEqual(errors, []);
  await page.close();
});

test("R13.10 on a player's page (relay mode): Ann's Zird, in the scene and not taking part, invokes for the ogre's side from Invoke for …", async () => {
  const errors = [];
  const gmPage = await browser.newPage({ viewport: { width: 1100, height: 800 }, deviceScaleFactor: 1 });
  gmPage.on("pageerror", (e) => errors.push(`gm: ${e}`));
  await gmPage.goto(relayPage(GM_USER, relayPage.gmKey));
  await gmPage.waitForSelector("#fate-bridge-status[data-state=connected]");
  const gmCall = async (event, payload = {}) => {
    const ack = await gmPage.evaluate(([e, p]) => settled(game.modules.get("fate-bridge").api.connection.call(e, p)), [event, payload]);
    assert.equal(ack.ok, true, `${event}: ${JSON.stringify(ack.error)}`);
    return ack.data;
  };
  const page = await browser.newPage({ viewport: { width: 1100, height: 800 }, deviceScaleFactor: 1 });
  page.on("pageerror", (e) => errors.push(`player: ${e}`));
  await page.goto(relayPage(ANN));
  await page.waitForSelector("body[data-booted=true]");
  await page.waitForSelector("#fate-bridge-status[data-state=connected]");
  for (const p of [gmPage, page]) await p.evaluate(([z, o, g]) => window.fakeFoundry.viewScene([z, o, g]), [ZIRD, OGRE, GOBLIN]);
  for (let i = 0; i < 100; i++) {
    const state = await gmCall("world.state");
    if ([ZIRD, OGRE, GOBLIN].every((id) => state.characters.some((c) => c.id === id))) break;
    await new Promise((r) => setTimeout(r, 100));
  }

  // The GM's ogre overcomes the goblin's opposition; its card, as the GM's client wrote it,
  // is written on Ann's page too (on one Foundry server the message would reach her).
  await gmCall("dev.queue_dice", { rolls: [[0, 0, 0, 0], [0, 0, 0, 0]] });
  const started = await gmCall("action.start", { type: "overcome", actor_id: OGRE, skill: "Fight", opposition: { kind: "active", opposer_id: GOBLIN } });
  let opened = started.card;
  if (opened.state === "awaiting_opposition") opened = (await gmCall("action.oppose", { action_id: opened.action_id, skill: "Fight" })).card;
  assert.equal(opened.state, "invoking");
  const flags = await gmPage.evaluate(() => game.messages.contents.at(-1).flags["fate-bridge"]);
  await writeCardOnPage(page, { seq: flags.seq, world: "w", writer: ANN, op: "create", card_id: flags.cardId, card: flags.card });
  const card = page.locator("#chat-log .chat-message").last();
  await card.locator('[data-fb="invoke-ally"]').first().waitFor();
  const offered = await card.locator('[data-fb="invoke-ally"]').allInnerTexts();
  assert.deepEqual(offered.map((t) => t.trim()), ["Invoke for Grumpy Ogre", "Invoke for Goblin"]);
  assert.equal(await card.locator('[data-fb="invoke"]').count(), 0, "Ann controls neither side");
  await card.screenshot({ path: path.join(ARTIFACTS, "teamwork-player-invoke-for.png") });

  await card.locator('[data-fb="invoke-ally"][data-side="actor"]').click();
  const dialog = page.locator("dialog.fake-dialog-v2").last();
  await dialog.locator(".fate-bridge-picker__who").waitFor();
  assert.equal((await dialog.locator(".fate-bridge-picker__who").innerText()).trim(), "Zird the Arcane (3 fate points)");
  assert.match(await text(dialog), /Wizard of the Old School/);
  await dialog.screenshot({ path: path.join(ARTIFACTS, "teamwork-player-picker.png") });
  await dialog.locator("label", { hasText: "Wizard of the Old School" }).locator('input[name="aspect"]').check();
  await dialog.locator('select[name="payment"]').selectOption("fate_point");
  await dialog.locator('button[data-action="invoke"]').click();
  let zird;
  for (let i = 0; i < 100; i++) {
    zird = (await gmCall("world.state")).characters.find((c) => c.id === ZIRD);
    if (zird.fate_points === 2) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.equal(zird.fate_points, 2, "Zird paid his own point");
  const gmCard = gmPage.locator("#chat-log .chat-message").last();
  await gmPage.waitForFunction(() => /Zird the Arcane invoked Wizard of the Old School for \+2/.test(document.querySelector("#chat-log .chat-message:last-child")?.innerText ?? ""));
  await gmCard.screenshot({ path: path.join(ARTIFACTS, "teamwork-player-invoked-gm-card.png") });
  assert.deepEqual(errors, []);
  await page.close();
  await gmPage.close();
});

test("R13.10 and R13.11 in German: Invoke for and Step in worded from de.json, the card says who stepped in for whom, no English", async () => {
  const { page, errors, api, lastCard } = await openScenePage(germanPage);
  // R13.10: the GM's NPCs in the scene may invoke for Zird's side.
  const started = await api("action.start", { type: "overcome", actor_id: ZIRD, skill: "Lore", opposition: { kind: "passive", rating: 6 } });
  const allyButton = lastCard().locator('[data-fb="invoke-ally"][data-side="actor"]');
  await allyButton.waitFor();
  assert.equal((await allyButton.innerText()).trim(), "Für Zird the Arcane aufrufen");
  await lastCard().screenshot({ path: path.join(ARTIFACTS, "teamwork-de-invoke-for-control.png") });
  await api("action.cancel", { action_id: started.card.action_id });
  // R13.11: in a Fate Core conflict the goblin steps in for the ogre.
  await api("world.ruleset", { ruleset: "fate-core" });
  await api("conflict.start", { name: "Brückenkampf", kind: "physical", sides: [{ name: "Zird", members: [ZIRD] }, { name: "Monster", members: [OGRE, GOBLIN] }] });
  await api("action.start", { type: "attack", actor_id: ZIRD, skill: "Will", opposition: { kind: "active", opposer_id: OGRE } });
  const attackCard = lastCard();
  const stepIn = attackCard.locator('[data-fb="interpose"]');
  await stepIn.waitFor();
  assert.match(await text(attackCard), /Statt Grumpy Ogre verteidigen: Goblin/);
  assert.equal((await stepIn.innerText()).trim(), "Einspringen");
  await stepIn.click();
  await page.waitForFunction(() => /verteidigt an Stelle von Grumpy Ogre/.test(document.querySelector("#chat-log .chat-message:last-child")?.innerText ?? ""));
  const stepped = await text(attackCard);
  assert.match(stepped, /gegen Goblin, verteidigt an Stelle von Grumpy Ogre/);
  assert.doesNotMatch(stepped, /Invoke for|Defend instead|defending for|Step in|FATEBRIDGE\./);
  await attackCard.screenshot({ path: path.join(ARTIFACTS, "teamwork-de-stepped-in.png") });
  assert.deepEqual(errors, []);
  await page.close();
});
