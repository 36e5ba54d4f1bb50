/**
 * One fake Foundry client in its own worker thread (Foundry's globals are per page): the fake
 * globals, npm socket.io-client as Foundry's global `io`, and the module's real code. The test
 * drives it with RPC messages.
 */
import path from "node:path";
import { parentPort, workerData } from "node:worker_threads";
import { io as realIo } from "socket.io-client";
import { MODULE_DIR, bootNodeFoundry, setField, waitFor } from "./node-foundry.mjs";

const sent = []; // {event, payload, ack}
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
      args[args.length - 1] = (...res) => {
        entry.ack = structuredClone(res.at(-1));
        return last(...res);
      };
    }
    return emit(event, ...args);
  };
  const connect = socket.connect.bind(socket);
  socket.connect = () => {
    sockets.connects += 1;
    return connect();
  };
  return socket;
}

const foundry = await bootNodeFoundry(workerData.foundry, { io });
const api = () => foundry.game.modules.get("fate-bridge").api;
const sheets = new Map();

function messageSummary(m) {
  const el = m.element;
  const q = (s) => el?.querySelector(s)?.textContent.replace(/\s+/g, " ").trim() ?? null;
  return {
    id: m.id,
    author: m.author,
    speaker: m.speaker,
    flags: m.flags,
    roll: m.rolls[0]?.toJSON() ?? null,
    rollTotal: m.rolls[0]?.total,
    rollDice: m.rolls[0]?.dice.flatMap((d) => d.results.map((r) => r.result)) ?? [],
    rollDieClass: m.rolls[0]?.dice[0]?.constructor.name,
    card: {
      actor: q(".fate-bridge-card__actor"),
      action: q(".fate-bridge-card__action"),
      skill: q(".fate-bridge-card__skill"),
      dice: [...(el?.querySelectorAll(".fate-bridge-die") ?? [])].map((d) => Number(d.dataset.face)),
      total: q(".fate-bridge-card__cell--total dd"),
      opposition: q(".fate-bridge-card__cell--opposition dd"),
      shifts: q(".fate-bridge-card__cell--shifts dd"),
      outcome: q(".fate-bridge-card__outcome"),
      outcomeClass: el?.querySelector(".fate-bridge-card")?.className ?? null,
      state: q(".fate-bridge-card__state"),
      footer: q(".fate-bridge-card__footer")
    }
  };
}

const commands = {
  start() {
    foundry.start();
  },
  status() {
    const el = document.getElementById("fate-bridge-status");
    return { ...api().status, badge: el?.textContent ?? null, badgeState: el?.dataset.state ?? null };
  },
  hello() {
    return import(path.join(MODULE_DIR, "scripts/runtime.mjs")).then((m) => m.runtime.hello);
  },
  renderSheet(actorId) {
    sheets.set(actorId, foundry.renderActorSheet(actorId));
  },
  async clickRoll(actorId, skill) {
    const el = sheets.get(actorId);
    const button = await waitFor(() => [...el.querySelectorAll(".fate-bridge-roll")].find((b) => b.dataset.skill === skill), { what: `roll button for ${skill}` });
    button.click();
  },
  async answerDialog(values, action = "roll") {
    const dialog = await waitFor(() => foundry.openDialogs()[0], { what: "dialog" });
    for (const [name, value] of Object.entries(values)) setField(dialog.element.querySelector(`[name="${name}"]`), value);
    dialog.element.querySelector(`button[data-action="${action}"]`).click();
    return { title: dialog.title, rejectClose: dialog.config.rejectClose };
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
  call(event, payload) {
    return api().connection.call(event, payload);
  },
  async catchUp(since) {
    const { catchUp } = await import(path.join(MODULE_DIR, "scripts/session.mjs"));
    return catchUp(api().connection, since);
  },
  async roll(actorId, skill, options) {
    return api().roll(actorId, skill, options);
  },
  disconnect() {
    api().connection.disconnect();
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
