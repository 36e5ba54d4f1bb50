// Unit tests of the relay (foundry-module/scripts/net/relay.mjs) and of how a failed connection is
// named, on the fake Foundry with an in-memory stand-in for Foundry's socket: every message
// reaches every other socket, never its emitter, with the sender's id added last.
import assert from "node:assert/strict";
import path from "node:path";
import { before, describe, test } from "node:test";
import { MODULE_DIR, bootNodeFoundry } from "./support/node-foundry.mjs";

const GM = { id: "gmUser000000001", name: "Gamemaster", isGM: true };
const ANN = { id: "annUser00000001", name: "Ann", isGM: false };
const BOB = { id: "bobUser00000001", name: "Bob", isGM: false };
// Foundry's roles: ASSISTANT 3, GAMEMASTER 4.
const ASSISTANT = { id: "asstUser0000001", name: "Assistant", isGM: true, role: 3 };

let relay;
let connection;
let PROTOCOL_VERSION;
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
    users: [GM, ANN, BOB, ASSISTANT],
    userId: ANN.id,
    activeGM: GM.id,
    settings: { "fate-bridge.bridgeUrl": "http://127.0.0.1:9" }
  }, { io: () => { throw new Error("no bridge connection in unit tests"); } });
  foundry.Hooks.callAll("init");
  game = foundry.game;
  relay = await import(path.join(MODULE_DIR, "scripts/net/relay.mjs"));
  connection = await import(path.join(MODULE_DIR, "scripts/net/connection.mjs"));
  ({ PROTOCOL_VERSION } = await import(path.join(MODULE_DIR, "scripts/protocol.mjs")));
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

/** Run as the GM's client (game.user), then put Ann back. */
async function asGM(fn, user = GM) {
  const saved = game.user;
  game.user = game.users.get(user.id);
  try {
    return await fn();
  } finally {
    game.user = saved;
  }
}

/** Ann's relay to a GM host over one hub; the host answers with `answer`. */
async function table(answer) {
  const wires = hub();
  const bridge = stubBridge(answer);
  const gmSocket = wires.socket(GM.id);
  const host = new relay.RelayHost(bridge, { socket: gmSocket }).start();
  // The GM's client says how its bridge is (as a GM's own client, game.user is the GM).
  const roster = new relay.GmRoster({ socket: gmSocket, user: game.users.get(GM.id) }).start(() => bridge.status);
  const ann = new relay.RelayConnection({ socket: wires.socket(ANN.id), timeout: 2000 });
  const connected = new Promise((resolve) => ann.onConnect(resolve));
  ann.connect();
  await connected;
  host.roster = roster;
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
    bob.emit(relay.CHANNEL, { t: relay.RELAY.gm, state: "offline", message: "forged", protocol: 5 });
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
    game.users.get(ASSISTANT.id).active = false;
    try {
      ann.connect();
      assert.equal(ann.status.reason, "no_gm");
      const ack = await ann.call("hello", {});
      assert.equal(ack.error.code, "offline");
      assert.match(ack.error.message, /waiting for a GM/);
    } finally {
      game.users.get(GM.id).active = true;
      game.users.get(ASSISTANT.id).active = true;
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

/**
 * A GM's client on the hub as session.mjs builds it: its roster says how its bridge is, and it
 * relays while the roster elects it.
 */
function gmClient(wires, user, bridge) {
  const socket = wires.socket(user.id);
  const roster = new relay.GmRoster({ socket, user: game.users.get(user.id) });
  const host = new relay.RelayHost(bridge, { socket });
  roster.onChange(() => (roster.electedHost() === user.id ? host.start() : host.stop()));
  bridge.onStatus(() => roster.announce());
  roster.start(() => bridge.status);
  return { socket, roster, host, bridge };
}

describe("the relay host is a GM with a live bridge (issue 33)", () => {
  test("elected by live bridge, then role, then id; never a GM without a bridge, one who left, or another protocol", () => {
    const users = new Map([GM, ASSISTANT, ANN, { id: "aaaGm0000000001", isGM: true, role: 4 }].map((u) => [u.id, { active: true, ...u }]));
    const of = (id) => users.get(id);
    const ok = { state: "connected", protocol: PROTOCOL_VERSION };
    assert.equal(relay.electHost(new Map([[GM.id, { state: "refused" }], [ASSISTANT.id, ok]]), of), ASSISTANT.id, "the GM without a bridge does not relay; the assistant does");
    assert.equal(relay.electHost(new Map([[GM.id, ok], [ASSISTANT.id, ok]]), of), GM.id, "both connected: the higher role");
    assert.equal(relay.electHost(new Map([[GM.id, ok], ["aaaGm0000000001", ok]]), of), "aaaGm0000000001", "same role: the lower id");
    assert.equal(relay.electHost(new Map([[ANN.id, ok]]), of), null, "a player never relays");
    assert.equal(relay.electHost(new Map([[GM.id, { ...ok, protocol: -1 }]]), of), null, "another protocol does not relay");
    users.get(ASSISTANT.id).active = false;
    assert.equal(relay.electHost(new Map([[ASSISTANT.id, ok]]), of), null, "a GM who left does not relay");
  });

  test("the relaying GM's browser loses the bridge while the assistant's has it: the assistant takes over and the request is sent again once", async () => {
    const wires = hub();
    let answerGm = null;
    const gmBridge = new (class extends connection.IntentChannel {
      send(event, body) {
        this.sent.push({ event, body });
        return new Promise((resolve) => { answerGm = resolve; }); // the answer never comes back
      }
    })({});
    gmBridge.sent = [];
    gmBridge.setStatus("connected", null, null);
    const asstBridge = stubBridge((event, body) => ({ ok: true, data: { by: "assistant", id: body.payload.request_id } }));
    const gm = gmClient(wires, GM, gmBridge);
    const assistant = gmClient(wires, ASSISTANT, asstBridge);
    const ann = new relay.RelayConnection({ socket: wires.socket(ANN.id), timeout: 5000 });
    const up = new Promise((resolve) => ann.onConnect(resolve));
    ann.connect();
    await up;
    await new Promise((r) => setTimeout(r, 10));
    assert.equal(ann.host, GM.id, "the GM (higher role) relays");
    assert.equal(gm.host.running, true);
    assert.equal(assistant.host.running, false, "the assistant's requests are its own; it does not relay");
    const pending = ann.call("action.start", { request_id: "req-takeover" });
    await new Promise((r) => setTimeout(r, 10));
    assert.equal(gmBridge.sent.length, 1, "the GM forwarded it");
    gmBridge.setStatus("offline", "transport close", "lost");
    const ack = await pending;
    assert.deepEqual(ack, { ok: true, data: { by: "assistant", id: "req-takeover" } });
    assert.equal(ann.host, ASSISTANT.id);
    assert.equal(asstBridge.sent.length, 1, "sent again once");
    assert.equal(asstBridge.sent[0].body.payload.request_id, "req-takeover", "under its request id");
    assert.equal(gm.host.running, false);
    assert.equal(assistant.host.running, true);
    answerGm?.({ ok: false, error: { code: "offline", message: "late" } });
    ann.disconnect();
    for (const c of [gm, assistant]) c.host.stop(), c.roster.stop();
  });

  test("no GM with a bridge: the player's status says the GMs' bridges are down, and follows one back", async () => {
    const wires = hub();
    const bridge = stubBridge(() => ({ ok: true, data: {} }));
    bridge.setStatus("refused", "no_key", null);
    const assistant = gmClient(wires, ASSISTANT, bridge);
    const ann = new relay.RelayConnection({ socket: wires.socket(ANN.id) });
    ann.connect();
    await new Promise((r) => setTimeout(r, 10));
    assert.equal(ann.status.state, "offline");
    assert.equal(ann.status.reason, "gm_offline");
    assert.match(ann.status.message, /the GM's bridge is not connected \(the GM's browser has no GM key/, "the GM's reason in words");
    const up = new Promise((resolve) => ann.onConnect(resolve));
    bridge.setStatus("connected", null, null);
    await up;
    assert.equal(ann.host, ASSISTANT.id);
    ann.disconnect();
    assistant.host.stop();
    assistant.roster.stop();
  });
});

describe("the relay host limits each sender and never relays a request twice (issue 35)", () => {
  test("a flood from one player is refused, then dropped; another player's requests still go through; the bucket refills", async () => {
    const wires = hub();
    const bridge = stubBridge(() => ({ ok: true, data: {} }));
    let clock = 0;
    const host = new relay.RelayHost(bridge, { socket: wires.socket(GM.id), now: () => clock }).start();
    const heard = [];
    const bob = wires.socket(BOB.id);
    bob.on(relay.CHANNEL, (m) => heard.push(m));
    const annSocket = wires.socket(ANN.id);
    const annHeard = [];
    annSocket.on(relay.CHANNEL, (m) => annHeard.push(m));
    for (let i = 0; i < 200; i++) bob.emit(relay.CHANNEL, { t: relay.RELAY.request, event: "hello", payload: { request_id: `bob-${i}` } });
    annSocket.emit(relay.CHANNEL, { t: relay.RELAY.request, event: "hello", payload: { request_id: "ann-1" } });
    await new Promise((r) => setTimeout(r, 30));
    const forwarded = bridge.sent.filter((s) => s.body.user === BOB.id).length;
    assert.equal(forwarded, relay.SENDER_BURST, "Bob's burst, no more, reached the bridge");
    const answersToBob = heard.filter((m) => m.t === relay.RELAY.answer && m.to === BOB.id);
    const refused = answersToBob.filter((m) => m.ack.error?.code === "rate_limited");
    assert.ok(refused.length >= 1 && refused.length <= 5, `a few refusals, then silence (${refused.length})`);
    assert.match(refused[0].ack.error.message, /Too many requests/);
    assert.equal(answersToBob.length, relay.SENDER_BURST + refused.length, "the rest were dropped, nothing broadcast for them");
    assert.equal(bridge.sent.filter((s) => s.body.user === ANN.id).length, 1, "Ann's request went through");
    assert.ok(annHeard.some((m) => m.t === relay.RELAY.answer && m.id === "ann-1" && m.ack.ok));
    clock += 1000; // a second later: 20 more
    for (let i = 200; i < 230; i++) bob.emit(relay.CHANNEL, { t: relay.RELAY.request, event: "hello", payload: { request_id: `bob-${i}` } });
    await new Promise((r) => setTimeout(r, 30));
    assert.equal(bridge.sent.filter((s) => s.body.user === BOB.id).length, relay.SENDER_BURST + relay.SENDER_RATE);
    host.stop();
  });

  test("a request id sent again is not forwarded again: in flight it waits, answered it gets the same answer, to its sender only", async () => {
    const wires = hub();
    let emitted = 0;
    const bridge = stubBridge((event, body) => ({ ok: true, data: { n: bridge.sent.length }, emits: [{ event: "card", data: { seq: ++emitted } }] }));
    const host = new relay.RelayHost(bridge, { socket: wires.socket(GM.id) }).start();
    const seenByAnn = [];
    const annSocket = wires.socket(ANN.id);
    annSocket.on(relay.CHANNEL, (m) => seenByAnn.push(m));
    const request = { t: relay.RELAY.request, event: "action.start", payload: { request_id: "dup-1" } };
    annSocket.emit(relay.CHANNEL, request);
    annSocket.emit(relay.CHANNEL, request);
    await new Promise((r) => setTimeout(r, 20));
    annSocket.emit(relay.CHANNEL, request);
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(bridge.sent.length, 1, "the bridge saw it once");
    assert.equal(seenByAnn.filter((m) => m.t === relay.RELAY.emits).length, 1, "its emits broadcast once");
    const answers = seenByAnn.filter((m) => m.t === relay.RELAY.answer && m.id === "dup-1");
    assert.equal(answers.length, 2, "answered when done, and again for the copy sent after");
    assert.deepEqual(answers[0].ack, answers[1].ack);
    // Bob's request under the same id is his own.
    wires.socket(BOB.id).emit(relay.CHANNEL, request);
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(bridge.sent.length, 2);
    host.stop();
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
    const { statusText } = await import(path.join(MODULE_DIR, "scripts/net/status.mjs"));
    for (const reason of ["mixed_content", "local_network_denied", "timeout", "refused", "unreachable"]) {
      const { detail } = statusText({ state: "offline", reason, message: "websocket error" });
      assert.match(detail, /http:\/\/127\.0\.0\.1:9/, reason);
    }
    assert.equal(statusText({ state: "offline", reason: "no_gm", message: "waiting" }).detail, "waiting");
  });
});
