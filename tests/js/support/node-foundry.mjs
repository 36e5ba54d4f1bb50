/**
 * Boots the fake Foundry in Node (linkedom for the DOM), then the module's real main.mjs.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import Handlebars from "handlebars";
import { parseHTML } from "linkedom";
import { install } from "./fake-foundry.mjs";
import { fcoActorClass } from "./fco-stand-in.mjs";

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
 * linkedom dispatches an event to its target and then up the tree, with no capture phase: a
 * listener added with `{capture: true}` on an ancestor runs last, after the target's own. Browsers
 * run capture listeners first, from the document down, and an ancestor that stops the event
 * there keeps it from the target (the module takes FCO's clicks over this way). This gives the
 * Node DOM that phase: capture listeners on ancestors are kept aside and run, top down, before
 * linkedom's own dispatch, with `target` and `currentTarget` set; stopping propagation there
 * ends the event.
 * @param {Document} document
 */
function addCapturePhase(document) {
  let proto = Object.getPrototypeOf(document.body);
  while (proto && !Object.hasOwn(proto, "dispatchEvent")) proto = Object.getPrototypeOf(proto);
  if (!proto || proto.fakeCapturePhase) return;
  proto.fakeCapturePhase = true;
  const captures = new WeakMap(); // node -> Map(type -> listener[])
  const { addEventListener: add, removeEventListener: remove, dispatchEvent: dispatch } = proto;
  const isCapture = (opts) => opts === true || Boolean(opts?.capture);
  proto.addEventListener = function (type, fn, opts) {
    if (!isCapture(opts)) return add.call(this, type, fn, opts);
    if (!captures.has(this)) captures.set(this, new Map());
    const list = captures.get(this).get(type) ?? [];
    if (!list.includes(fn)) list.push(fn);
    captures.get(this).set(type, list);
  };
  proto.removeEventListener = function (type, fn, opts) {
    if (!isCapture(opts)) return remove.call(this, type, fn, opts);
    const list = captures.get(this)?.get(type);
    if (list) captures.get(this).set(type, list.filter((f) => f !== fn));
  };
  proto.dispatchEvent = function (event) {
    const path = [];
    for (let node = this.parentNode; node; node = node.parentNode) path.unshift(node);
    path.push(this);
    let stopped = false;
    const stop = event.stopPropagation?.bind(event);
    const stopNow = event.stopImmediatePropagation?.bind(event);
    event.stopPropagation = () => {
      stopped = true;
      stop?.();
    };
    event.stopImmediatePropagation = () => {
      stopped = true;
      stopNow?.();
    };
    // linkedom sets `target` in its own dispatch, after this phase.
    if (!event.target) Object.defineProperty(event, "target", { value: this, configurable: true, writable: true });
    for (const node of path) {
      for (const fn of captures.get(node)?.get(event.type) ?? []) {
        Object.defineProperty(event, "currentTarget", { value: node, configurable: true, writable: true });
        if (typeof fn === "function") fn.call(node, event);
        else fn?.handleEvent?.(event);
        if (stopped) return !event.defaultPrevented;
      }
    }
    Object.defineProperty(event, "currentTarget", { value: null, configurable: true, writable: true });
    delete event.currentTarget;
    return dispatch.call(this, event);
  };
}

/**
 * @param {object} options  install() options without Handlebars/loadText/lang
 * @param {{io?: Function, foundryIo?: Function, bridge?: object}} [extra]  the socket.io-client
 *   `io` to expose as Foundry's global io, and the one `game.socket` connects to a Foundry server
 *   with; `bridge`: a Bridge (scripts/net/bridge.mjs) of the test's own, handed to the module's
 *   hooks as main.mjs hands its own (without it, main.mjs boots as in Foundry)
 */
export async function bootNodeFoundry(options, { io, foundryIo, bridge } = {}) {
  const { document, HTMLElement, Event: DomEvent } = parseHTML(
    '<!doctype html><html><body><nav id="players"></nav><ol id="chat-log"></ol><div id="sheets"></div></body></html>'
  );
  addCapturePhase(document);
  globalThis.document = document;
  globalThis.HTMLElement = HTMLElement;
  globalThis.DomEvent = DomEvent; // linkedom's Event, for dispatching on its nodes
  if (io) globalThis.io = io;
  // The client's language (`options.language`): its file, English the fallback, as Foundry reads.
  const english = await readJson("foundry-module/lang/en.json");
  const language = options.language ?? "en";
  const lang = language === "en" ? english : await readJson(`foundry-module/lang/${language}.json`);
  // fate-core-official's worlds have its Actor class (what it does to statuses on Foundry 14).
  const actorClass = options.actorClass ?? (options.systemId === "fate-core-official" ? fcoActorClass : undefined);
  // Foundry knows an installed module's version from its module.json.
  const module = { version: (await readJson("foundry-module/module.json")).version, ...options.module };
  const foundry = install({ Handlebars, loadText, lang, fallbackLang: english, foundryIo: foundryIo ?? io, ...options, module, actorClass });
  if (bridge) (await import(pathToFileURL(path.join(MODULE_DIR, "scripts/hooks.mjs")).href)).connectHooks(bridge);
  else await import(pathToFileURL(path.join(MODULE_DIR, "scripts/main.mjs")).href);
  return foundry;
}

/** Run `fn` as the user `userId` (Foundry's `game.user`), then put back the one logged in. */
export async function asUser(foundry, userId, fn) {
  const saved = foundry.game.user;
  foundry.game.user = foundry.game.users.get(userId);
  try {
    return await fn();
  } finally {
    foundry.game.user = saved;
  }
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
