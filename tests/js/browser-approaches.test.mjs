// Headless Chromium, R13.1 in German: on the GM's page of the fake Foundry (in German, with the
// module's real scripts and a real bridge playing Fate Accelerated), Zird's sheet names its
// approaches as fate-core-official's German translation does (its de.json, which FCO copies onto
// a world's skills). The roll dialog offers the six approaches, in German, and not "Athletik";
// the roll on "Sorgfältig" is the bridge's Careful, and its card names it in German.
// Screenshots go to tests/artifacts.
import assert from "node:assert/strict";
import path from "node:path";
import { after, before, test } from "node:test";
import { ARTIFACTS, openConnectedPage, startStage } from "./support/browser-page.mjs";

const ZIRD = "actorZird0000001";

let stage;
let browser;
let pageUrl;

before(async () => {
  stage = await startStage([["browser-approaches-de", "Browser Approaches DE", "fate-accelerated"]]);
  ({ browser } = stage);
  pageUrl = stage.pageUrl(stage.worlds[0], { lang: "de" });
});

after(() => stage?.stop());

// R13.1
test("R13.1 in German: the roll dialog offers FCO's German approaches, the roll on Sorgfältig is Careful, Athletik is not offered", async () => {
  const { page, errors } = await openConnectedPage(browser, pageUrl, { width: 1100, height: 800 });
  // FCO's German translation (game.system.lang), and Zird's skills as FCO writes them from it.
  const german = await page.evaluate(async (z) => {
    const systemLang = await (await fetch("/tests/js/fixtures/fco-lang-de.json")).json();
    game.system.lang = systemLang;
    const names = Object.values(systemLang.FateAcceleratedDefaultSkills).map((s) => s.name);
    const ranks = [3, 2, 1, 1, 2, 0];
    const skills = Object.fromEntries(names.map((name, i) => [name, { name, rank: ranks[i] }]));
    skills.Athletik = { name: "Athletik", rank: 4 };
    await game.actors.get(z).update({ "system.skills": skills });
    return names;
  }, ZIRD);
  assert.equal(await page.evaluate((z) => Object.keys(game.actors.get(z).system.skills).includes("Athletik"), ZIRD), true);
  // As a German macro or FCO's sheet names it; the dialog's answer is awaited in the page.
  await page.evaluate((z) => { window.asked = game.modules.get("fate-bridge").api.start(z, "Sorgfältig"); }, ZIRD);
  const dialog = page.locator("dialog.fake-dialog-v2").last();
  await dialog.locator('select[name="skill"]').waitFor();
  const options = await dialog.locator('select[name="skill"] option').evaluateAll((os) => os.map((o) => [o.value, o.textContent.trim(), o.selected]));
  assert.deepEqual(options.map(([v]) => v).sort(), ["Careful", "Clever", "Flashy", "Forceful", "Quick", "Sneaky"]);
  for (const [value, label] of options) {
    const i = ["Careful", "Clever", "Flashy", "Forceful", "Quick", "Sneaky"].indexOf(value);
    assert.ok(label.startsWith(`${german[i]} `), `${value}: ${label}`);
  }
  assert.deepEqual(options.filter(([, , selected]) => selected).map(([v]) => v), ["Careful"]);
  assert.doesNotMatch(await dialog.innerText(), /Athletik|Careful|Sneaky\b/);
  await dialog.screenshot({ path: path.join(ARTIFACTS, "approaches-de-dialog.png") });

  await page.evaluate(() => game.modules.get("fate-bridge").api.connection.call("dev.queue_dice", { rolls: [[1, 1, 0, 0]] }));
  await dialog.locator('select[name="opposition"]').selectOption("2");
  await dialog.locator('button[data-action="roll"]').click();
  await page.waitForFunction(() => /Sorgfältig/.test(document.querySelector("#chat-log .chat-message:last-child")?.innerText ?? ""));
  const card = page.locator("#chat-log .chat-message").last();
  const cardText = (await card.innerText()).replace(/\s+/g, " ");
  assert.match(cardText, /Sorgfältig/);
  assert.doesNotMatch(cardText, /Careful|FATEBRIDGE\./);
  assert.equal(await page.evaluate(() => game.messages.contents.at(-1).flags["fate-bridge"].card.actor.skill), "Careful");
  await card.screenshot({ path: path.join(ARTIFACTS, "approaches-de-card.png") });
  assert.deepEqual(errors, []);
  await page.close();
});
