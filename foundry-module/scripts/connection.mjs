/**
 * The Socket.IO connection to the bridge: handshake auth, status, its own reconnect with
 * exponential backoff and jitter, and acked calls.
 * @module connection
 */
import { EMITS_FRAME, FINAL_REFUSALS, NAMESPACE, PROTOCOL_VERSION } from "./protocol.mjs";

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
export async function resolveIo() {
  if (typeof globalThis.io === "function") return globalThis.io;
  const mod = await import("./vendor/socket.io.esm.min.js");
  return mod.io ?? mod.default;
}

/** A fresh request id for an intent. */
export function requestId() {
  return globalThis.crypto.randomUUID();
}

export class ConnectionManager {
  /** @param {ConnectionOptions} options */
  constructor(options) {
    this.options = { baseDelay: 1000, maxDelay: 30000, timeout: 10000, rateRetries: 6, rateDelay: 250, ...options };
    /** @type {ConnectionStatus} */
    this.status = { state: "offline", reason: null, message: null };
    this.socket = null;
    this.attempt = 0;
    this.retryTimer = null;
    this.stopped = true;
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
   * answer that never arrived (see {@link ConnectionManager#call}).
   * @param {() => void} fn
   */
  onAckLost(fn) {
    this.ackLostListeners.add(fn);
    return () => this.ackLostListeners.delete(fn);
  }

  /**
   * Handle a bridge -> client emit (`card`, `notice`, ...).
   * @param {string} event
   * @param {Function} fn
   */
  on(event, fn) {
    if (!this.handlers.has(event)) this.handlers.set(event, new Set());
    this.handlers.get(event).add(fn);
    this.socket?.on(event, fn);
  }

  /** Open the connection; retries on its own until connected, refused or closed. */
  async connect() {
    this.stopped = false;
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
    this.#setStatus("offline", "closed", null);
  }

  /**
   * Send an intent and wait for its ack. A fresh `request_id` is added.
   * Never rejects: transport failures resolve to an error ack. A `rate_limited` answer (the
   * bridge refused it unread, e.g. a burst of actor syncs) is sent again, same request id,
   * after a growing pause: a busy moment slows the table down instead of losing a click.
   * The commit's own emits come in the ack (`emits`, protocol 4): they go to the `emits`
   * frame's listeners before the call resolves, as a frame of their own would have.
   * @param {string} event
   * @param {object} [payload]
   * @returns {Promise<import("./protocol.mjs").Ack>}
   */
  async call(event, payload = {}) {
    if (!this.connected || !this.socket) {
      return { ok: false, error: { code: "offline", message: this.status.message ?? "offline" } };
    }
    const body = { request_id: requestId(), ...payload };
    let ack = await this.#send(event, body);
    for (let retry = 0; retry < this.options.rateRetries && ack.error?.code === "rate_limited"; retry++) {
      await new Promise((resolve) => setTimeout(resolve, this.options.rateDelay * 2 ** retry));
      if (!this.connected || !this.socket) break;
      ack = await this.#send(event, body);
    }
    return ack;
  }

  #send(event, body) {
    const socket = this.socket;
    return new Promise((resolve) => {
      // The callback runs as the answer's packet is read, where a frame's listeners would run.
      socket.timeout(this.options.timeout).emit(event, body, (err, ack) => {
        if (err) {
          for (const fn of this.ackLostListeners) fn();
          resolve({ ok: false, error: { code: "timeout", message: String(err?.message ?? err) } });
          return;
        }
        if (!ack || typeof ack !== "object" || typeof ack.ok !== "boolean") {
          resolve({ ok: false, error: { code: "bad_ack", message: "The bridge sent an unexpected answer." } });
          return;
        }
        if (Array.isArray(ack.emits)) {
          // Through the socket's own listeners of the frame, as a frame would be delivered.
          for (const fn of socket.listeners(EMITS_FRAME)) fn({ emits: ack.emits });
        }
        resolve(ack);
      });
    });
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
      this.#setStatus("connected", null, null);
      for (const fn of this.connectListeners) fn();
    });
    socket.on("connect_error", (err) => this.#onConnectError(err));
    socket.on("disconnect", (reason) => {
      if (this.stopped) return;
      this.#setStatus("offline", String(reason), null);
      this.#scheduleRetry();
    });
    for (const [event, fns] of this.handlers) for (const fn of fns) socket.on(event, fn);
    return socket;
  }

  #open() {
    if (this.stopped || !this.socket || this.socket.connected) return;
    this.#setStatus("connecting", null, null);
    this.socket.connect();
  }

  #onConnectError(err) {
    const data = err?.data && typeof err.data === "object" ? err.data : null;
    const reason = typeof data?.reason === "string" ? data.reason : null;
    if (reason && FINAL_REFUSALS.includes(reason)) {
      this.#setStatus("refused", reason, String(data.message ?? err.message));
      return;
    }
    this.#setStatus("offline", reason ?? "unreachable", String(data?.message ?? err?.message ?? err));
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

  #setStatus(state, reason, message) {
    const prev = this.status;
    if (prev.state === state && prev.reason === reason && prev.message === message) return;
    this.status = { state, reason, message };
    for (const fn of this.statusListeners) fn(this.status);
  }
}
