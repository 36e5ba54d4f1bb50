/**
 * NPCs a player picks (an opposer, a target, a helper) must be known to the bridge before the
 * player's intent names them, and only the GM's connection may send actor data. So the active
 * GM's client sends the actors of the current scene's tokens: when the canvas is ready, when a
 * token is created, and after (re)connecting. An actor whose data the bridge already got from
 * this client is not sent again (no echo of what nothing changed; sheet edits go through
 * `updateActor`).
 * @module scene-tokens
 */
import { BRIDGE_WRITE } from "./actions.mjs";
import { adapterFor } from "./adapters/index.mjs";
import { isActiveGM } from "./compat.mjs";
import { runtime } from "./runtime.mjs";

/** actor id -> the JSON of the ActorData last sent on this connection */
const sent = new Map();

/** Forget what was sent (a new connection may reach a bridge that lost nothing, or a new one). */
export function forgetSentActors() {
  sent.clear();
}

/** The base actors of the current scene's tokens (linked or not), once each. */
export function sceneTokenActors(scene = globalThis.canvas?.scene) {
  const out = new Map();
  // A scene's tokens are an EmbeddedCollection: its `contents` are the TokenDocuments.
  for (const token of scene?.tokens?.contents ?? []) {
    const actor = game.actors.get(token.actorId ?? token.actor?.id);
    if (actor) out.set(actor.id, actor);
  }
  return [...out.values()];
}

/**
 * Send actors the bridge has not had from this client in their current form.
 * @param {Actor[]} actors
 * @returns {Promise<string[]>} the ids sent
 */
export async function syncActors(actors) {
  const connection = runtime.connection;
  if (!connection?.connected || !isActiveGM()) return [];
  const done = [];
  for (const actor of actors) {
    const data = adapterFor().toActorData(actor);
    const json = JSON.stringify(data);
    if (sent.get(actor.id) === json) continue;
    sent.set(actor.id, json);
    const ack = await connection.call("actor.sync", { actor: data });
    if (ack.ok) done.push(actor.id);
    else {
      sent.delete(actor.id);
      console.warn("fate-bridge | actor.sync failed", actor.name, ack.error);
    }
  }
  return done;
}

/** Hook `canvasReady` (and after connecting): the scene's token actors. */
export function syncSceneTokens() {
  return syncActors(sceneTokenActors());
}

/**
 * Hook `createToken`: a token dropped on the viewed scene brings its actor along. A token the
 * bridge's own writes created is skipped.
 * @param {TokenDocument} token
 * @param {object} [options]
 */
export function onCreateToken(token, options) {
  if (options?.[BRIDGE_WRITE]) return Promise.resolve([]);
  const scene = token?.parent;
  if (scene && globalThis.canvas?.scene && scene.id !== globalThis.canvas.scene.id) return Promise.resolve([]);
  const actor = game.actors.get(token?.actorId ?? token?.actor?.id);
  return actor ? syncActors([actor]) : Promise.resolve([]);
}
