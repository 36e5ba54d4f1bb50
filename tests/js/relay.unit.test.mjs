// Unit tests of the relay (foundry-module/scripts/relay.mjs) and of how a failed connection is
// named, on the fake Foundry with an in-memory stand-in for Foundry's socket: every message
// reaches every other socket, never its emitter, with the sender's id added last.
import assert from "node:assert/strict";
import path from "node:path";
import { before, describe, test } from "node:test";
import { MODULE_DIR, bootNodeFoundry } from "./support/node-foundry.mjs";

const GM = { id: "gmUser000000001", name: "Gamemaster", isGM: true };
const ANN = { id: "annUser00000001", name: "Ann", isGM: false };
const BOB = { id: "bobUser00000001", name: "Bob", isGM: false };

let relay;
let connection;
let game;

/** Foundry's socket, in memory: delivery to the others, the sender stamped by the "server". */
function hub() {
  const sockets = [];
  const wire = [];
  return {
    wire,
    socket(userId) {
      const handlers = new Map();
      const socket = {
        on: (channel, fn) => handlers.set(fn, channel),
        off: (channel, fn) => handlers.delete(fn),
        emit: (channel, ...args) => {
          wire.push({ from: userId, size: JSON.stringify(args[0]).length });
          for (const other of sockets) {
            if (other === socket) continue;
            for (const [fn, ch] of other.handlers) if (ch === channel) queueMicrotask(() => fn(...structuredClone(args), userId));
          }
        },
        handlers
      };
      sockets.push(socket);
      return socket;
    }
  };
}

before(async () => {
  const foundry = await bootNodeFoundry({
    users: [GM, ANN, BOB],
    userId: ANN.id,
    activeGM: GM.id,
    settings: { "fate-bridge.bridgeUrl": "http://127.0.0.1:9" }
  }, { io: () => { throw new Error("no bridge connection in unit tests"); } });
  foundry.Hooks.callAll("init");
  game = foundry.game;
  relay = await import(path.join(MODULE_DIR, "scripts/relay.mjs"));
  connection = await import(path.join(MODULE_DIR, "scripts/connection.mjs"));
});

/** The GM's bridge connection, answering every call with `answer(event, body)`. */
function stubBridge(answer) {
  const bridge = new (class extends connection.IntentChannel {
    async send(event, body) {
      this.sent.push({ event, body });
      return this.receiveAck(answer(event, body));
    }
  })({});
  bridge.sent = [];
  bridge.setStatus("connected", null, null);
  return bridge;
}

/** Ann's relay to a GM host over one hub; the host answers with `answer`. */
async function table(answer) {
  const wires = hub();
  const bridge = stubBridge(answer);
  const host = new relay.RelayHost(bridge, { socket: wires.socket(GM.id) }).start();
  const ann = new relay.RelayConnection({ socket: wires.socket(ANN.id), timeout: 2000 });
  ann.connect();
  await new Promise((resolve) => ann.onConnect(resolve));
  return { wires, bridge, host, ann };
}

describe("relay", () => {
  test("the sender is the last argument Foundry's server adds, never the message's own claim", () => {
    assert.equal(relay.senderOf([{ user: "someone" }, "realUser0000001"]), "realUser0000001");
    assert.equal(relay.senderOf([{ t: "x" }, "forged000000001", "realUser0000001"]), "realUser0000001");
    assert.equal(relay.senderOf([{ t: "x" }]), null);
    assert.equal(relay.senderOf([{ t: "x" }, 42]), null);
  });

  test("a request goes to the bridge in an envelope naming Foundry's sender, and its answer comes back", async () => {
    const { bridge, ann, host } = await table((event, body) => ({ ok: true, data: { echoed: body.payload.request_id } }));
    const ack = await ann.call("hello", { module_version: "0.3.0" });
    assert.equal(ack.ok, true);
    const [sent] = bridge.sent;
    assert.equal(sent.event, "relay");
    assert.deepEqual(Object.keys(sent.body).sort(), ["event", "payload", "user"]);
    assert.equal(sent.body.user, ANN.id);
    assert.equal(sent.body.event, "hello");
    assert.equal(ack.data.echoed, sent.body.payload.request_id);
    host.stop();
    ann.disconnect();
  });

  test("an answer over Foundry's message size comes in parts and arrives whole; emits come in batches, in order", async () => {
    const emits = Array.from({ length: 600 }, (_, i) => ({ event: "card", data: { seq: i + 1, pad: "x".repeat(2000) } }));
    const { wires, ann, host } = await table((event) => (event === "relay" ? { ok: true, data: { emits, last_seq: 600 }, emits: emits.slice(0, 300) } : { ok: true, data: {} }));
    const heard = [];
    ann.on("emits", (frame) => heard.push(...frame.emits.map((e) => e.data.seq)));
    const ack = await ann.call("world.sync", { since: 0 });
    assert.equal(ack.ok, true);
    assert.equal(ack.data.emits.length, 600);
    assert.deepEqual(ack.data.emits.at(-1), emits.at(-1));
    // The ack's own emits reached the frame listeners first: through the host's batches, not twice.
    assert.deepEqual(heard, Array.from({ length: 300 }, (_, i) => i + 1));
    const fromHost = wires.wire.filter((w) => w.from === GM.id);
    assert.ok(fromHost.length > 2, "several messages");
    assert.ok(fromHost.every((w) => w.size <= relay.MAX_SOCKET_MESSAGE + 1024), JSON.stringify(fromHost.map((w) => w.size)));
    host.stop();
    ann.disconnect();
  });

  test("the host refuses an oversize request without asking the bridge", async () => {
    const wires = hub();
    const bridge = stubBridge(() => ({ ok: true, data: {} }));
    const host = new relay.RelayHost(bridge, { socket: wires.socket(GM.id) }).start();
    const heard = [];
    const listen = (socket) => socket.on(relay.CHANNEL, (message) => heard.push(message));
    const bob = wires.socket(BOB.id);
    listen(bob);
    bob.emit(relay.CHANNEL, { t: relay.RELAY.request, event: "hello", payload: { request_id: "big", pad: "x".repeat(relay.MAX_RELAYED_BYTES) } });
    await new Promise((r) => setTimeout(r, 20));
    const answer = heard.find((m) => m.t === relay.RELAY.answer && m.id === "big");
    assert.equal(answer.ack.error.code, "too_large");
    assert.equal(bridge.sent.length, 0);
    host.stop();
  });

  test("answers, emits and status from a player are not believed", async () => {
    const { wires, ann, host } = await table(() => ({ ok: true, data: {} }));
    const heard = [];
    ann.on("emits", (frame) => heard.push(frame));
    const bob = wires.socket(BOB.id);
    bob.emit(relay.CHANNEL, { t: relay.RELAY.emits, emits: [{ event: "card", data: { seq: 1 } }] });
    bob.emit(relay.CHANNEL, { t: relay.RELAY.host, state: "offline", message: "forged", protocol: 5 });
    await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(heard, []);
    assert.equal(ann.status.state, "connected");
    host.stop();
    ann.disconnect();
  });

  test("with no GM, a call says the player waits for the GM's bridge", async () => {
    const ann = new relay.RelayConnection({ socket: hub().socket(ANN.id) });
    // The GM closed Foundry: Foundry says so on the user.
    game.users.get(GM.id).active = false;
    try {
      ann.connect();
      assert.equal(ann.status.reason, "no_gm");
      const ack = await ann.call("hello", {});
      assert.equal(ack.error.code, "offline");
      assert.match(ack.error.message, /waiting for a GM/);
    } finally {
      game.users.get(GM.id).active = true;
      ann.disconnect();
    }
  });

  test("batches keep each run under the limit and every item in order", () => {
    const items = Array.from({ length: 50 }, (_, i) => ({ i, pad: "y".repeat(i * 10) }));
    const runs = relay.batches(items, 1000);
    assert.deepEqual(runs.flat(), items);
    for (const run of runs) assert.ok(run.length === 1 || JSON.stringify(run).length <= 1000 + run.length);
  });
});

describe("a connection that fails is named (issue 24)", () => {
  test("mixed content, local network access, timeout, refused and an https bridge's certificate", () => {
    const { unreachableReason } = connection;
    assert.equal(unreachableReason("http://192.168.1.20:8765", { message: "websocket error" }, "https:"), "mixed_content");
    assert.equal(unreachableReason("http://bridge.example:8765", { message: "websocket error" }, "https:"), "mixed_content");
    // Loopback is allowed from https pages (Chrome, Firefox): not mixed content.
    assert.equal(unreachableReason("http://127.0.0.1:8765", { message: "websocket error" }, "https:"), "refused");
    assert.equal(unreachableReason("http://localhost:8765", { message: "websocket error" }, "https:", "denied"), "local_network_denied");
    assert.equal(unreachableReason("http://127.0.0.1:8765", { message: "timeout" }, "http:"), "timeout");
    assert.equal(unreachableReason("https://bridge.example", { message: "websocket error" }, "https:"), "unreachable");
    assert.equal(unreachableReason("not a url", {}, "https:"), "unreachable");
  });

  test("the status badge says each in words, with the URL tried", async () => {
    const { statusText } = await import(path.join(MODULE_DIR, "scripts/status.mjs"));
    for (const reason of ["mixed_content", "local_network_denied", "timeout", "refused", "unreachable"]) {
      const { detail } = statusText({ state: "offline", reason, message: "websocket error" });
      assert.match(detail, /http:\/\/127\.0\.0\.1:9/, reason);
    }
    assert.equal(statusText({ state: "offline", reason: "no_gm", message: "waiting" }).detail, "waiting");
  });
});
