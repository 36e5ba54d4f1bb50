/**
 * What the headless-Chromium suites share: the repository served as the fake Foundry page's
 * origin (over http, or https with a given certificate), Debian's chromium launched the way the
 * sandbox allows, and the folder screenshots go to.
 */
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import http from "node:http";
import https from "node:https";
import path from "node:path";
import { chromium } from "playwright-core";
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
