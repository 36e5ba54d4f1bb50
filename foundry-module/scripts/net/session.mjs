/**
 * One connection's life: open it from the settings, greet the bridge, catch up on missed cards
 * (world.sync) after every (re)connect, and route the bridge's emits.
 * @module session
 */
import { bindWaitingUsers, publishNonce } from "./binding.mjs";
import { handleCardEmit } from "../cards/chat.mjs";
import { adapterFor } from "../adapters/index.mjs";
import { ConnectionManager } from "./connection.mjs";
import { EMITS_FRAME, PROTOCOL_VERSION } from "../protocol.mjs";
import { helloPayload, warnVersionMismatch } from "./hello.mjs";
import { GmRoster, RelayConnection, RelayHost } from "./relay.mjs";
import { CONNECTION_MODES, connectionSettings, getLastSeq, setLastSeq } from "./settings.mjs";
import { showStatus } from "./status.mjs";
import { handleActorPatch, handleTokenStatus } from "../foundry/world-writes.mjs";
import { offerRuleset } from "./ruleset.mjs";
import { syncActors, syncSceneTokens } from "../scene/tokens.mjs";

/**
 * Handlers of the bridge's stored emits, live (inside an `emits` frame) or replayed by
 * world.sync, each called with this client's Bridge and the emit.
 */
const EMIT_HANDLERS = Object.freeze({
  card: handleCardEmit,
  "actor.patch": handleActorPatch,
  "token.status": handleTokenStatus,
  "scene.state": (bridge, emit) => bridge.scene.handle(emit, { activeGM: bridge.isWritingGM() })
});

const NOTICE_LEVELS = { info: "info", warning: "warn", error: "error" };

/**
 * (Re)open the connection with the current settings. In relay mode (the default) a player's
 * client reaches the bridge through the relay host's client; a GM connects itself, and the
 * elected GM (a GM whose browser holds a live bridge connection: see relay.mjs) relays for
 * everyone else. In direct mode every client connects itself. In both, the GMs' clients say
 * how their bridge is, and the elected one writes what the bridge says.
 * @param {import("./bridge.mjs").Bridge} bridge
 * @param {Partial<import("./connection.mjs").ConnectionOptions>} [overrides]
 * @returns {import("./connection.mjs").IntentChannel}
 */
export function startConnection(bridge, overrides = {}) {
  bridge.connection?.disconnect();
  bridge.relayHost?.stop();
  bridge.relayHost = null;
  bridge.roster?.stop();
  bridge.writing = false;
  const roster = new GmRoster();
  bridge.roster = roster;
  const { url, world, key, mode } = connectionSettings();
  const isGM = Boolean(game.user.isGM);
  const relayed = mode === CONNECTION_MODES.relay && !isGM;
  const connection = relayed
    ? new RelayConnection({ roster, ...overrides })
    : new ConnectionManager({
      url,
      world,
      role: isGM ? "gm" : "player",
      user: game.user.id,
      key: isGM ? key : undefined,
      ...overrides
    });
  bridge.connection = connection;
  bridge.hello = null;
  connection.onStatus((status) => {
    if (status.state !== "connected" && greeted === connection) greeted = null;
    showStatus(status);
    for (const fn of bridge.statusListeners) fn(status);
  });
  // One catch-up per connection: the "bound" notice and hello's own answer can both
  // say a player is bound when the GM vouches while hello is on its way.
  let caughtUp = false;
  const catchUpOnce = async (since) => {
    if (caughtUp) return;
    caughtUp = true;
    await catchUp(bridge, connection, since);
  };
  connection.onConnect(() => {
    caughtUp = false;
    greet(bridge, connection, catchUpOnce);
  });
  connection.on(EMITS_FRAME, (frame) => processFrame(bridge, frame));
  // A call that timed out may have committed: its emits were in the answer that was lost.
  connection.onAckLost(() => {
    if (bridge.connection === connection && bridge.hello) catchUp(bridge, connection, getLastSeq() ?? bridge.hello.last_seq ?? 0);
  });
  connection.on("notice", async (notice) => {
    showNotice(notice);
    // Once bound, a player hears the world: catch up on what it missed, then read the scene.
    if (notice?.code === "bound") {
      await catchUpOnce(getLastSeq() ?? bridge.hello?.last_seq ?? 0);
      await bridge.readScene();
    }
  });
  // A GM's bridge status reaches every client (before the connect listeners run: the
  // election decides who greets as the writer).
  if (isGM) connection.onStatus(() => roster.announce());
  roster.onChange(() => followRelayHost(bridge));
  roster.start(isGM ? () => connection.status : null);
  showStatus(connection.status);
  connection.connect();
  return connection;
}

/**
 * Relay mode: the elected GM's client relays, and players follow whoever that is. Called when
 * a GM's bridge status changes and when Foundry says a user connected or left (hook
 * `userConnected`, through {@link onUserConnected}).
 * @param {import("./bridge.mjs").Bridge} bridge
 */
function followRelayHost(bridge) {
  const connection = bridge.connection;
  if (!connection || connection instanceof RelayConnection) return;
  const writing = bridge.isWritingGM();
  // Elected while connected and greeted (the writing GM left, or lost its bridge): take over.
  if (writing && !bridge.writing && connection.connected && greeted === connection && greeting !== connection) {
    startWriting(bridge, connection).catch((err) => console.error("fate-bridge | taking over the writes failed", err));
  }
  bridge.writing = writing;
  const hosting = connectionSettings().mode === CONNECTION_MODES.relay && writing;
  if (hosting && !bridge.relayHost) bridge.relayHost = new RelayHost(connection).start();
  else if (!hosting && bridge.relayHost) {
    bridge.relayHost.stop();
    bridge.relayHost = null;
  }
}

/**
 * Hook `userConnected`: the roster forgets a GM who left (the next bridge-connected GM takes
 * over), and the relay host tells the bridge a player left.
 * @param {import("./bridge.mjs").Bridge} bridge
 * @param {User} user
 * @param {boolean} connected
 */
export function onUserConnected(bridge, user, connected) {
  bridge.roster?.userConnected(user, connected);
  if (user && connected === false) bridge.relayHost?.userLeft(user);
}

/**
 * @param {import("./connection.mjs").ConnectionManager} connection
 * @param {(since: number) => Promise<void>} catchUpOnce  this connection's one catch-up
 */
async function greet(bridge, connection, catchUpOnce) {
  greeting = connection;
  try {
    await greetNow(bridge, connection, catchUpOnce);
  } finally {
    if (greeting === connection) greeting = null;
  }
}
/** The connection whose greeting is under way (it decides then whether this client writes). */
let greeting = null;
/** The connection greeted since it last connected (a takeover needs one). */
let greeted = null;

/**
 * What the writing GM's client does when it starts writing (at its greeting, or when it takes
 * over from a GM who left or lost the bridge): the players' actors and the scene's tokens to
 * the bridge, and the players waiting to be vouched for.
 * @param {import("./connection.mjs").ConnectionManager} connection
 */
async function startWriting(bridge, connection) {
  bridge.writing = true;
  bridge.sentActors.clear();
  await syncPlayerActors(bridge, connection);
  await syncSceneTokens(bridge);
  await bindWaitingUsers(bridge);
}

async function greetNow(bridge, connection, catchUpOnce) {
  const hello = await connection.call("hello", helloPayload());
  if (!hello.ok) {
    console.warn("fate-bridge | hello failed", hello.error);
    return;
  }
  bridge.hello = hello.data;
  greeted = connection;
  if (hello.data.protocol !== PROTOCOL_VERSION) {
    ui.notifications.error(game.i18n.format("FATEBRIDGE.Notify.ProtocolMismatch", { bridge: hello.data.protocol, module: PROTOCOL_VERSION }));
  }
  warnVersionMismatch(hello.data);
  // A player reads the world only once the GM's client has vouched for it (the "bound" notice).
  if (hello.data.role === "gm" || hello.data.bound) await catchUpOnce(getLastSeq() ?? hello.data.last_seq);
  if (bridge.isWritingGM()) {
    // R13.9: the GM is offered the ruleset of the world's game when the bridge plays another.
    offerRuleset(bridge, hello.data).catch((err) => console.error("fate-bridge | ruleset offer failed", err));
    await startWriting(bridge, connection);
  }
  else await publishNonce(hello.data);
  // Views start from the scene as it is (a bound player or a GM may read it).
  if (hello.data.bound) await bridge.readScene();
}

/**
 * Active GM after connecting: send every actor a player owns, so players can act for them.
 * @param {import("./bridge.mjs").Bridge} bridge
 * @param {import("./connection.mjs").ConnectionManager} connection
 */
async function syncPlayerActors(bridge, connection) {
  const adapter = adapterFor();
  const owned = game.actors.contents.filter((actor) => adapter.isCharacter(actor) && adapter.toActorData(actor).owners.some((id) => !game.users.get(id)?.isGM));
  if (connection !== bridge.connection) return [];
  return syncActors(bridge, owned);
}

/**
 * Ask the bridge for every emit after `since` and process them in order.
 * @param {import("./bridge.mjs").Bridge} bridge
 * @param {import("./connection.mjs").ConnectionManager} connection
 * @param {number} since
 */
export async function catchUp(bridge, connection, since) {
  const sync = await connection.call("world.sync", { since });
  if (!sync.ok) {
    console.warn("fate-bridge | world.sync failed", sync.error);
    return sync;
  }
  await processEmits(bridge, sync.data.emits);
  if (sync.data.last_seq > (getLastSeq() ?? -1)) await setLastSeq(sync.data.last_seq);
  return sync;
}

/**
 * One commit's `emits` frame: its cards, patches, statuses and scene state, written in order.
 * @param {import("./bridge.mjs").Bridge} bridge
 * @param {{emits: Array<{event: string, data: {seq: number}}>}} frame
 */
export async function processFrame(bridge, frame) {
  if (!Array.isArray(frame?.emits)) {
    console.warn("fate-bridge | an emits frame without its emits list", frame);
    return;
  }
  await processEmits(bridge, frame.emits);
}

/**
 * Emits in the order the bridge made them, each written before the next starts.
 * @param {Array<{event: string, data: {seq: number}}>} emits
 */
async function processEmits(bridge, emits) {
  for (const item of emits) {
    if (item && typeof item === "object") await processEmit(bridge, item.event, item.data);
    else console.warn("fate-bridge | skipped an emit that is not an object", item);
  }
}

/**
 * Route one emit to its handler; a failing write never stops the others.
 * @param {string} event
 * @param {{seq: number}} emit
 */
async function processEmit(bridge, event, emit) {
  try {
    await EMIT_HANDLERS[event]?.(bridge, emit);
  } catch (err) {
    console.error(`fate-bridge | could not write ${event}`, err);
  }
  if (Number.isInteger(emit?.seq) && emit.seq > (getLastSeq() ?? -1)) await setLastSeq(emit.seq);
}

/**
 * Every bridge notice reaches the user (e.g. `malformed_frame`: the bridge could not read a
 * message this client sent, so the user sees why instead of waiting for a timeout).
 * @param {{level: string, code: string, message: string}} notice
 */
function showNotice(notice) {
  const method = NOTICE_LEVELS[notice?.level] ?? "info";
  // A code this module knows is said in the user's language; another one keeps the bridge's words.
  const key = `FATEBRIDGE.Notice.${notice?.code}`;
  const known = game.i18n.localize(key);
  const message = known !== key ? known : String(notice?.message ?? notice?.code ?? "");
  ui.notifications[method](game.i18n.format("FATEBRIDGE.Notify.BridgeNotice", { message }));
}
