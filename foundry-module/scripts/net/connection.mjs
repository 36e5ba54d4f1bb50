/**
 * The Socket.IO connection to the bridge: handshake auth, status, its own reconnect with
 * exponential backoff and jitter, and acked calls.
 * @module connection
 */
import { cardPutBack, EMITS_FRAME, FINAL_REFUSALS, NAMESPACE, PROTOCOL_VERSION } from "../protocol.mjs";
import { classifyPath, localNetworkPermission } from "./reach.mjs";
import { statusText } from "./status.mjs";

/** @typedef {"connected"|"connecting"|"offline"|"refused"} ConnectionState */

/**
 * @typedef {object} ConnectionStatus
 * @property {ConnectionState} state
 * @property {string|null} reason   machine-readable cause (a refusal reason, or a transport error)
 * @property {string|null} message  human-readable cause, as the bridge or the transport said it
 */

/**
 * @typedef {object} ConnectionOptions
 * @property {string} url          bridge base URL, e.g. http://127.0.0.1:8765
 * @property {string} world        bridge world id
 * @property {"gm"|"player"} role
 * @property {string} user         the Foundry user id
 * @property {string} [key]        the GM key (GM only)
 * @property {number} [baseDelay]  first retry delay in ms
 * @property {number} [maxDelay]   retry delay cap in ms
 * @property {number} [timeout]    ack timeout in ms
 * @property {() => Promise<Function>|Function} [ioFactory]  returns socket.io-client's `io`
 */

/** The socket.io-client `io` to use: Foundry's global one, else the copy packed in the zip. */
async function resolveIo() {
  if (typeof globalThis.io === "function") return globalThis.io;
  const mod = await import("../vendor/socket.io.esm.min.js");
  return mod.io ?? mod.default;
}

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/**
 * Why a connection to `url` failed, as far as a page can tell (browsers hide a websocket's
 * failure reason on purpose): an https page's ws:// to another machine is mixed content; a
 * denied "Local network access" permission blocks loopback and private addresses (Chrome
 * 142+); a timeout; and otherwise nothing listening, or (https) an untrusted certificate.
 * @param {string} url           the bridge URL tried
 * @param {unknown} err          socket.io's connect_error
 * @param {string} [pageProtocol] the Foundry page's `location.protocol`
 * @param {string|null} [lna]    the "local-network-access" permission's state, if the browser has one
 * @returns {"mixed_content"|"local_network_denied"|"timeout"|"refused"|"unreachable"}
 */
export function unreachableReason(url, err, pageProtocol, lna = null) {
  let target = null;
  try {
    target = new URL(url);
  } catch {
    return "unreachable";
  }
  const host = target.hostname.toLowerCase();
  const loopback = LOOPBACK_HOSTS.has(host) || host.endsWith(".localhost") || /^127\./.test(host);
  if (pageProtocol === "https:" && target.protocol === "http:" && !loopback) return "mixed_content";
  if (lna === "denied") return "local_network_denied";
  if (/time ?out/i.test(String(err?.message ?? err))) return "timeout";
  return target.protocol === "https:" ? "unreachable" : "refused";
}

/**
 * The state of the browser's Local Network Access permission (`loopback-network` and its
 * alias `local-network-access`), or null where the browser has neither.
 * @returns {Promise<string|null>}
 */
function localNetworkAccess() {
  return localNetworkPermission();
}

/**
 * The one line saying why this page cannot reach `url` at all (a Bridge URL that is no
 * address, or a way the browser forbids), or null when nothing stands in the way.
 * @param {string} url
 * @returns {{reason: "bad_url"|"mixed_content"|"path_blocked", message: string}|null}
 */
export function pathProblem(url) {
  const path = classifyPath(globalThis.location?.href ?? "", url);
  if (path.ok) return null;
  const message = globalThis.game?.i18n?.format(`FATEBRIDGE.Reach.${path.key}`, path.data) ?? path.key;
  const reason = path.kind === "bad_url" ? "bad_url" : path.kind === "mixed_content" ? "mixed_content" : "path_blocked";
  return { reason, message };
}

/** A fresh request id for an intent. */
function requestId() {
  return globalThis.crypto.randomUUID();
}

/**
 * What every way of reaching the bridge shares: its status and listeners, and acked calls with
 * their retries. A subclass sends one message ({@link IntentChannel#send}) and reports its
 * status, connects and emits through the protected methods; the rest of the module sees only
 * this interface, whether the bridge is reached directly or relayed by the GM's client.
 */
export class IntentChannel {
  /** @param {{timeout?: number, rateRetries?: number, rateDelay?: number}} options */
  constructor(options) {
    this.options = { timeout: 10000, rateRetries: 6, rateDelay: 250, ...options };
    /** @type {ConnectionStatus} */
    this.status = { state: "offline", reason: null, message: null };
    /** @type {Set<(status: ConnectionStatus) => void>} */
    this.statusListeners = new Set();
    /** @type {Set<() => void>} */
    this.connectListeners = new Set();
    /** @type {Set<() => void>} */
    this.ackLostListeners = new Set();
    /** @type {Map<string, Set<Function>>} */
    this.handlers = new Map();
  }

  get connected() {
    return this.status.state === "connected";
  }

  /**
   * Listen to status changes.
   * @param {(status: ConnectionStatus) => void} fn
   * @returns {() => void} unsubscribe
   */
  onStatus(fn) {
    this.statusListeners.add(fn);
    return () => this.statusListeners.delete(fn);
  }

  /**
   * Run after every successful (re)connect.
   * @param {() => void} fn
   */
  onConnect(fn) {
    this.connectListeners.add(fn);
    return () => this.connectListeners.delete(fn);
  }

  /**
   * Run when a call gets no answer in time: it may have committed, and its emits came in the
   * answer that never arrived (see {@link IntentChannel#call}).
   * @param {() => void} fn
   */
  onAckLost(fn) {
    this.ackLostListeners.add(fn);
    return () => this.ackLostListeners.delete(fn);
  }

  /**
   * Handle a bridge -> client emit (`emits`, `notice`, ...).
   * @param {string} event
   * @param {Function} fn
   */
  on(event, fn) {
    if (!this.handlers.has(event)) this.handlers.set(event, new Set());
    this.handlers.get(event).add(fn);
  }

  /**
   * Stop handling an emit.
   * @param {string} event
   * @param {Function} fn
   */
  off(event, fn) {
    this.handlers.get(event)?.delete(fn);
  }

  /**
   * Send an intent and wait for its ack. A fresh `request_id` is added unless the payload
   * names one. Never rejects: transport failures resolve to an error ack. A `rate_limited`
   * answer (the bridge refused it unread, e.g. a burst of actor syncs) is sent again, same
   * request id, after a growing pause: a busy moment slows the table down instead of losing
   * a click. The commit's own emits come in the ack (`emits`, protocol 4): they go to the
   * `emits` frame's listeners before the call resolves, as a frame of their own would have.
   * @param {string} event
   * @param {object} [payload]
   * @returns {Promise<import("../protocol.mjs").Ack>}
   */
  async call(event, payload = {}) {
    if (!this.connected) return this.offlineAck();
    const body = { request_id: requestId(), ...payload };
    let ack = await this.send(event, body);
    for (let retry = 0; retry < this.options.rateRetries && ack.error?.code === "rate_limited"; retry++) {
      await new Promise((resolve) => setTimeout(resolve, this.options.rateDelay * 2 ** retry));
      if (!this.connected) break;
      ack = await this.send(event, body);
    }
    return ack;
  }

  /**
   * The answer to a call made while the bridge cannot be reached.
   * @returns {import("../protocol.mjs").Ack}
   */
  offlineAck() {
    // Said in the user's language with why (the status line's words), never the bridge's.
    const reason = statusText(this.status).detail || game.i18n.localize(`FATEBRIDGE.Status.${this.status.state}`);
    return { ok: false, error: { code: "offline", message: this.status.message ?? "offline", params: { sentence: "FATEBRIDGE.Error.offlineBecause", reason } } };
  }

  /**
   * Send one message as it is and resolve to its ack (never rejects). Subclasses implement it.
   * @param {string} _event
   * @param {object} _body
   * @returns {Promise<import("../protocol.mjs").Ack>}
   */
  async send(_event, _body) {
    return this.offlineAck();
  }

  /** Close and stop retrying. */
  disconnect() {}

  /**
   * Check an ack's shape and hand its emits to the frame's listeners, as a frame would be.
   * @param {unknown} ack
   * @returns {import("../protocol.mjs").Ack}
   */
  receiveAck(ack) {
    if (!ack || typeof ack !== "object" || typeof ack.ok !== "boolean") {
      return { ok: false, error: { code: "bad_ack", message: "The bridge sent an unexpected answer." } };
    }
    if (Array.isArray(ack.emits)) this.deliver(EMITS_FRAME, { emits: ack.emits });
    return cardPutBack(ack);
  }

  /** The call's answer never came: it may have committed. */
  ackLost(err) {
    for (const fn of this.ackLostListeners) fn();
    return { ok: false, error: { code: "timeout", message: String(err?.message ?? err) } };
  }

  /**
   * Run the listeners of one bridge emit.
   * @param {string} event
   * @param {unknown} data
   */
  deliver(event, data) {
    for (const fn of this.handlers.get(event) ?? []) fn(data);
  }

  /** Tell the connect listeners. */
  connectedNow() {
    for (const fn of this.connectListeners) fn();
  }

  setStatus(state, reason, message) {
    const prev = this.status;
    if (prev.state === state && prev.reason === reason && prev.message === message) return;
    this.status = { state, reason, message };
    for (const fn of this.statusListeners) fn(this.status);
  }
}

/** The bridge reached directly: this browser's own Socket.IO connection. */
export class ConnectionManager extends IntentChannel {
  /** @param {ConnectionOptions} options */
  constructor(options) {
    super({ baseDelay: 1000, maxDelay: 30000, ...options });
    this.socket = null;
    this.attempt = 0;
    this.retryTimer = null;
    this.stopped = true;
  }

  /**
   * Handle a bridge -> client emit (`card`, `notice`, ...).
   * @param {string} event
   * @param {Function} fn
   */
  on(event, fn) {
    super.on(event, fn);
    this.socket?.on(event, fn);
  }

  /**
   * @param {string} event
   * @param {Function} fn
   */
  off(event, fn) {
    super.off(event, fn);
    this.socket?.off(event, fn);
  }

  /** Open the connection; retries on its own until connected, refused or closed. */
  async connect() {
    this.stopped = false;
    // A Bridge URL that is no address never connects: say which part, and do not retry.
    const bad = pathProblem(this.options.url);
    if (bad?.reason === "bad_url") {
      this.setStatus("refused", bad.reason, bad.message);
      return;
    }
    // A GM without the key cannot connect as a GM; it stays a GM in Foundry (another GM relays).
    if (this.options.role === "gm" && !this.options.key) {
      this.setStatus("refused", "no_key", null);
      return;
    }
    if (!this.socket) {
      const io = await (this.options.ioFactory ?? resolveIo)();
      if (this.stopped) return;
      this.socket = this.#createSocket(io);
    }
    this.#open();
  }

  /** Close the connection and stop retrying. */
  disconnect() {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.socket?.disconnect();
    this.socket?.removeAllListeners?.();
    this.socket = null;
    this.setStatus("offline", "closed", null);
  }

  /**
   * One message on the socket, as it is; resolves to its ack.
   * @param {string} event
   * @param {object} body
   * @returns {Promise<import("../protocol.mjs").Ack>}
   */
  send(event, body) {
    const socket = this.socket;
    if (!this.connected || !socket) return Promise.resolve(this.offlineAck());
    return new Promise((resolve) => {
      // The callback runs as the answer's packet is read, where a frame's listeners would run.
      socket.timeout(this.options.timeout).emit(event, body, (err, ack) => resolve(err ? this.ackLost(err) : this.receiveAck(ack)));
    });
  }

  /**
   * Run the listeners of one bridge emit: the socket's own, which every frame reaches.
   * @param {string} event
   * @param {unknown} data
   */
  deliver(event, data) {
    for (const fn of this.socket?.listeners(event) ?? []) fn(data);
  }

  #createSocket(io) {
    const { url, world, role, user, key } = this.options;
    /** @type {Record<string, unknown>} */
    const auth = { world, role, user, protocol: PROTOCOL_VERSION };
    if (key) auth.key = key;
    const socket = io(url + NAMESPACE, {
      transports: ["websocket"],
      reconnection: false,
      autoConnect: false,
      auth
    });
    socket.on("connect", () => {
      this.attempt = 0;
      this.setStatus("connected", null, null);
      this.connectedNow();
    });
    socket.on("connect_error", (err) => this.#onConnectError(err));
    socket.on("disconnect", (reason) => {
      if (this.stopped) return;
      this.setStatus("offline", String(reason), null);
      this.#scheduleRetry();
    });
    for (const [event, fns] of this.handlers) for (const fn of fns) socket.on(event, fn);
    return socket;
  }

  #open() {
    if (this.stopped || !this.socket || this.socket.connected) return;
    this.setStatus("connecting", null, null);
    this.socket.connect();
  }

  async #onConnectError(err) {
    const data = err?.data && typeof err.data === "object" ? err.data : null;
    const reason = typeof data?.reason === "string" ? data.reason : null;
    if (reason && FINAL_REFUSALS.includes(reason)) {
      this.setStatus("refused", reason, String(data.message ?? err.message));
      return;
    }
    const socket = this.socket;
    // A way this browser forbids (Chrome 147+'s Local Network Access, mixed content) is named
    // with its fix; otherwise what the page can tell.
    const blocked = reason ? null : pathProblem(this.options.url);
    const why = reason ?? blocked?.reason ?? unreachableReason(this.options.url, err, globalThis.location?.protocol, await localNetworkAccess());
    if (this.stopped || socket !== this.socket) return;
    this.setStatus("offline", why, blocked?.message ?? String(data?.message ?? err?.message ?? err));
    this.#scheduleRetry();
  }

  /** Exponential backoff with full jitter between half and all of the step. */
  nextDelay() {
    const { baseDelay, maxDelay } = this.options;
    const step = Math.min(maxDelay, baseDelay * 2 ** this.attempt);
    this.attempt = Math.min(this.attempt + 1, 30);
    return Math.round(step / 2 + Math.random() * (step / 2));
  }

  #scheduleRetry() {
    if (this.stopped || this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.#open();
    }, this.nextDelay());
  }
}
