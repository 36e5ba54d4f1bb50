// Headless Chromium: the fake Foundry page loads the module's real scripts, connects to a real
// bridge, and a user clicks the roll control, answers the dialog and sees the card in chat.
import assert from "node:assert/strict";
import { createReadStream } from "node:fs";
import { mkdir, stat } from "node:fs/promises";
import http from "node:http";
import path from "node:path";
import { after, before, test } from "node:test";
import { chromium } from "playwright-core";
import { addWorld, freePort, startBridge, tempDataDir } from "./support/bridge-process.mjs";
import { REPO } from "./support/node-foundry.mjs";

const ARTIFACTS = path.join(REPO, "tests/artifacts");
const TYPES = { ".html": "text/html", ".mjs": "text/javascript", ".js": "text/javascript", ".css": "text/css", ".json": "application/json", ".hbs": "text/plain" };

const VENDOR_URL = "/foundry-module/scripts/vendor/socket.io.esm.min.js";
const VENDOR_FILE = path.join(REPO, "node_modules/socket.io-client/dist/socket.io.esm.min.js");

let bridge;
let server;
let browser;
let pageUrl;

function serveRepo() {
  return http.createServer(async (req, res) => {
    const rel = decodeURIComponent(new URL(req.url, "http://x").pathname);
    // As in the zip the bridge builds: the socket.io-client ESM build as the module's vendor file.
    const file = rel === VENDOR_URL ? VENDOR_FILE : path.join(REPO, rel);
    if (!file.startsWith(REPO + path.sep) || rel.includes("..")) return res.writeHead(403).end();
    try {
      if (!(await stat(file)).isFile()) throw new Error("not a file");
      res.writeHead(200, { "content-type": TYPES[path.extname(file)] ?? "application/octet-stream" });
      createReadStream(file).pipe(res);
    } catch {
      res.writeHead(404).end();
    }
  });
}

before(async () => {
  await mkdir(ARTIFACTS, { recursive: true });
  const dataDir = await tempDataDir();
  const port = await freePort();
  const world = await addWorld(dataDir, "browser-world", "Browser World");
  bridge = await startBridge({ dataDir, port });
  server = serveRepo();
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const q = new URLSearchParams({ bridge: bridge.url, world: world.id, key: world.key });
  pageUrl = `http://127.0.0.1:${server.address().port}/tests/js/browser/index.html?${q}`;
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-quic", "--no-first-run", "--disable-sync"]
  });
});

after(async () => {
  await browser?.close();
  await new Promise((r) => (server ? server.close(r) : r()));
  await bridge?.stop();
});

test("a GM creates an advantage against an active opposer from the sheet, invokes from the card, and the finished card reads well", async () => {
  const page = await browser.newPage({ viewport: { width: 1100, height: 760 }, deviceScaleFactor: 1 });
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(pageUrl);
  await page.waitForSelector("body[data-booted=true]");
  await page.waitForSelector("#fate-bridge-status[data-state=connected]");
  const api = (fn, ...args) => page.evaluate(([f, a]) => game.modules.get("fate-bridge").api.connection.call(f, a[0]), [fn, args]);
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
