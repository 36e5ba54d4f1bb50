/**
 * Relay mode (DESIGN "Reach and trust"): only GMs' browsers talk to the bridge, and one of them,
 * the relay host, relays for everyone else. Players send intents over Foundry's own socket
 * (channel `module.fate-bridge`) to that GM's client, which forwards each on its bridge
 * connection naming the Foundry user who sent it, and sends back the answer and the bridge's
 * emits the same way.
 *
 * The relay host is elected, not Foundry's `activeGM` (whose browser may have no bridge: the
 * Bridge URL is a world setting, and another GM's browser dials its own computer): every GM's
 * client says on the channel how its bridge connection is (`relay.gm`), and every client picks
 * the same one, the active GM with a live bridge connection of this protocol with the highest
 * role, then the lowest id ({@link electHost}). It is also the one client that writes what the
 * bridge's emits say (`Bridge#isWritingGM`, bridge.mjs).
 *
 * Foundry's socket has no addressing: every client hears every message on the channel. So the
 * relay puts there only what any player may see: players' own intents and answers (a relayed
 * user always has a player's authority, so a GM's own requests are never relayed: a GM without
 * its own bridge connection is a GM in Foundry, and the writing GM's client sends what it
 * changes there), the world's emits, and each GM's bridge status. Who sent a message is the id
 * Foundry's server attaches (a handler's last argument), never a field of the message; answers,
 * emits and statuses count only when a GM sent them. The host limits each sender (a token
 * bucket per user) and never forwards a request id twice (issue 35).
 * @module relay
 */
import { IntentChannel } from "./connection.mjs";
import { EMITS_FRAME, MODULE_ID, PROTOCOL_VERSION } from "../protocol.mjs";
import { connectionSettings } from "./settings.mjs";
import { statusText } from "./status.mjs";

export const CHANNEL = `module.${MODULE_ID}`;

/** The bridge's own bound on one message (bridge/protocol MAX_MESSAGE_BYTES). */
export const MAX_RELAYED_BYTES = 64 * 1024;

/**
 * The most the relay puts in one message on Foundry's socket: well under the server's buffer
 * (Socket.IO's default is 1 MB, and a message over it drops the sender's connection). A larger
 * answer (a page of `world.sync`) goes in parts; a larger batch of emits in several batches.
 */
export const MAX_SOCKET_MESSAGE = 256 * 1024;

/** Each relayed sender's requests per second at the host, and its burst: the bridge's own
 * per-user budget (bridge/relay.py RELAYED_RATE_PER_SECOND, RELAYED_BURST). */
export const SENDER_RATE = 20;
export const SENDER_BURST = 40;
/** Refusals a sender over its budget is answered per second; beyond, its requests are dropped. */
const REFUSALS_PER_SECOND = 5;
/** Request ids the host remembers (with their answers) to never forward one twice. */
const SEEN_REQUESTS = 512;

/**
 * A list cut into runs whose JSON stays under `limit` characters each (an item over it alone
 * makes a run of one).
 * @template T
 * @param {T[]} items
 * @param {number} limit
 * @returns {T[][]}
 */
export function batches(items, limit) {
  const out = [];
  let run = [];
  let size = 0;
  for (const item of items) {
    const length = JSON.stringify(item).length + 1;
    if (run.length && size + length > limit) {
      out.push(run);
      run = [];
      size = 0;
    }
    run.push(item);
    size += length;
  }
  if (run.length) out.push(run);
  return out;
}

/** The kinds of message on the channel. */
export const RELAY = Object.freeze({
  request: "relay.request",
  answer: "relay.answer",
  emits: "relay.emits",
  gm: "relay.gm",
  ask: "relay.ask"
});

/**
 * The sender Foundry's server stamped on a module socket message: the handler's last
 * argument (Foundry passes it after the data, so a client that sends extra arguments cannot
 * put a forged id in its place).
 * @param {unknown[]} args  the handler's arguments
 * @returns {string|null}
 */
export function senderOf(args) {
  const sender = args.length > 1 ? args.at(-1) : null;
  return typeof sender === "string" && sender ? sender : null;
}

/**
 * Hand a channel message to `receive` with the sender Foundry stamped; anything else (no
 * object, no sender) is not read.
 * @param {unknown[]} args  the handler's arguments
 * @param {(message: object, sender: string) => void} receive
 */
function heard(args, receive) {
  const [message] = args;
  const sender = senderOf(args);
  if (message && typeof message === "object" && sender) receive(message, sender);
}

/** Post a message to every other client on the channel (Foundry's socket does not echo). */
function post(socket, message) {
  socket?.emit(CHANNEL, message);
}

/**
 * A GM's bridge status reason in words as a player reads it: the relay's own line for it (said
 * of the GM's browser), or null when the relay has none and the status badge's words apply.
 * @param {string|null} reason
 * @returns {string|null}
 */
function relayReasonWords(reason) {
  if (!reason) return null;
  const key = `FATEBRIDGE.Relay.Reason.${reason}`;
  const text = game.i18n.format(key, { url: connectionSettings().url });
  return text === key ? null : text;
}

/** Foundry's role of a user (PLAYER 1 ... ASSISTANT 3, GAMEMASTER 4). */
const roleOf = (user) => Number(user?.role ?? (user?.isGM ? 4 : 1));

/**
 * The relay host among GMs' bridge statuses: an active GM user whose bridge connection is
 * live and speaks this protocol, the highest role first, then the lowest id. Pure.
 * @param {Map<string, {state: string, protocol?: number}>} statuses  GM user id -> bridge status
 * @param {(id: string) => User|undefined} userOf
 * @returns {string|null}
 */
export function electHost(statuses, userOf) {
  const live = [...statuses]
    .filter(([id, status]) => {
      const user = userOf(id);
      return user?.isGM && user.active !== false && status?.state === "connected" && status.protocol === PROTOCOL_VERSION;
    })
    .map(([id]) => userOf(id))
    .sort((a, b) => roleOf(b) - roleOf(a) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return live[0]?.id ?? null;
}

/**
 * Every client's view of the GMs' bridge connections, kept from the channel: each GM's client
 * says how its own is (`relay.gm`) when it changes and when asked (`relay.ask`, sent by every
 * client as it starts). A GM's own status is set here directly (Foundry's socket does not
 * echo). Only a GM may speak for itself: a player's claim, or a GM's about another, is not read.
 */
export class GmRoster {
  /** @param {{socket?: object, user?: User}} [options]  `user`: whose client this is (game.user) */
  constructor(options = {}) {
    this.socket = options.socket ?? game.socket;
    this.self = options.user ?? game.user;
    /** @type {Map<string, {state: string, reason: string|null, message: string|null, protocol: number}>} */
    this.statuses = new Map();
    /** @type {Set<() => void>} */
    this.listeners = new Set();
    /** @type {(() => object)|null} this GM's own bridge status, when this client is a GM's */
    this.own = null;
    this.listener = (...args) => heard(args, (message, sender) => this.#receive(message, sender));
    this.running = false;
    this.host = null;
  }

  /**
   * Start listening; a GM's client passes its bridge status reader, and says it now.
   * @param {(() => {state: string, reason: string|null, message: string|null})|null} [own]
   */
  start(own = null) {
    this.own = own;
    if (!this.running) {
      this.running = true;
      this.socket?.on(CHANNEL, this.listener);
    }
    this.announce();
    post(this.socket, { t: RELAY.ask });
    this.#changed();
    return this;
  }

  stop() {
    this.running = false;
    this.socket?.off?.(CHANNEL, this.listener);
    this.listeners.clear();
    this.statuses.clear();
  }

  /** @param {() => void} fn  run whenever the elected host or a GM's status may have changed */
  onChange(fn) {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** This GM's bridge status changed (or was asked for): everyone hears it. */
  announce() {
    if (!this.running || !this.own || !this.self?.isGM) return;
    const { state, reason, message } = this.own();
    const status = { state, reason: reason ?? null, message: message ?? null, protocol: PROTOCOL_VERSION };
    this.statuses.set(this.self.id, status);
    post(this.socket, { t: RELAY.gm, ...status });
    this.#changed();
  }

  /**
   * Foundry says a user connected or left: a GM who left holds no bridge for the table.
   * @param {User} user
   * @param {boolean} connected
   */
  userConnected(user, connected) {
    if (!user || !this.running) return;
    if (!connected) this.statuses.delete(user.id);
    this.#changed();
  }

  /** The elected relay host's user id, or null when no GM at the table has a live bridge. */
  electedHost() {
    return electHost(this.statuses, (id) => game.users.get(id));
  }

  /** The status a GM last said of its bridge. */
  statusOf(id) {
    return this.statuses.get(id) ?? null;
  }

  #receive(message, sender) {
    if (!this.running) return;
    if (message.t === RELAY.ask) {
      this.announce();
      return;
    }
    if (message.t !== RELAY.gm || !game.users.get(sender)?.isGM) return;
    this.statuses.set(sender, {
      state: String(message.state ?? "offline"),
      reason: typeof message.reason === "string" ? message.reason : null,
      message: typeof message.message === "string" ? message.message.slice(0, 500) : null,
      protocol: Number(message.protocol)
    });
    this.#changed();
  }

  #changed() {
    this.host = this.electedHost();
    for (const fn of this.listeners) fn();
  }
}

/**
 * A player's way to the bridge: through the relay host's client. It is "connected" while there
 * is one; a request in flight when the host changes (it left, or lost its bridge) is sent again,
 * with the same request id, to the next one (the bridge answers a request id once).
 */
export class RelayConnection extends IntentChannel {
  /** @param {{timeout?: number, socket?: object, roster?: GmRoster}} [options] */
  constructor(options = {}) {
    super({ timeout: 15000, ...options });
    this.socket = options.socket ?? game.socket;
    this.roster = options.roster ?? new GmRoster({ socket: this.socket });
    /** @type {string|null} the GM user whose client relays for this one */
    this.host = null;
    /** @type {Map<string, {event: string, body: object, resolve: Function, timer: any}>} */
    this.pending = new Map();
    this.listener = (...args) => heard(args, (message, sender) => this.#receive(message, sender));
    this.stopped = true;
    this.offRoster = null;
  }

  /** Start listening to the channel and ask the GMs' clients how their bridges are. */
  connect() {
    if (!this.stopped) return;
    this.stopped = false;
    this.socket?.on(CHANNEL, this.listener);
    this.offRoster = this.roster.onChange(() => this.follow());
    if (!this.roster.running) this.roster.start();
    this.follow();
  }

  /** Stop listening; calls in flight resolve as offline. */
  disconnect() {
    this.stopped = true;
    this.socket?.off?.(CHANNEL, this.listener);
    this.offRoster?.();
    this.offRoster = null;
    for (const [id, entry] of this.pending) {
      clearTimeout(entry.timer);
      this.pending.delete(id);
      entry.resolve(this.offlineAck());
    }
    this.setStatus("offline", "closed", null);
  }

  /**
   * Follow the elected relay host (again whenever a GM's bridge status changes or a user comes
   * or goes): a new host gets the requests still unanswered; with no GM at all, or none with a
   * live bridge, the bridge is out of reach and the status says which.
   */
  follow() {
    if (this.stopped) return;
    const elected = this.roster.electedHost();
    if (!elected) {
      this.host = null;
      this.#noHost();
      return;
    }
    if (elected === this.host && this.connected) return;
    this.host = elected;
    this.setStatus("connected", null, null);
    // Requests the last host never answered go to this one, same request ids.
    for (const [id, entry] of this.pending) {
      entry.parts = undefined;
      this.#arm(id, entry);
      post(this.socket, { t: RELAY.request, event: entry.event, payload: entry.body });
    }
    this.connectedNow();
  }

  /** Why no GM relays: none at the table, none heard from yet, or their bridges are down. */
  #noHost() {
    const gms = game.users.filter((u) => u.isGM && u.active);
    if (!gms.length) {
      this.setStatus("offline", "no_gm", game.i18n.localize("FATEBRIDGE.Relay.NoGM"));
      return;
    }
    const heard = gms.map((u) => this.roster.statusOf(u.id)).filter(Boolean);
    if (!heard.length) {
      this.setStatus("connecting", "waiting_gm", game.i18n.localize("FATEBRIDGE.Relay.WaitingGM"));
      return;
    }
    const mismatch = heard.find((s) => s.state === "connected" && s.protocol !== PROTOCOL_VERSION);
    if (mismatch) {
      this.setStatus("offline", "protocol_mismatch", game.i18n.format("FATEBRIDGE.Relay.GMProtocol", { theirs: String(mismatch.protocol), ours: PROTOCOL_VERSION }));
      return;
    }
    // The GM's cause in words a player reads (never the transport's "websocket error").
    const down = heard.find((s) => s.state !== "connected") ?? heard[0];
    const detail = relayReasonWords(down.reason ?? null) ?? statusText({ state: String(down.state ?? "offline"), reason: down.reason ?? null, message: down.message ?? null }).detail;
    this.setStatus("offline", "gm_offline", game.i18n.format("FATEBRIDGE.Relay.GMOffline", { detail: String(detail) }));
  }

  /**
   * One intent to the host; resolves to its answer, or a timeout after `timeout` ms without one.
   * @param {string} event
   * @param {object} body
   */
  send(event, body) {
    if (!this.connected) return Promise.resolve(this.offlineAck());
    const id = body.request_id;
    return new Promise((resolve) => {
      const entry = { event, body, resolve, timer: null };
      this.pending.set(id, entry);
      this.#arm(id, entry);
      post(this.socket, { t: RELAY.request, event, payload: body });
    });
  }

  /** Start (or restart) a request's wait for its answer. */
  #arm(id, entry) {
    clearTimeout(entry.timer);
    entry.timer = setTimeout(() => {
      if (this.pending.get(id) !== entry) return;
      this.pending.delete(id);
      entry.resolve(this.ackLost(new Error(game.i18n.localize("FATEBRIDGE.Relay.NoAnswer"))));
    }, this.options.timeout);
  }

  #receive(message, sender) {
    if (this.stopped) return;
    // Only GMs speak for the bridge: a player cannot forge answers or emits. Emits count from
    // the host alone (two GMs briefly both relaying would show each twice); an answer from any
    // GM (the last host's, to a request sent again).
    if (!game.users.get(sender)?.isGM) return;
    if (message.t === RELAY.emits && sender === this.host && Array.isArray(message.emits)) this.deliver(EMITS_FRAME, { emits: message.emits });
    else if (message.t === RELAY.answer && message.to === game.user.id) this.#onAnswer(message);
  }

  #onAnswer(message) {
    const entry = this.pending.get(message.id);
    if (!entry) return; // answered already (two GMs relayed it), or given up on
    let ack = message.ack;
    if (Number.isInteger(message.parts) && message.parts > 1) {
      // A large answer, in parts: whole once every part is here.
      entry.parts ??= new Array(message.parts).fill(null);
      if (entry.parts.length !== message.parts || !(message.part >= 0 && message.part < message.parts)) return;
      entry.parts[message.part] = String(message.chunk ?? "");
      if (entry.parts.includes(null)) return;
      try {
        ack = JSON.parse(entry.parts.join(""));
      } catch {
        ack = null;
      }
    }
    this.pending.delete(message.id);
    clearTimeout(entry.timer);
    entry.resolve(this.receiveAck(ack));
  }
}

/**
 * The active GM's side: forwards the other users' intents on its own bridge connection and
 * broadcasts what the bridge sends back.
 */
export class RelayHost {
  /**
   * @param {import("./connection.mjs").ConnectionManager} connection  this GM's bridge connection
   * @param {{socket?: object, now?: () => number, rate?: number, burst?: number}} [options]
   *   `now` in ms (a test's clock); `rate`/`burst`: each sender's requests per second
   */
  constructor(connection, options = {}) {
    this.connection = connection;
    this.socket = options.socket ?? game.socket;
    this.now = options.now ?? (() => Date.now());
    this.limits = { rate: options.rate ?? SENDER_RATE, burst: options.burst ?? SENDER_BURST };
    /** @type {Map<string, {tokens: number, stamp: number, refusals: number}>} each sender's bucket */
    this.buckets = new Map();
    /** @type {Map<string, object|null>} "sender/request id" -> its answer (null while in flight) */
    this.seen = new Map();
    this.listener = (...args) => heard(args, (message, sender) => this.#receive(message, sender));
    this.unsubscribe = [];
    this.running = false;
  }

  /** Begin relaying: listen to the channel, forward the bridge's emits to every client. */
  start() {
    if (this.running) return this;
    this.running = true;
    this.socket?.on(CHANNEL, this.listener);
    // Every frame this GM hears (its own answers' emits included) reaches every client.
    const forward = (frame) => {
      if (!this.running || !Array.isArray(frame?.emits)) return;
      for (const emits of batches(frame.emits, MAX_SOCKET_MESSAGE)) post(this.socket, { t: RELAY.emits, emits });
    };
    this.connection.on(EMITS_FRAME, forward);
    this.unsubscribe.push(() => this.connection.off(EMITS_FRAME, forward));
    return this;
  }

  /** Stop relaying (another GM is the elected host now, or the settings changed). */
  stop() {
    if (!this.running) return;
    this.running = false;
    this.socket?.off?.(CHANNEL, this.listener);
    for (const off of this.unsubscribe.splice(0)) off();
  }

  /**
   * Foundry says a user left: the bridge stops counting it present (its cards come here), and
   * this host forgets its bucket.
   * @param {User} user
   */
  async userLeft(user) {
    this.buckets.delete(user?.id);
    if (!this.running || !user || user.isGM || !this.connection.connected) return null;
    return this.connection.call("relay.leave", { user: user.id });
  }

  /**
   * Take one of `sender`'s tokens (refilled at `rate` a second up to `burst`). When none is
   * left: "refuse" while the sender's refusals are few (a well-behaved client slows down on
   * `rate_limited`), else "drop" (a flood gets no answer to broadcast).
   * @param {string} sender
   * @returns {"ok"|"refuse"|"drop"}
   */
  admit(sender) {
    const now = this.now();
    const { rate, burst } = this.limits;
    let bucket = this.buckets.get(sender);
    if (!bucket) {
      bucket = { tokens: burst, stamp: now, refusals: 0 };
      this.buckets.set(sender, bucket);
    }
    const elapsed = Math.max(0, now - bucket.stamp) / 1000;
    bucket.tokens = Math.min(burst, bucket.tokens + elapsed * rate);
    bucket.refusals = Math.max(0, bucket.refusals - elapsed * REFUSALS_PER_SECOND);
    bucket.stamp = now;
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return "ok";
    }
    if (bucket.refusals + 1 <= REFUSALS_PER_SECOND) {
      bucket.refusals += 1;
      return "refuse";
    }
    return "drop";
  }

  #receive(message, sender) {
    if (!this.running) return;
    if (message.t === RELAY.request) this.#relay(message, sender);
  }

  async #relay(message, sender) {
    const id = typeof message.payload?.request_id === "string" ? message.payload.request_id : null;
    // The player's module words it from `sentence` in its own language; `message` is for logs.
    const refuse = (code, key, data) => this.#answer(sender, id, { ok: false, error: { code, message: game.i18n.format(key, data), params: { ...data, sentence: key } } });
    if (!id || id.length > 128) return; // nothing to answer to: not a request this module sends
    // A request id seen already: in flight, its answer comes once; answered, the same answer
    // goes back to its sender alone, and nothing reaches the bridge or the table again.
    const key = `${sender}/${id}`;
    if (this.seen.has(key)) {
      const done = this.seen.get(key);
      if (done) this.#answer(sender, id, done);
      return;
    }
    const admitted = this.admit(sender);
    if (admitted === "drop") return;
    if (admitted === "refuse") return refuse("rate_limited", "FATEBRIDGE.Relay.RateLimited", { rate: this.limits.rate });
    const user = game.users.get(sender);
    if (!user) return refuse("forbidden", "FATEBRIDGE.Relay.UnknownUser", { user: sender });
    if (user.isGM) return refuse("forbidden", "FATEBRIDGE.Relay.GMsConnectThemselves", {});
    if (typeof message.event !== "string" || !message.event || message.event.length > 64) {
      return refuse("invalid", "FATEBRIDGE.Relay.Invalid", {});
    }
    if (JSON.stringify(message).length > MAX_RELAYED_BYTES) {
      return refuse("too_large", "FATEBRIDGE.Relay.TooLarge", { limit: MAX_RELAYED_BYTES });
    }
    this.#remember(key, null);
    // The envelope names the sender Foundry stamped; the bridge checks everything else.
    const ack = await this.connection.send("relay", { user: sender, event: message.event, payload: message.payload });
    // Its emits went to every client as a frame already (see start).
    const { emits: _emits, ...answer } = ack;
    // An answer that says nothing happened (offline, timed out, refused unread) may be asked again.
    if (["offline", "timeout", "rate_limited"].includes(answer.error?.code)) this.seen.delete(key);
    else this.#remember(key, answer);
    this.#answer(sender, id, answer);
  }

  /** Keep a request's answer, the oldest forgotten past SEEN_REQUESTS. */
  #remember(key, answer) {
    this.seen.delete(key);
    this.seen.set(key, answer);
    if (this.seen.size > SEEN_REQUESTS) this.seen.delete(this.seen.keys().next().value);
  }

  #answer(to, id, ack) {
    if (!this.running) return;
    const text = JSON.stringify(ack);
    if (text.length <= MAX_SOCKET_MESSAGE) {
      post(this.socket, { t: RELAY.answer, to, id, ack });
      return;
    }
    // Half the bound per part: escaped again inside the message, a part at most doubles.
    const step = MAX_SOCKET_MESSAGE / 2;
    const parts = Math.ceil(text.length / step);
    for (let part = 0; part < parts; part++) {
      const chunk = text.slice(part * step, (part + 1) * step);
      post(this.socket, { t: RELAY.answer, to, id, part, parts, chunk });
    }
  }
}
