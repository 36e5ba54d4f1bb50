/**
 * One fake Foundry client in its own worker thread (Foundry's globals are per page): the fake
 * globals, npm socket.io-client as Foundry's global `io`, and the module's real code. The test
 * drives it with RPC messages.
 */
import { parentPort, workerData } from "node:worker_threads";
import { io as realIo } from "socket.io-client";
import { FCO_CLICK_GUARD_MS, installFcoStandIn, userClick } from "./fco-stand-in.mjs";
import { bootNodeFoundry, setField, waitFor } from "./node-foundry.mjs";

const sent = []; // {event, payload, ack}
// Test knobs: the tab stops handling the bridge's cards (a closing tab, a frozen page); the
// answer to the next intent of a name never arrives in time (the bridge answered, too late).
const knobs = { dropCards: false, droppedCards: 0, loseAnswerTo: new Set(), dropRelayAnswers: false };
const sockets = { created: 0, connects: 0, auths: [] };
const RESERVED = new Set(["connect", "connect_error", "disconnect"]);

function io(url, opts) {
  const socket = realIo(url, opts);
  sockets.created += 1;
  sockets.auths.push(structuredClone(opts.auth));
  const emit = socket.emit.bind(socket);
  socket.emit = (event, ...args) => {
    if (RESERVED.has(event)) return emit(event, ...args);
    const entry = { event, payload: structuredClone(args[0]), ack: null };
    sent.push(entry);
    const last = args.at(-1);
    if (typeof last === "function") {
      const lost = knobs.loseAnswerTo.delete(event);
      args[args.length - 1] = (...res) => {
        // What socket.io hands a timed-out call (socket.timeout(ms).emit): its error, no answer.
        if (lost) return last(new Error("operation has timed out"));
        entry.ack = structuredClone(res.at(-1));
        return last(...res);
      };
    }
    return emit(event, ...args);
  };
  const on = socket.on.bind(socket);
  // The tab "closes" as cards come in: each commit's card items are lost, the rest of its frame arrives.
  socket.on = (event, handler) => on(event, event !== "emits" ? handler : (frame, ...rest) => {
    if (!knobs.dropCards) return handler(frame, ...rest);
    const kept = frame.emits.filter((item) => item.event !== "card");
    knobs.droppedCards += frame.emits.length - kept.length;
    return kept.length ? handler({ ...frame, emits: kept }, ...rest) : undefined;
  });
  const connect = socket.connect.bind(socket);
  socket.connect = () => {
    sockets.connects += 1;
    return connect();
  };
  return socket;
}

// Foundry's own socket is not the bridge's: its messages are not counted as sent intents.
const foundry = await bootNodeFoundry(workerData.foundry, { io, foundryIo: realIo });
// fate-core-official's own sheet listeners and chat hooks, where a test asks for them.
if (workerData.foundry.fcoStandIn) installFcoStandIn(foundry);
// Test knob: this client's relay answers are lost on their way (a GM that leaves mid-request).
const emitOnFoundry = foundry.game.socket.emit.bind(foundry.game.socket);
foundry.game.socket.emit = (channel, message, ...rest) => {
  if (knobs.dropRelayAnswers && message?.t === "relay.answer") return undefined;
  return emitOnFoundry(channel, message, ...rest);
};
const api = () => foundry.game.modules.get("fate-bridge").api;
const sheets = new Map();

function messageSummary(m) {
  const el = m.element;
  const q = (sel) => el?.querySelector(sel)?.textContent.replace(/\s+/g, " ").trim() ?? null;
  const all = (sel) => [...(el?.querySelectorAll(sel) ?? [])].map((e) => e.textContent.replace(/\s+/g, " ").trim());
  const side = (which) => ({
    name: q(`.fate-bridge-side--${which} .fate-bridge-side__name`),
    skill: q(`.fate-bridge-side--${which} .fate-bridge-side__skill`),
    dice: [...(el?.querySelectorAll(`.fate-bridge-side--${which} .fate-bridge-die`) ?? [])].map((d) => Number(d.dataset.face)),
    bonuses: all(`.fate-bridge-side--${which} .fate-bridge-chip`),
    total: q(`.fate-bridge-side--${which} .fate-bridge-side__total`),
    fp: q(`.fate-bridge-side--${which} .fate-bridge-side__fp`)
  });
  return {
    id: m.id,
    author: m.author?.id ?? null,
    speaker: m.speaker,
    content: m.content,
    flags: m.flags,
    roll: m.rolls[0]?.toJSON() ?? null,
    rollTotal: m.rolls[0]?.total,
    rollDice: m.rolls[0]?.dice.flatMap((d) => d.results.map((r) => r.result)) ?? [],
    rollDieClass: m.rolls[0]?.dice[0]?.constructor.name,
    card: {
      action: q(".fate-bridge-card__action"),
      state: q(".fate-bridge-card__state"),
      subject: q(".fate-bridge-card__subject"),
      actor: side("actor"),
      opposition: side("opposition"),
      outcome: q(".fate-bridge-card__outcome"),
      outcomeClass: el?.querySelector(".fate-bridge-card")?.className ?? null,
      invokes: all(".fate-bridge-card__invoke"),
      effects: all(".fate-bridge-card__effect"),
      verdict: q(".fate-bridge-card__verdict"),
      footer: q(".fate-bridge-card__footer")
    },
    controls: [...(el?.querySelectorAll("[data-fate-bridge-controls] button[data-fb]") ?? [])].map((b) => [b.dataset.fb, b.dataset.side ?? b.dataset.choice ?? b.dataset.character ?? null].filter(Boolean).join(":")),
    costPicker: Boolean(el?.querySelector("[data-fate-bridge-controls] .fate-bridge-controls__cost")),
    costKinds: [...(el?.querySelectorAll('[data-fate-bridge-controls] select[name="kind"] option') ?? [])].map((o) => o.value)
  };
}

/** Wait until a card message's controls are rendered (they fill in asynchronously). */
async function cardElement(cardId) {
  return waitFor(() => foundry.game.messages.find((m) => m.flags["fate-bridge"]?.cardId === cardId)?.element, { what: `card ${cardId}` });
}

const panelEl = () => document.getElementById("fate-bridge-scene-panel");
const clean = (t) => String(t ?? "").replace(/\s+/g, " ").trim();

const commands = {
  async openScene() {
    await api().openScene();
  },
  /** The scene panel as a user sees it: its text per section and every action button. */
  panel() {
    const el = panelEl();
    if (!el) return null;
    const section = (name) => clean(el.querySelector(`[data-section="${name}"]`)?.textContent);
    return {
      renders: null,
      text: clean(el.textContent),
      head: clean(el.querySelector(".fate-bridge-scene__head")?.textContent),
      aspects: section("aspects"),
      compels: section("compels"),
      contests: section("contests"),
      challenges: section("challenges"),
      conflicts: section("conflicts"),
      actions: [...el.querySelectorAll("[data-action]")].map((b) => ({ ...b.dataset })).filter((d) => d.action !== "close"),
      forms: [...el.querySelectorAll("form[data-form]")].map((f) => f.dataset.form)
    };
  },
  async panelField(selector, value) {
    const el = await waitFor(() => panelEl()?.querySelector(selector), { what: `panel field ${selector}` });
    setField(el, value);
  },
  async clickPanel(selector) {
    const el = await waitFor(() => panelEl()?.querySelector(selector), { what: `panel ${selector}` });
    // A browser toggles a checkbox before its click listeners run; linkedom does not.
    if (el.type === "checkbox") el.checked = !el.checked;
    el.click();
  },
  combats() {
    return foundry.game.combats.contents.map((c) => ({
      id: c.id, turn: c.turn, round: c.round, flags: c.flags,
      turns: c.turns.map((t) => ({ actorId: t.actorId, initiative: t.initiative, name: t.name })),
      current: c.combatant?.actorId ?? null
    }));
  },
  gmCards() {
    return foundry.game.messages.contents.filter((m) => ["contest", "challenge", "scene_end"].includes(m.flags["fate-bridge"]?.card?.kind)).map((m) => ({
      cardId: m.flags["fate-bridge"].cardId, kind: m.flags["fate-bridge"].card.kind, author: m.author?.id ?? null, text: clean(m.element?.textContent), html: m.content
    }));
  },
  async start() {
    // As a page loads: Foundry knows who is active before the ready hook.
    await foundry.foundryConnected;
    foundry.start();
  },
  viewScene(tokens, sceneId) {
    foundry.viewScene(tokens, sceneId);
  },
  /** A token's own actor (an unlinked token's synthetic actor), by token UUID. */
  tokenActor(uuid) {
    const a = globalThis.fromUuidSync(uuid)?.actor;
    return a ? { id: a.id, isToken: a.isToken, system: a.system, flags: a.flags, statuses: [...a.statuses] } : null;
  },
  createToken(actorId) {
    foundry.createToken(actorId);
  },
  api(pathName, ...args) {
    const parts = pathName.split(".");
    let target = api();
    for (const k of parts.slice(0, -1)) target = target[k];
    return target[parts.at(-1)](...args);
  },
  status() {
    const el = document.getElementById("fate-bridge-status");
    return { ...api().status, badge: el?.textContent ?? null, badgeState: el?.dataset.state ?? null };
  },
  hello() {
    return api().hello;
  },
  renderSheet(actorId) {
    sheets.set(actorId, foundry.renderActorSheet(actorId));
  },
  async clickRoll(actorId, skill) {
    const el = sheets.get(actorId);
    const button = await waitFor(() => [...el.querySelectorAll(".fate-bridge-roll")].find((b) => b.dataset.skill === skill), { what: `roll button for ${skill}` });
    button.click();
  },
  async answerDialog(values, action = "roll", { radio = {}, check = [] } = {}) {
    const dialog = await waitFor(() => foundry.openDialogs()[0], { what: "dialog" });
    const html = dialog.element.querySelector(".dialog-content").innerHTML;
    const text = dialog.element.querySelector(".dialog-content").textContent.replace(/\s+/g, " ").trim();
    for (const [name, value] of Object.entries(values)) setField(dialog.element.querySelector(`[name="${name}"]`), value);
    for (const [name, value] of Object.entries(radio)) {
      for (const r of dialog.element.querySelectorAll(`input[type="radio"][name="${name}"]`)) r.checked = r.value === value;
    }
    for (const name of check) dialog.element.querySelector(`[name="${name}"]`).checked = true;
    const fields = Object.fromEntries([...dialog.element.querySelectorAll("select, input")].filter((e) => e.name).map((e) => [e.name, e.type === "radio" || e.type === "checkbox" ? Boolean(e.checked) && e.value : e.value]));
    const hidden = [...dialog.element.querySelectorAll("[data-field][hidden]")].map((e) => e.name).filter(Boolean);
    dialog.element.querySelector(`button[data-action="${action}"]`).click();
    return { title: dialog.title, rejectClose: dialog.config.rejectClose, html, text, fields, hidden };
  },
  async clickCard(cardId, selector) {
    const el = await cardElement(cardId);
    const button = await waitFor(() => el.isConnected !== false && foundry.game.messages.find((m) => m.flags["fate-bridge"]?.cardId === cardId)?.element.querySelector(selector), { what: `${selector} on ${cardId}` });
    const holder = button.closest("[data-fate-bridge-controls]");
    return { clicked: button.click() ?? true, holder: Boolean(holder) };
  },
  async setCardField(cardId, name, value) {
    const el = await cardElement(cardId);
    setField(el.querySelector(`[data-fate-bridge-controls] [name="${name}"]`), value);
  },
  messageData(cardId) {
    const m = foundry.game.messages.find((x) => x.flags["fate-bridge"]?.cardId === cardId);
    return m ? { _id: m.id, author: m.author?.id ?? null, speaker: m.speaker, content: m.content, flags: m.flags, rolls: m.rolls.map((r) => JSON.stringify(r.toJSON())) } : null;
  },
  receiveMessage(data) {
    return foundry.receiveMessage(data).then(() => null);
  },
  receiveUserUpdate(userId, changes, opts, byUserId) {
    foundry.receiveUserUpdate(userId, changes, opts ?? {}, byUserId ?? userId);
  },
  /** This client sets a flag on a user (its own, or any as a GM), as Foundry's API does; returns the update. */
  async setUserFlag(userId, scope, key, value) {
    await foundry.game.users.get(userId).setFlag(scope, key, value);
    return foundry.log.userUpdates.at(-1)?.changes ?? null;
  },
  /** This browser's bridge connection closes (the GM's computer lost it); Foundry's socket stays. */
  bridgeDisconnect() {
    api().connection?.disconnect();
  },
  /** The relay host this client's roster elects (null: none). */
  relayHostId() {
    return api().relay.host;
  },
  user(userId) {
    const u = foundry.game.users.get(userId);
    return { id: u.id, flags: u.flags };
  },
  actor(actorId) {
    const a = foundry.game.actors.get(actorId);
    return { system: a.system, flags: a.flags, statuses: [...a.statuses] };
  },
  log() {
    const { actorUpdates, statusToggles, userUpdates, updated, created, combatWrites } = foundry.log;
    return { actorUpdates, statusToggles, userUpdates, updated: updated.length, created: created.length, combatWrites };
  },
  async editActor(actorId, changes) {
    await foundry.game.actors.get(actorId).update(changes);
  },
  pass(actionId, side) {
    return api().pass(actionId, side);
  },
  async startAction(actorId, skill, request) {
    return api().start(actorId, skill, request);
  },
  messages() {
    return foundry.game.messages.contents.map(messageSummary);
  },
  created() {
    return foundry.log.created.length;
  },
  sent() {
    return sent;
  },
  sockets() {
    return sockets;
  },
  notifications() {
    return foundry.log.notifications;
  },
  savedFiles() {
    return foundry.log.savedFiles;
  },
  call(event, payload) {
    return api().connection.call(event, payload);
  },
  catchUp(since) {
    return api().sync(since);
  },
  async roll(actorId, skill, options) {
    return api().roll(actorId, skill, options);
  },
  disconnect() {
    api().connection.disconnect();
    foundry.game.socket?.disconnect?.();
  },
  /** Send a raw message on Foundry's socket, as a tampered client could. */
  foundryEmit(channel, ...args) {
    foundry.game.socket.emit(channel, ...args);
  },
  /** Listen on a module channel and keep what arrives, with the arguments as received. */
  foundryListen(channel) {
    const heard = [];
    foundry.game.socket.on(channel, (...args) => heard.push(args));
    commands.foundryHeard = () => heard;
  },
  foundryHeard() {
    return [];
  },
  /** Whether this client relays for the others (relay mode, the active GM). */
  relaying() {
    return api().relay.hosting;
  },
  reconnect() {
    api().reconnect();
  },
  dropRelayAnswers(on) {
    knobs.dropRelayAnswers = Boolean(on);
  },
  /** The native rolls fate-core-official's sheet made (the stand-in records them). */
  nativeRolls() {
    return foundry.log.fcoNativeRolls ?? [];
  },
  /**
   * Click a skill name on a rendered sheet, as a user does (one click, `detail` 1); resolves once
   * fate-core-official's double-click guard has passed, so a native roll is made by then.
   */
  async clickSkill(actorId, skill) {
    const el = sheets.get(actorId);
    const row = await waitFor(() => [...el.querySelectorAll('div[name="skill"]')].find((r) => r.dataset.skillname === skill), { what: `skill ${skill}` });
    userClick(row);
    await new Promise((r) => setTimeout(r, FCO_CLICK_GUARD_MS + 50));
  },
  loseAnswerTo(event) {
    knobs.loseAnswerTo.add(event);
  },
  dropCards(on) {
    knobs.dropCards = Boolean(on);
    return knobs.droppedCards;
  },
  refused() {
    return foundry.log.refused;
  },
  hookErrors() {
    return foundry.log.hookErrors.map((e) => `${e.hook}: ${e.error?.message ?? e.error}`);
  },
  /** Run a macro's code as Foundry does: an async function body with the page's globals. */
  async runMacro(code) {
    const AsyncFunction = (async () => {}).constructor;
    return new AsyncFunction(code)();
  },
  scene() {
    return api().scene;
  }
};

parentPort.on("message", async ({ id, cmd, args }) => {
  try {
    const result = await commands[cmd](...(args ?? []));
    parentPort.postMessage({ id, result: result === undefined ? null : JSON.parse(JSON.stringify(result)) });
  } catch (err) {
    parentPort.postMessage({ id, error: String(err?.stack ?? err) });
  }
});
parentPort.postMessage({ ready: true });
