/**
 * This client's bridge: one object, made by main.mjs and handed to whatever needs the bridge
 * (a parameter, never an import), holding the live connection, the `hello` answer, the GMs'
 * roster, the relay host while this client relays, the scene as the bridge last said it, and
 * the last history check. Sending an intent and telling the user when it is refused live here.
 * @module bridge
 */
import { isActiveGM } from "../foundry/compat.mjs";
import { refusalText } from "../foundry/format.mjs";
import { SceneStore } from "../scene/state.mjs";

/** What a client without a connection reports. */
const OFFLINE = Object.freeze({ state: "offline", reason: null, message: null });

export class Bridge {
  constructor() {
    /** @type {import("./connection.mjs").IntentChannel|null} the way to the bridge */
    this.connection = null;
    /** @type {object|null} the `hello` answer of the current connection */
    this.hello = null;
    /** @type {import("./relay.mjs").GmRoster|null} the GMs' bridge statuses, and who relays */
    this.roster = null;
    /** @type {import("./relay.mjs").RelayHost|null} set while this client relays for the others */
    this.relayHost = null;
    /** whether this client writes what the bridge says (see {@link Bridge#isWritingGM}) */
    this.writing = false;
    /** the scene as the bridge last said it */
    this.scene = new SceneStore();
    /** @type {Map<string, string>} actor id -> the ActorData JSON last sent on this connection */
    this.sentActors = new Map();
    /** @type {object|null} the last `world.verify` report this client asked for */
    this.lastVerify = null;
    /** @type {Set<(status: import("./connection.mjs").ConnectionStatus) => void>} */
    this.statusListeners = new Set();
  }

  /**
   * Hear every status change of this client's connection, whichever connection it is (the
   * settings may replace it).
   * @param {(status: import("./connection.mjs").ConnectionStatus) => void} fn
   */
  onStatus(fn) {
    this.statusListeners.add(fn);
  }

  /** Whether the connection is up. */
  get connected() {
    return Boolean(this.connection?.connected);
  }

  /** @returns {import("./connection.mjs").ConnectionStatus} */
  get status() {
    return this.connection?.status ?? OFFLINE;
  }

  /** The world's rules: the scene's when it says them, else hello's; null before either. */
  get rules() {
    return this.scene.current?.rules ?? this.hello?.rules ?? null;
  }

  /**
   * Whether this client is the one that writes what the bridge says (GM-written cards, actor
   * patches, token statuses, scene state, FCO's stores) and sends the GM's Foundry-side edits:
   * the relay host, the elected GM with a live bridge connection (relay.mjs). Before a roster
   * runs (no connection started), Foundry's active GM.
   * @returns {boolean}
   */
  isWritingGM() {
    if (!game.user?.isGM) return false;
    if (!this.roster?.running) return isActiveGM();
    return this.roster.electedHost() === game.user.id;
  }

  /**
   * Whether the connection is up; otherwise the user is told why not.
   * @returns {boolean}
   */
  ensureConnected() {
    if (this.connected) return true;
    const status = this.connection?.status;
    const reason = status?.message ?? game.i18n.localize(`FATEBRIDGE.Status.${status?.state ?? "offline"}`);
    ui.notifications.error(game.i18n.format("FATEBRIDGE.Notify.Offline", { reason }));
    return false;
  }

  /**
   * Send one intent. Resolves to the ack's data, or null when it was refused (the bridge's
   * message is shown as a warning) or the connection is down.
   * @param {string} event
   * @param {object} payload
   * @returns {Promise<object|null>}
   */
  async send(event, payload) {
    if (!this.ensureConnected()) return null;
    const ack = await this.connection.call(event, payload);
    if (!ack.ok) {
      ui.notifications.warn(game.i18n.format("FATEBRIDGE.Notify.ActionFailed", { message: refusalText(ack.error) }));
      return null;
    }
    return ack.data;
  }

  /**
   * `world.state`: characters, aspects and free invokes, for pickers. Null when unavailable.
   * @returns {Promise<object|null>}
   */
  async worldState() {
    if (!this.connected) return null;
    const ack = await this.connection.call("world.state", {});
    return ack.ok ? ack.data : null;
  }

  /**
   * `scene.read`: the scene now, shown to every view; null when unavailable.
   * @returns {Promise<object|null>}
   */
  async readScene() {
    if (!this.connected) return null;
    const asked = this.scene.seq;
    const ack = await this.connection.call("scene.read", {});
    if (!ack.ok) return null;
    return this.scene.setAnswered(asked, ack.data);
  }

  /**
   * Send an intent whose answer is the SceneState, and show it.
   * @param {string} event
   * @param {object} payload
   */
  async sendScene(event, payload) {
    const asked = this.scene.seq;
    const data = await this.send(event, payload);
    if (data) await this.scene.setAnswered(asked, data);
    return data;
  }
}
