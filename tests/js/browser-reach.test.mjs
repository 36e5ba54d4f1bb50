// Headless Chromium (156, which applies Local Network Access to WebSockets and fetch): the fake
// Foundry page served from this computer, from this machine's non-loopback address (an http page
// on the network, as a self-hosted Foundry is), and over https; each opens "Check connection"
// from the module's settings menu and the status badge says what the module found. Screenshots
// go to tests/artifacts (not committed).
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdir, readFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { after, before, test } from "node:test";
import { addWorld, freePort, startBridge, tempDataDir } from "./support/bridge-process.mjs";
import { ARTIFACTS, launchChromium, serveRepo } from "./support/browser-page.mjs";
import { startFoundryServer } from "./support/foundry-server.mjs";

let bridge;
let server;
let tlsServer;
let browser;
let world;
let foundryServer;

/** This machine's first IPv4 address that is not loopback (an http Foundry "on the network"). */
function networkAddress() {
  for (const list of Object.values(os.networkInterfaces())) {
    for (const a of list ?? []) if (a.family === "IPv4" && !a.internal) return a.address;
  }
  return null;
}

before(async () => {
  await mkdir(ARTIFACTS, { recursive: true });
  const dataDir = await tempDataDir();
  world = await addWorld(dataDir, "browser-reach", "Browser Reach");
  bridge = await startBridge({ dataDir, port: await freePort() });
  server = serveRepo();
  await new Promise((r) => server.listen(0, "0.0.0.0", r));
  const dir = await tempDataDir();
  await promisify(execFile)("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
    "-keyout", path.join(dir, "key.pem"), "-out", path.join(dir, "cert.pem")]);
  tlsServer = serveRepo({ key: await readFile(path.join(dir, "key.pem")), cert: await readFile(path.join(dir, "cert.pem")) });
  await new Promise((r) => tlsServer.listen(0, "127.0.0.1", r));
  foundryServer = await startFoundryServer();
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await new Promise((r) => (server ? server.close(r) : r()));
  await new Promise((r) => (tlsServer ? tlsServer.close(r) : r()));
  await foundryServer?.close();
  await bridge?.stop();
});

/**
 * The user's yes to Chromium's Local Network Access prompt for `origin`, through the DevTools
 * protocol (Browser.setPermission; the permission is "local-network-access", or
 * "loopback-network" in newer builds: both are set where known).
 */
async function allowLocalNetwork(page, origin) {
  const { targetInfo } = await (await page.context().newCDPSession(page)).send("Target.getTargetInfo");
  const session = await page.context().browser().newBrowserCDPSession();
  for (const name of ["local-network-access", "loopback-network", "local-network"]) {
    await session.send("Browser.setPermission", { permission: { name }, setting: "granted", origin, browserContextId: targetInfo.browserContextId }).catch(() => {});
  }
}

/** Open the page as the GM, wait for the badge to settle, open Check connection; returns its rows. */
async function check(origin, bridgeUrl, shot, { key = world.key, settle = "connected", ignoreHTTPSErrors = false, browser: chromium = browser, grant = false, query = {}, keep = false } = {}) {
  const context = await chromium.newContext({ ignoreHTTPSErrors, viewport: { width: 1000, height: 640 }, deviceScaleFactor: 1 });
  const page = await context.newPage();
  if (grant) await allowLocalNetwork(page, origin);
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  const q = new URLSearchParams({ bridge: bridgeUrl, world: world.id, key, ...query });
  await page.goto(`${origin}/tests/js/browser/index.html?${q}`);
  await page.waitForSelector("body[data-booted=true]");
  await page.waitForSelector(`#fate-bridge-status[data-state=${settle}]`, { timeout: 20000 });
  await page.evaluate(() => settled(window.fakeFoundry.openMenu("fate-bridge.checkConnection")));
  await page.waitForSelector("#fate-bridge-check .fate-bridge-check__row");
  const rows = await page.$$eval("#fate-bridge-check .fate-bridge-check__row", (els) => Object.fromEntries(els.map((el) => [el.dataset.check, { result: el.dataset.result, text: el.querySelector(".fate-bridge-check__text").textContent.trim() }])));
  const badge = await page.locator("#fate-bridge-status").innerText();
  const file = path.join(ARTIFACTS, shot);
  await page.locator("#fate-bridge-check").screenshot({ path: file });
  await page.screenshot({ path: file.replace(/\.png$/, "-page.png") });
  assert.deepEqual(errors, []);
  if (!keep) await context.close();
  return { rows, badge, file, page, context };
}

test("a Foundry on this computer, a bridge on this computer: every check passes", async () => {
  const { rows } = await check(`http://127.0.0.1:${server.address().port}`, bridge.url, "check-loopback.png");
  assert.deepEqual(Object.keys(rows), ["Url", "Path", "Permission", "Health", "Socket", "Protocol", "Key", "Relay"]);
  assert.match(rows.Path.text, /both on this computer/);
  for (const id of ["Url", "Path", "Health", "Socket", "Protocol", "Key", "Relay"]) assert.equal(rows[id].result, "ok", `${id}: ${rows[id].text}`);
  assert.match(rows.Protocol.text, /^Bridge \d+\.\d+\.\d+/);
});

test("the check in the user's language (German, Portuguese (Brazil)): every row worded from its file, no English, no key", async () => {
  for (const [lang, both] of [["de", /beide auf diesem Rechner/], ["pt-BR", /ambas neste computador/]]) {
    const { rows } = await check(`http://127.0.0.1:${server.address().port}`, bridge.url, `check-loopback-${lang}.png`, { query: { lang } });
    assert.match(rows.Path.text, both);
    for (const { text } of Object.values(rows)) assert.doesNotMatch(text, /FATEBRIDGE\.|both on this computer|answered\.|Accepted\./);
    assert.match(rows.Protocol.text, lang === "de" ? /^Bridge \d+\.\d+\.\d+, Protokoll/ : /^Ponte \d+\.\d+\.\d+, protocolo/);
  }
});

test("an http Foundry on the network with a loopback Bridge URL: Chromium blocks it, and the badge and the check say why and what to do", async () => {
  // This machine's network address; without one, a name Chromium is told is a public address.
  const address = networkAddress();
  const port = server.address().port;
  const host = address ?? "foundry-lan.test";
  const chromium = address ? browser : await launchChromium([`--host-resolver-rules=MAP ${host} 127.0.0.1`, `--ip-address-space-overrides=127.0.0.1:${port}=public`]);
  const origin = `http://${host}:${port}`;
  try {
    const { rows, badge } = await check(origin, bridge.url, "check-http-lan-loopback.png", { settle: "offline", browser: chromium });
    const expected = `This Foundry page is ${origin}; Chrome 147+ blocks it from reaching your computer's bridge (${bridge.url}). Run the bridge on the Foundry server (${host}) and set the Bridge URL to it, or serve Foundry over https.`;
    assert.ok(badge.includes(expected), badge);
    assert.equal(rows.Path.result, "fail");
    assert.equal(rows.Path.text, expected);
    assert.equal(rows.Permission.result, "fail");
    assert.equal(rows.Health.result, "fail", "the browser blocked /healthz as well");
    assert.equal(rows.Socket.result, "fail");
    assert.doesNotMatch(JSON.stringify(rows) + badge, /Firefox allows/);
  } finally {
    if (chromium !== browser) await chromium.close();
  }
});

test("an https Foundry elsewhere (The Forge, a server with TLS) with the bridge on this computer: one Local Network Access prompt, allowed, then connected", async () => {
  // "foundry.test" is the https page's host, served here; Chromium is told that address is
  // public, as a hosted Foundry's is, and the site is allowed local network access (the prompt's yes).
  const port = tlsServer.address().port;
  const hosted = await launchChromium(["--host-resolver-rules=MAP foundry.test 127.0.0.1", `--ip-address-space-overrides=127.0.0.1:${port}=public`]);
  try {
    const { rows } = await check(`https://foundry.test:${port}`, bridge.url, "check-https.png", { ignoreHTTPSErrors: true, browser: hosted, grant: true });
    assert.equal(rows.Path.result, "ok", "the prompt was answered yes");
    assert.equal(rows.Permission.result, "ok");
    assert.match(rows.Path.text, /^This page is https:\/\/foundry\.test:\d+ and the bridge \(http:\/\/127\.0\.0\.1:\d+\) is on this computer or network: Chrome and Edge 147\+ ask once for "Local network access"/);
    assert.equal(rows.Socket.result, "ok");
    assert.equal(rows.Key.result, "ok");
  } finally {
    await hosted.close();
  }
});

test("a Bridge URL with a path: refused before dialing, the badge and the check name the path", async () => {
  const { rows, badge } = await check(`http://127.0.0.1:${server.address().port}`, `${bridge.url}/fate`, "check-bad-url.png", { settle: "refused" });
  assert.match(badge, /has a path or query after the port/);
  assert.equal(rows.Url.result, "fail");
  assert.match(rows.Url.text, /has a path or query after the port, and the bridge takes none/);
  assert.equal(rows.Socket.result, "fail");
});

test("a GM with no key in this browser: told it plays through Foundry, the key check says so", async () => {
  const { rows, badge } = await check(`http://127.0.0.1:${server.address().port}`, bridge.url, "check-no-key.png", { key: "", settle: "refused" });
  assert.match(badge, /No GM key in this browser/);
  assert.equal(rows.Key.result, "warn");
  assert.match(rows.Key.text, /No GM key in this browser/);
});

test("two GMs at one table in relay mode: the GM with the bridge relays, the assistant without a key is told so, and each check names who relays", async () => {
  const origin = `http://127.0.0.1:${server.address().port}`;
  const table = { foundry: foundryServer.url, mode: "relay" };
  const gm = await check(origin, bridge.url, "check-relay-gm.png", { query: table, keep: true });
  assert.equal(gm.rows.Relay.result, "ok");
  assert.equal(gm.rows.Relay.text, "This browser relays for the table (Gamemaster).");
  const assistant = await check(origin, bridge.url, "check-relay-assistant.png", { key: "", settle: "refused", query: { ...table, user: "pageAssistant001" } });
  assert.match(assistant.badge, /No GM key in this browser: this GM plays through Foundry while another GM's browser relays/);
  assert.equal(assistant.rows.Relay.text, "Gamemaster's browser relays for the table.");
  assert.equal(assistant.rows.Key.result, "warn");
  assert.equal(assistant.rows.Socket.result, "warn", "no connection of its own, while the GM relays");
  await gm.context.close();
});
