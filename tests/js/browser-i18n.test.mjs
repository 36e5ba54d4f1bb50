// Headless Chromium, in the languages fate-core-official ships (issue 34): a Brazilian and a
// German client roll through the dialog, play the card to its end and open the scene panel;
// every word comes from the language file, none is English, and the screenshots are kept in
// tests/artifacts to be looked at.
import assert from "node:assert/strict";
import path from "node:path";
import { after, before, test } from "node:test";
import { ARTIFACTS, openConnectedPage, startStage } from "./support/browser-page.mjs";

let stage;
let browser;
const pages = {};

// English words the module used to show (or the bridge used to send) that must not appear.
const ENGLISH = /\b(Overcome|Create an Advantage|Succeed with Style|Superb|Great|Average|Mediocre|Invoke|Pass|Roll|Opposition|Situation aspects|shifts|fate point|so far|Resolved|Cancel)\b/;

const LANGUAGES = {
  "pt-BR": { title: "Zird the Arcane: realizar uma ação", action: "Criar Vantagem", outcome: "Sucesso com Estilo", ladder: "Épico", invoked: /invocou Wizard of the Old School para \+2 \(ponto de destino\)/, placed: /Aspecto criado: Ogre Off Balance, 2 invocações gratuitas para Zird the Arcane/, scene: "Aspectos de situação" },
  de: { title: "Zird the Arcane: eine Aktion ausführen", action: "Vorteil erschaffen", outcome: "Erfolg mit Stil", ladder: "Episch", invoked: /hat Wizard of the Old School für \+2 aufgerufen \(Schicksalspunkt\)/, placed: /Aspekt platziert: Ogre Off Balance, 2 freie Aufrufe für Zird the Arcane/, scene: "Situationsaspekte" }
};

before(async () => {
  stage = await startStage(Object.keys(LANGUAGES).map((lang) => [`browser-${lang.toLowerCase()}`, `Browser ${lang}`, "fate-core"]));
  ({ browser } = stage);
  Object.keys(LANGUAGES).forEach((lang, i) => {
    pages[lang] = stage.pageUrl(stage.worlds[i], { lang });
  });
});

after(() => stage?.stop());

for (const [lang, words] of Object.entries(LANGUAGES)) {
  test(`${lang}: the roll dialog, an action card played to its end and the scene panel speak ${lang}`, async () => {
    const { page, errors, call } = await openConnectedPage(browser, pages[lang], { width: 1260, height: 1000 });
    assert.equal(await page.evaluate(() => game.i18n.lang), lang);
    // The ogre opposes (Fight +3, − − 0 0: Average +1), Zird rolls (Athletics +3, + 0 + 0: Superb +5).
    assert.equal((await call("dev.queue_dice", { rolls: [[-1, -1, 0, 0], [1, 0, 1, 0]] })).ok, true);

    await page.click('.fate-bridge-roll[data-skill="Athletics"]');
    const dialog = page.locator("dialog.fake-dialog-v2");
    await dialog.waitFor();
    assert.equal(await dialog.locator(".window-title").textContent(), words.title);
    await dialog.locator("select[name=type]").selectOption("create_advantage");
    assert.equal((await dialog.locator("select[name=type] option:checked").textContent()).trim(), words.action);
    await dialog.locator("select[name=opposition]").selectOption("actor:actorOgre0000001");
    await dialog.locator("select[name=target]").selectOption("actorOgre0000001");
    await dialog.locator("input[name=aspectName]").fill("Ogre Off Balance");
    await dialog.screenshot({ path: path.join(ARTIFACTS, `i18n-${lang}-roll-dialog.png`) });
    const dialogText = (await dialog.innerText()).replace(/\s+/g, " ");
    assert.doesNotMatch(dialogText, ENGLISH, dialogText);
    assert.doesNotMatch(dialogText, /FATEBRIDGE\./, "no key shows in place of a word");
    await dialog.locator('button[data-action="roll"]').click();

    const card = page.locator("#chat-log .fate-bridge-card");
    await card.locator('[data-fb="oppose"]').waitFor();
    await card.locator('select[name="skill"]').selectOption("Fight");
    await card.locator('[data-fb="oppose"]').click();
    await card.locator('[data-fb="invoke"][data-side="actor"]').waitFor();
    await page.locator("#chat-log .chat-message").screenshot({ path: path.join(ARTIFACTS, `i18n-${lang}-card-invoking.png`) });
    await card.locator('[data-fb="invoke"][data-side="actor"]').click();
    const picker = page.locator("dialog.fake-dialog-v2");
    await picker.waitFor();
    await picker.locator("select[name=invoker]").selectOption("actorZird0000001");
    await picker.locator(".fate-bridge-picker__aspect", { hasText: "Wizard of the Old School" }).locator("input").check();
    await picker.screenshot({ path: path.join(ARTIFACTS, `i18n-${lang}-invoke-picker.png`) });
    assert.doesNotMatch((await picker.innerText()).replace(/\s+/g, " "), /FATEBRIDGE\./);
    await picker.locator('button[data-action="invoke"]').click();
    await card.locator(".fate-bridge-card__invoke").waitFor();
    await card.locator('[data-fb="pass"][data-side="actor"]').click();
    await card.locator('[data-fb="pass"][data-side="opposition"]').click();
    await card.locator('[data-fb="choose"][data-choice="aspect"]').click();
    await page.locator("#chat-log .fate-bridge-card--state-resolved").waitFor();
    await page.locator("#chat-log .chat-message").screenshot({ path: path.join(ARTIFACTS, `i18n-${lang}-card.png`) });
    // The text as written (the card's CSS shows the action's name in capitals).
    const text = (await card.textContent()).replace(/\s+/g, " ");
    assert.ok(text.includes(words.action), text);
    assert.ok(text.includes(words.outcome), text);
    assert.ok(text.includes(`${words.ladder} +7`), text);
    assert.match(text, words.invoked);
    assert.match(text, words.placed);
    assert.doesNotMatch(text, ENGLISH, text);
    assert.doesNotMatch(text, /FATEBRIDGE\./);

    await page.evaluate(() => game.modules.get("fate-bridge").api.openScene());
    const panel = page.locator("#fate-bridge-scene-panel");
    await panel.locator(".fate-bridge-aspect", { hasText: "Ogre Off Balance" }).waitFor();
    await panel.screenshot({ path: path.join(ARTIFACTS, `i18n-${lang}-scene-panel.png`) });
    const panelText = (await panel.textContent()).replace(/\s+/g, " ");
    assert.ok(panelText.includes(words.scene), panelText);
    assert.doesNotMatch(panelText, /FATEBRIDGE\./);
    // Nothing wider than the panel: a longer language still fits.
    const overflow = await panel.evaluate((el) => [...el.querySelectorAll("*")].filter((c) => c.scrollWidth > c.clientWidth + 1 && getComputedStyle(c).overflowX === "visible" && c.clientWidth > 0).map((c) => c.className).slice(0, 5));
    assert.deepEqual(overflow, []);
    assert.deepEqual(errors, []);
    await page.close();
  });
}
