/**
 * The scene as the bridge last said it (`scene.state` emits, live or replayed, and `scene.read`
 * answers): aspects, GM budget, contests, challenges, conflicts, open compels. Every client keeps
 * it for its views; only the active GM's client writes from it into the world (the Combat tracker).
 * @module scene-state
 */
import { runtime } from "../net/runtime.mjs";

/** Hook fired on every client after the scene state changed: `(state)`. */
export const SCENE_STATE_HOOK = "fateBridge.sceneState";

const store = { state: null, seq: -1 };
const listeners = new Set();
/** @type {Set<(state: object) => unknown>} writers run on the active GM's client (conflict turn order) */
const gmWriters = new Set();

/** @returns {object|null} the latest SceneState */
export function currentScene() {
  return store.state;
}

/**
 * Listen to scene changes (views re-render).
 * @param {(state: object) => void} fn
 * @returns {() => void} unsubscribe
 */
export function onSceneState(fn) {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

/**
 * Register a world write that follows the scene (run by the handler on the active GM only).
 * @param {(state: object) => unknown} fn
 */
export function addSceneWriter(fn) {
  gmWriters.add(fn);
}

/**
 * Take a new scene state; older emits (a replay after a live one) change nothing.
 * @param {object} state  SceneState
 * @param {number|null} seq  the emit's seq; null for an intent's answer (always newest)
 */
export async function setScene(state, seq = null) {
  if (!state) return false;
  if (seq !== null) {
    if (seq <= store.seq) return false;
    store.seq = seq;
  }
  store.state = state;
  for (const fn of listeners) {
    try {
      fn(state);
    } catch (err) {
      console.error("fate-bridge | scene view failed", err);
    }
  }
  globalThis.Hooks?.callAll?.(SCENE_STATE_HOOK, state);
  return true;
}

/**
 * Handle a `scene.state` emit: every client refreshes its views; the active GM's client also
 * writes what follows from it (see addSceneWriter).
 * @param {{seq: number, writer: string, state: object}} emit
 * @param {{activeGM: boolean}} who
 */
export async function handleSceneState(emit, { activeGM }) {
  const fresh = await setScene(emit?.state, Number.isInteger(emit?.seq) ? emit.seq : null);
  if (!fresh || emit.writer !== "gm" || !activeGM) return fresh;
  for (const write of gmWriters) {
    try {
      await write(emit.state);
    } catch (err) {
      console.error("fate-bridge | scene write failed", err);
    }
  }
  return fresh;
}

/**
 * Ask the bridge for the scene now (`scene.read`); null when unavailable.
 * @returns {Promise<object|null>}
 */
export async function readScene() {
  if (!runtime.connection?.connected) return null;
  const asked = sceneSeq();
  const ack = await runtime.connection.call("scene.read", {});
  if (!ack.ok) return null;
  return setAnswered(asked, ack.data);
}

/** The seq of the last `scene.state` shown (-1 before any). */
export function sceneSeq() {
  return store.seq;
}

/**
 * Show a SceneState that came as an answer (it carries no seq), unless a `scene.state` came
 * since `asked` (the sceneSeq() when the request went out): the bridge sends a commit's frame
 * before any answer that includes it, so that frame is at least as new. Returns what is shown.
 * @param {number} asked
 * @param {object} data
 */
export async function setAnswered(asked, data) {
  if (store.seq !== asked) return store.state;
  await setScene(data);
  return data;
}
