/**
 * What the headless-Chromium suites share: the repository served as the fake Foundry page's
 * origin (over http, or https with a given certificate), Debian's chromium launched the way the
 * sandbox allows, the folder screenshots go to, a bridge with its worlds, and pages opened on it.
 */
import { createReadStream } from "node:fs";
import { mkdir, stat } from "node:fs/promises";
import http from "node:http";
import https from "node:https";
import path from "node:path";
import { chromium } from "playwright-core";
import { addWorlds, freePort, startBridge, tempDataDir } from "./bridge-process.mjs";
import { startFoundryServer } from "./foundry-server.mjs";
import { REPO } from "./node-foundry.mjs";

export const ARTIFACTS = path.join(REPO, "tests/artifacts");
const TYPES = { ".html": "text/html", ".mjs": "text/javascript", ".js": "text/javascript", ".css": "text/css", ".json": "application/json", ".hbs": "text/plain" };
export const VENDOR_URL = "/foundry-module/scripts/vendor/socket.io.esm.min.js";
const VENDOR_FILE = path.join(REPO, "node_modules/socket.io-client/dist/socket.io.esm.min.js");

/**
 * A server (not yet listening) for the repository's files; `tls` ({key, cert}) makes it https.
 * @param {{key: Buffer, cert: Buffer}|null} [tls]
 */
export function serveRepo(tls = null) {
  const serve = tls ? (handler) => https.createServer(tls, handler) : (handler) => http.createServer(handler);
  return serve(async (req, res) => {
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

/** Debian's chromium, headless, as this sandbox runs it; `args` adds flags. */
export function launchChromium(args = []) {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-quic", "--no-first-run", "--disable-sync", ...args]
  });
}

/**
 * Open the module's test page at `url` (tests/js/browser/index.html) and wait until the module
 * booted and its bridge connection is up. `errors` collects the page's uncaught errors; `call`
 * sends an intent on the page's own connection and resolves to its ack; `api("a.b", ...args)`
 * calls the module's macro API (MACROS.md) by its path.
 * @param {import("playwright-core").Browser} browser
 * @param {string} url
 * @param {{width: number, height: number}} [viewport]
 */
export async function openConnectedPage(browser, url, viewport = { width: 1100, height: 760 }) {
  const page = await browser.newPage({ viewport, deviceScaleFactor: 1 });
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(url);
  await page.waitForSelector("body[data-booted=true]");
  await page.waitForSelector("#fate-bridge-status[data-state=connected]");
  const call = (event, payload) => page.evaluate(([e, p]) => settled(game.modules.get("fate-bridge").api.connection.call(e, p)), [event, payload]);
  const api = (name, ...args) => page.evaluate(([n, a]) => {
    const parts = n.split(".");
    let target = game.modules.get("fate-bridge").api;
    for (const k of parts.slice(0, -1)) target = target[k];
    return settled(target[parts.at(-1)](...a));
  }, [name, args]);
  return { page, errors, call, api };
}

/**
 * Write a card emit on `page` as its module does (scripts/cards/chat.mjs), through a Bridge on
 * the page's own connection: a GM's page writes `writer: "gm"` emits, a user's page its own.
 * @param {import("playwright-core").Page} page
 * @param {object} emit  a `card` emit (schemas/server/card.json)
 */
export function writeCardOnPage(page, emit) {
  return page.evaluate(async (e) => {
    const cards = await import("/foundry-module/scripts/cards/chat.mjs");
    const { Bridge } = await import("/foundry-module/scripts/net/bridge.mjs");
    const bridge = Object.assign(new Bridge(), { connection: game.modules.get("fate-bridge").api.connection });
    await cards.handleCardEmit(bridge, e);
  }, emit);
}

/**
 * What a browser suite starts in `before`: a bridge on a fresh data folder holding `worlds`
 * (`[id, name, ruleset?]` each), the repository served over http, Chromium, and with `foundry`
 * a Foundry server for relay mode. `pageUrl(world, params)` is the test page for one of the
 * worlds (its bridge, world id and GM key, and `params`); `stop()` closes everything.
 * @param {[string, string, string?][]} worlds
 * @param {{foundry?: boolean}} [options]
 */
export async function startStage(worlds, { foundry = false } = {}) {
  await mkdir(ARTIFACTS, { recursive: true });
  const dataDir = await tempDataDir();
  const port = await freePort();
  const added = await addWorlds(dataDir, worlds);
  const bridge = await startBridge({ dataDir, port });
  const foundryServer = foundry ? await startFoundryServer() : null;
  const server = serveRepo();
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const base = `http://127.0.0.1:${server.address().port}/tests/js/browser/index.html`;
  const browser = await launchChromium();
  return {
    bridge, browser, server, foundryServer, dataDir, base, worlds: added,
    pageUrl: (world, params = {}) => `${base}?${new URLSearchParams({ bridge: bridge.url, world: world.id, key: world.key, ...params })}`,
    async stop() {
      await browser.close();
      await new Promise((r) => server.close(r));
      await foundryServer?.close();
      await bridge.stop();
    }
  };
}
