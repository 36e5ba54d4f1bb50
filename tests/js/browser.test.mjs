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

test("a GM rolls Athletics from the sheet in a real browser and the card appears in chat", async () => {
  const page = await browser.newPage({ viewport: { width: 1100, height: 720 }, deviceScaleFactor: 1 });
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(pageUrl);
  await page.waitForSelector("body[data-booted=true]");
  await page.waitForSelector("#fate-bridge-status[data-state=connected]");

  const queued = await page.evaluate(() => game.modules.get("fate-bridge").api.connection.call("dev.queue_dice", { rolls: [[1, 1, 0, 0]] }));
  assert.equal(queued.ok, true, JSON.stringify(queued));

  const buttons = page.locator(".mfate-skills-list__skill-name .fate-bridge-roll");
  assert.equal(await buttons.count(), 4);
  await page.click('.fate-bridge-roll[data-skill="Athletics"]');
  const dialog = page.locator("dialog.fake-dialog-v2");
  await dialog.waitFor();
  assert.equal(await dialog.locator(".window-title").textContent(), "Overcome with Athletics (+3)");
  assert.equal(await dialog.locator("select[name=opposition]").inputValue(), "2");
  await dialog.locator("select[name=opposition]").selectOption("4");
  await dialog.locator("input[name=description]").fill("Leap across the collapsing bridge");
  await page.screenshot({ path: path.join(ARTIFACTS, "roll-dialog.png") });
  await dialog.locator('button[data-action="roll"]').click();

  const card = page.locator("#chat-log .fate-bridge-card");
  await card.waitFor();
  assert.equal(await page.locator("#chat-log .chat-message").count(), 1);
  const text = (await card.innerText()).replace(/\s+/g, " ");
  assert.match(text, /Zird the Arcane/);
  assert.match(text, /Athletics Good \(\+3\)/);
  assert.match(text, /Superb \+5/);
  assert.match(text, /Great \+4/);
  assert.match(text, /Succeed/);
  const faces = await card.locator(".fate-bridge-die").evaluateAll((els) => els.map((e) => Number(e.dataset.face)));
  assert.deepEqual(faces, [1, 1, 0, 0]);
  assert.equal(await card.locator(".fate-bridge-card__cell--shifts dd").innerText(), "+1");
  // The outcome banner is coloured for a success, distinct from the page background.
  const banner = await card.locator(".fate-bridge-card__outcome").evaluate((el) => getComputedStyle(el).backgroundColor);
  assert.notEqual(banner, "rgba(0, 0, 0, 0)");
  const roll = await page.evaluate(() => {
    const m = game.messages.contents[0];
    return { total: m.rolls[0].total, dice: m.rolls[0].dice[0].results.map((r) => r.result), author: m.author };
  });
  assert.deepEqual(roll, { total: 5, dice: [1, 1, 0, 0], author: "pageGmUser000001" });

  await page.screenshot({ path: path.join(ARTIFACTS, "chat-card-dark.png") });
  await page.locator("#chat-log .chat-message").screenshot({ path: path.join(ARTIFACTS, "chat-card-dark-closeup.png") });
  await page.evaluate(() => {
    document.body.classList.replace("theme-dark", "theme-light");
    document.getElementById("sidebar").classList.replace("theme-dark", "theme-light");
  });
  await page.locator("#chat-log .chat-message").screenshot({ path: path.join(ARTIFACTS, "chat-card-light-closeup.png") });
  assert.deepEqual(errors, []);
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
