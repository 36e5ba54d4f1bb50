/**
 * Boots the fake Foundry in Node (linkedom for the DOM), then the module's real main.mjs.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import Handlebars from "handlebars";
import { parseHTML } from "linkedom";
import { install } from "./fake-foundry.mjs";

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
export const MODULE_DIR = path.join(REPO, "foundry-module");

/** Reads "modules/fate-bridge/<file>" from foundry-module/. */
export function loadText(p) {
  const rel = p.replace(/^\/?modules\/fate-bridge\//, "");
  return readFile(path.join(MODULE_DIR, rel), "utf8");
}

export async function readJson(rel) {
  return JSON.parse(await readFile(path.join(REPO, rel), "utf8"));
}

/**
 * @param {object} options  install() options without Handlebars/loadText/lang
 * @param {{io?: Function, foundryIo?: Function}} [extra]  the socket.io-client `io` to expose as
 *   Foundry's global io, and the one `game.socket` connects to a Foundry server with
 */
export async function bootNodeFoundry(options, { io, foundryIo } = {}) {
  const { document, HTMLElement, Event: DomEvent } = parseHTML(
    '<!doctype html><html><body><nav id="players"></nav><ol id="chat-log"></ol><div id="sheets"></div></body></html>'
  );
  globalThis.document = document;
  globalThis.HTMLElement = HTMLElement;
  globalThis.DomEvent = DomEvent; // linkedom's Event, for dispatching on its nodes
  if (io) globalThis.io = io;
  const lang = await readJson("foundry-module/lang/en.json");
  const foundry = install({ Handlebars, loadText, lang, foundryIo: foundryIo ?? io, ...options });
  await import(pathToFileURL(path.join(MODULE_DIR, "scripts/main.mjs")).href);
  return foundry;
}

/** Poll until fn returns a truthy value; fails after `ms`. */
export async function waitFor(fn, { ms = 15000, step = 20, what = "condition" } = {}) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, step));
  }
}

/** Set a form field's value the way a user would (linkedom's select.value is read-only). */
export function setField(el, value) {
  if (!el) throw new Error(`no field for ${value}`);
  if (el.type === "checkbox") {
    el.checked = Boolean(value);
    return;
  }
  if (el.tagName === "SELECT") {
    for (const o of el.querySelectorAll("option")) {
      if (o.value === String(value)) o.setAttribute("selected", "");
      else o.removeAttribute("selected");
    }
  } else {
    el.value = String(value);
  }
  if (el.value !== String(value)) throw new Error(`could not set ${el.tagName} to ${value}`);
}
