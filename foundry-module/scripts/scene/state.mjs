/**
 * The scene as the bridge last said it (`scene.state` emits, live or replayed, and `scene.read`
 * answers): aspects, GM budget, contests, challenges, conflicts, open compels. Every client keeps
 * it for its views; only the writing GM's client writes from it into the world (the Combat
 * tracker, FCO's stores). One store per client, held by its Bridge (net/bridge.mjs).
 * @module scene-state
 */

/** Hook fired on every client after the scene state changed: `(state)`. */
const SCENE_STATE_HOOK = "fateBridge.sceneState";

export class SceneStore {
  constructor() {
    /** @type {object|null} the latest SceneState */
    this.current = null;
    /** the seq of the last `scene.state` shown (-1 before any) */
    this.seq = -1;
    /** @type {Set<(state: object) => void>} */
    this.listeners = new Set();
    /** @type {Set<(state: object) => unknown>} writers run on the writing GM's client */
    this.writers = new Set();
  }

  /**
   * Listen to scene changes (views re-render).
   * @param {(state: object) => void} fn
   * @returns {() => void} unsubscribe
   */
  onChange(fn) {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /**
   * Register a world write that follows the scene (run on the writing GM's client only).
   * @param {(state: object) => unknown} fn
   */
  addWriter(fn) {
    this.writers.add(fn);
  }

  /**
   * Take a new scene state; older emits (a replay after a live one) change nothing.
   * @param {object} state  SceneState
   * @param {number|null} seq  the emit's seq; null for an intent's answer (always newest)
   */
  async set(state, seq = null) {
    if (!state) return false;
    if (seq !== null) {
      if (seq <= this.seq) return false;
      this.seq = seq;
    }
    this.current = state;
    for (const fn of this.listeners) {
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
   * Handle a `scene.state` emit: every client refreshes its views; the writing GM's client also
   * writes what follows from it (see addWriter).
   * @param {{seq: number, writer: string, state: object}} emit
   * @param {{activeGM: boolean}} who
   */
  async handle(emit, { activeGM }) {
    const fresh = await this.set(emit?.state, Number.isInteger(emit?.seq) ? emit.seq : null);
    if (!fresh || emit.writer !== "gm" || !activeGM) return fresh;
    for (const write of this.writers) {
      try {
        await write(emit.state);
      } catch (err) {
        console.error("fate-bridge | scene write failed", err);
      }
    }
    return fresh;
  }

  /**
   * Show a SceneState that came as an answer (it carries no seq), unless a `scene.state` came
   * since `asked` (the seq when the request went out): the bridge sends a commit's frame
   * before any answer that includes it, so that frame is at least as new. Returns what is shown.
   * @param {number} asked
   * @param {object} data
   */
  async setAnswered(asked, data) {
    if (this.seq !== asked) return this.current;
    await this.set(data);
    return data;
  }
}
