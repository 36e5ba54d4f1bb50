/**
 * NPCs a player picks (an opposer, a target, a helper) must be known to the bridge before the
 * player's intent names them, and only the GM's connection may send actor data. So the active
 * GM's client sends the actors of the current scene's tokens: when the canvas is ready, when a
 * token is created, and after (re)connecting. An actor whose data the bridge already got from
 * this client is not sent again (no echo of what nothing changed; sheet edits go through
 * `updateActor`).
 * @module scene-tokens
 */
import { BRIDGE_WRITE } from "../foundry/world-writes.mjs";
import { adapterFor } from "../adapters/index.mjs";
import { characterId } from "../foundry/characters.mjs";

/**
 * The characters of the current scene's tokens, once each: a linked token's world actor, an
 * unlinked token's own synthetic actor (each unlinked token is its own character).
 */
export function sceneTokenActors(scene = globalThis.canvas?.scene) {
  const out = new Map();
  // A scene's tokens are an EmbeddedCollection: its `contents` are the TokenDocuments.
  for (const token of scene?.tokens?.contents ?? []) {
    const actor = tokenActor(token);
    if (actor && adapterFor().isCharacter(actor)) out.set(characterId(actor), actor);
  }
  return [...out.values()];
}

/** The actor a token stands for: the synthetic actor of an unlinked token, else the world actor. */
function tokenActor(token) {
  return token?.actor ?? game.actors.get(token?.actorId) ?? null;
}

/**
 * Send actors the bridge has not had from this client in their current form (what was sent
 * is forgotten when this client starts writing: a new connection may reach a new bridge).
 * @param {import("../net/bridge.mjs").Bridge} bridge
 * @param {Actor[]} actors
 * @returns {Promise<string[]>} the ids sent
 */
export async function syncActors(bridge, actors) {
  const connection = bridge.connection;
  const sent = bridge.sentActors;
  if (!connection?.connected || !bridge.isWritingGM()) return [];
  const done = [];
  for (const actor of actors) {
    if (!adapterFor().isCharacter(actor)) continue;
    const data = adapterFor().toActorData(actor);
    const json = JSON.stringify(data);
    if (sent.get(data.id) === json) continue;
    sent.set(data.id, json);
    const ack = await connection.call("actor.sync", { actor: data });
    if (ack.ok) done.push(data.id);
    else {
      sent.delete(data.id);
      console.warn("fate-bridge | actor.sync failed", actor.name, ack.error);
    }
  }
  return done;
}

/**
 * Hook `canvasReady` (and after connecting): the scene's token actors.
 * @param {import("../net/bridge.mjs").Bridge} bridge
 */
export function syncSceneTokens(bridge) {
  return syncActors(bridge, sceneTokenActors());
}

/**
 * Hook `createToken`: a token dropped on the viewed scene brings its actor along. A token the
 * bridge's own writes created is skipped.
 * @param {import("../net/bridge.mjs").Bridge} bridge
 * @param {TokenDocument} token
 * @param {object} [options]
 */
export function onCreateToken(bridge, token, options) {
  if (options?.[BRIDGE_WRITE]) return Promise.resolve([]);
  const scene = token?.parent;
  if (scene && globalThis.canvas?.scene && scene.id !== globalThis.canvas.scene.id) return Promise.resolve([]);
  const actor = tokenActor(token);
  return actor ? syncActors(bridge, [actor]) : Promise.resolve([]);
}

/**
 * Hook `updateToken`: an unlinked token's own data lives in its ActorDelta, so a change there
 * (`delta`) is a change of that token's character. The bridge's own writes are skipped.
 * @param {import("../net/bridge.mjs").Bridge} bridge
 * @param {TokenDocument} token
 * @param {object} changed
 * @param {object} [options]
 */
export function onUpdateToken(bridge, token, changed, options) {
  if (options?.[BRIDGE_WRITE] || !changed?.delta || token?.actorLink) return Promise.resolve([]);
  const actor = token?.actor;
  return actor && adapterFor().isRelevantChange(changed.delta) ? syncActors(bridge, [actor]) : Promise.resolve([]);
}
