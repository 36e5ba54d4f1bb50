/**
 * Relay mode (DESIGN "Reach and trust"): only the active GM's browser talks to the bridge.
 * Everyone else sends intents over Foundry's own socket (channel `module.fate-bridge`) to that
 * GM's client, which forwards each on its bridge connection naming the Foundry user who sent
 * it, and sends back the answer and the bridge's emits the same way.
 *
 * Foundry's socket has no addressing: every client hears every message on the channel. So the
 * relay puts there only what any player may see: players' own intents and answers (a relayed
 * user always has a player's authority), the world's emits, and the host's connection status.
 * Who sent a message is the id Foundry's server attaches (a handler's last argument), never a
 * field of the message; answers, emits and status count only when a GM sent them.
 * @module relay
 */
import { IntentChannel } from "./connection.mjs";
import { EMITS_FRAME, MODULE_ID, PROTOCOL_VERSION } from "./protocol.mjs";

export const CHANNEL = `module.${MODULE_ID}`;

/** The bridge's own bound on one message (bridge/protocol MAX_MESSAGE_BYTES). */
export const MAX_RELAYED_BYTES = 64 * 1024;

/**
 * The most the relay puts in one message on Foundry's socket: well under the server's buffer
 * (Socket.IO's default is 1 MB, and a message over it drops the sender's connection). A larger
 * answer (a page of `world.sync`) goes in parts; a larger batch of emits in several batches.
 */
export const MAX_SOCKET_MESSAGE = 256 * 1024;

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
  host: "relay.host",
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
 * The GM whose client relays: Foundry's active GM.
 * @returns {User|null}
 */
function activeGM() {
  return game.users.activeGM ?? null;
}

/**
 * A player's way to the bridge: through the active GM's client. It is "connected" while that
 * GM's bridge connection is; a request in flight when the active GM changes is sent again, with
 * the same request id, to the next one (the bridge answers a request id once).
 */
export class RelayConnection extends IntentChannel {
  /** @param {{timeout?: number, socket?: object}} [options] */
  constructor(options = {}) {
    super({ timeout: 15000, ...options });
    this.socket = options.socket ?? game.socket;
    /** @type {string|null} the GM user whose client relays for this one */
    this.host = null;
    /** @type {Map<string, {event: string, body: object, resolve: Function, timer: any}>} */
    this.pending = new Map();
    this.listener = (...args) => this.#receive(args);
    this.stopped = true;
  }

  /** Start listening to the channel and ask the active GM's client how its bridge is. */
  connect() {
    if (!this.stopped) return;
    this.stopped = false;
    this.socket?.on(CHANNEL, this.listener);
    this.follow();
  }

  /** Stop listening; calls in flight resolve as offline. */
  disconnect() {
    this.stopped = true;
    this.socket?.off?.(CHANNEL, this.listener);
    for (const [id, entry] of this.pending) {
      clearTimeout(entry.timer);
      this.pending.delete(id);
      entry.resolve(this.offlineAck());
    }
    this.setStatus("offline", "closed", null);
  }

  /**
   * Follow Foundry's active GM (called again whenever a user connects or leaves): a new host
   * is asked for its bridge's status; with no GM at all, the bridge is out of reach.
   */
  follow() {
    if (this.stopped) return;
    const gm = activeGM();
    if (!gm?.active) {
      this.host = null;
      this.setStatus("offline", "no_gm", game.i18n.localize("FATEBRIDGE.Relay.NoGM"));
      return;
    }
    if (gm.id === this.host) return;
    this.host = gm.id;
    this.setStatus("connecting", "waiting_gm", game.i18n.localize("FATEBRIDGE.Relay.WaitingGM"));
    this.#post({ t: RELAY.ask });
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
      this.#post({ t: RELAY.request, event, payload: body });
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

  #post(message) {
    this.socket?.emit(CHANNEL, message);
  }

  #receive(args) {
    const [message] = args;
    const sender = senderOf(args);
    if (this.stopped || !message || typeof message !== "object" || !sender) return;
    // Only the host speaks for the bridge: a player cannot forge answers, emits or status.
    if (sender !== this.host || !game.users.get(sender)?.isGM) return;
    if (message.t === RELAY.host) this.#onHostStatus(message);
    else if (message.t === RELAY.emits && Array.isArray(message.emits)) this.deliver(EMITS_FRAME, { emits: message.emits });
    else if (message.t === RELAY.answer && message.to === game.user.id) this.#onAnswer(message);
  }

  #onHostStatus(message) {
    const was = this.connected;
    if (message.state === "connected" && message.protocol === PROTOCOL_VERSION) {
      this.setStatus("connected", null, null);
      if (!was) {
        // Requests the last host never answered go to this one, same request ids.
        for (const [id, entry] of this.pending) {
          entry.parts = undefined;
          this.#arm(id, entry);
          this.#post({ t: RELAY.request, event: entry.event, payload: entry.body });
        }
        this.connectedNow();
      }
      return;
    }
    const reason = message.state === "connected" ? "protocol_mismatch" : "gm_offline";
    const detail = message.state === "connected"
      ? game.i18n.format("FATEBRIDGE.Relay.GMProtocol", { theirs: String(message.protocol), ours: PROTOCOL_VERSION })
      : game.i18n.format("FATEBRIDGE.Relay.GMOffline", { detail: String(message.message ?? message.state ?? "") });
    this.setStatus("offline", reason, detail);
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
   * @param {{socket?: object}} [options]
   */
  constructor(connection, options = {}) {
    this.connection = connection;
    this.socket = options.socket ?? game.socket;
    this.listener = (...args) => this.#receive(args);
    this.unsubscribe = [];
    this.running = false;
  }

  /** Begin relaying: listen to the channel, announce this bridge's status, forward emits. */
  start() {
    if (this.running) return this;
    this.running = true;
    this.socket?.on(CHANNEL, this.listener);
    this.unsubscribe.push(this.connection.onStatus(() => this.announce()));
    // Every frame this GM hears (its own answers' emits included) reaches every client.
    const forward = (frame) => {
      if (!this.running || !Array.isArray(frame?.emits)) return;
      for (const emits of batches(frame.emits, MAX_SOCKET_MESSAGE)) this.#post({ t: RELAY.emits, emits });
    };
    this.connection.on(EMITS_FRAME, forward);
    this.unsubscribe.push(() => this.connection.off(EMITS_FRAME, forward));
    this.announce();
    return this;
  }

  /** Stop relaying (another GM became the active one, or the settings changed). */
  stop() {
    if (!this.running) return;
    this.running = false;
    this.socket?.off?.(CHANNEL, this.listener);
    for (const off of this.unsubscribe.splice(0)) off();
  }

  /** Tell every client how this GM's bridge connection is. */
  announce() {
    if (!this.running) return;
    const { state, reason, message } = this.connection.status;
    this.#post({ t: RELAY.host, state, reason, message, protocol: PROTOCOL_VERSION });
  }

  /**
   * Foundry says a user left: the bridge stops counting it present (its cards come here).
   * @param {User} user
   */
  async userLeft(user) {
    if (!this.running || !user || user.isGM || !this.connection.connected) return null;
    return this.connection.call("relay.leave", { user: user.id });
  }

  #post(message) {
    this.socket?.emit(CHANNEL, message);
  }

  #receive(args) {
    const [message] = args;
    const sender = senderOf(args);
    if (!this.running || !message || typeof message !== "object" || !sender) return;
    if (message.t === RELAY.ask) this.announce();
    else if (message.t === RELAY.request) this.#relay(message, sender);
  }

  async #relay(message, sender) {
    const id = typeof message.payload?.request_id === "string" ? message.payload.request_id : null;
    // The player's module words it from `sentence` in its own language; `message` is for logs.
    const refuse = (code, key, data) => this.#answer(sender, id, { ok: false, error: { code, message: game.i18n.format(key, data), params: { ...data, sentence: key } } });
    if (!id) return; // nothing to answer to: not a request this module sends
    const user = game.users.get(sender);
    if (!user) return refuse("forbidden", "FATEBRIDGE.Relay.UnknownUser", { user: sender });
    if (user.isGM) return refuse("forbidden", "FATEBRIDGE.Relay.GMsConnectThemselves", {});
    if (typeof message.event !== "string" || !message.event || message.event.length > 64) {
      return refuse("invalid", "FATEBRIDGE.Relay.Invalid", {});
    }
    if (JSON.stringify(message).length > MAX_RELAYED_BYTES) {
      return refuse("too_large", "FATEBRIDGE.Relay.TooLarge", { limit: MAX_RELAYED_BYTES });
    }
    // The envelope names the sender Foundry stamped; the bridge checks everything else.
    const ack = await this.connection.send("relay", { user: sender, event: message.event, payload: message.payload });
    // Its emits went to every client as a frame already (see start).
    const { emits: _emits, ...answer } = ack;
    this.#answer(sender, id, answer);
  }

  #answer(to, id, ack) {
    if (!this.running) return;
    const text = JSON.stringify(ack);
    if (text.length <= MAX_SOCKET_MESSAGE) {
      this.#post({ t: RELAY.answer, to, id, ack });
      return;
    }
    // Half the bound per part: escaped again inside the message, a part at most doubles.
    const step = MAX_SOCKET_MESSAGE / 2;
    const parts = Math.ceil(text.length / step);
    for (let part = 0; part < parts; part++) {
      const chunk = text.slice(part * step, (part + 1) * step);
      this.#post({ t: RELAY.answer, to, id, part, parts, chunk });
    }
  }
}
