/**
 * Which Foundry document is which bridge character. A world actor (and every token linked to
 * it) is one character, keyed by the actor's id. An unlinked token carries its own synthetic
 * actor (its data is the base actor plus the token's ActorDelta) whose `id` is the base actor's
 * id, shared by every token of that actor: so each unlinked token is its own character, keyed
 * by the token's UUID ("Scene.<sceneId>.Token.<tokenId>"). Five goblins from one actor are five
 * characters, each with its own consequences, stress and statuses.
 * @module characters
 */

/** Whether a character id names an unlinked token (a token UUID). */
export function isTokenCharacterId(id) {
  return /^Scene\.[^.]+\.Token\.[^.]+$/.test(String(id ?? ""));
}

/**
 * The bridge character id of an actor: its token's UUID for a synthetic (unlinked token)
 * actor, else the actor's id.
 * @param {Actor} actor
 * @returns {string}
 */
export function characterId(actor) {
  if (actor?.isToken && actor.token?.uuid) return actor.token.uuid;
  return actor?.id;
}

/**
 * The bridge character id of a token (a TokenDocument, or a Token placeable).
 * @param {TokenDocument|Token} token
 * @returns {string|null}
 */
export function tokenCharacterId(token) {
  const doc = token?.document ?? token;
  if (!doc) return null;
  const linked = doc.actorLink ?? doc.isLinked ?? true;
  if (!linked && doc.uuid) return doc.uuid;
  return doc.actorId ?? doc.actor?.id ?? null;
}

/**
 * The actor a character id names: a world actor, or the synthetic actor of an unlinked token.
 * @param {string} id
 * @returns {Actor|null}
 */
export function characterActor(id) {
  if (!id) return null;
  if (!isTokenCharacterId(id)) return game.actors?.get(id) ?? null;
  const token = globalThis.fromUuidSync?.(id) ?? tokenFromUuid(id);
  return token?.actor ?? null;
}

/** The token of a token UUID, from the world's scenes (when `fromUuidSync` is not there). */
function tokenFromUuid(uuid) {
  const [, sceneId, , tokenId] = String(uuid).split(".");
  const scene = game.scenes?.get?.(sceneId) ?? (game.scenes?.viewed?.id === sceneId ? game.scenes.viewed : null);
  return scene?.tokens?.get?.(tokenId) ?? null;
}

/**
 * A character's display name: an unlinked token's own name (goblins are told apart), else
 * the actor's.
 * @param {Actor} actor
 */
export function characterName(actor) {
  if (actor?.isToken && actor.token?.name) return actor.token.name;
  return actor?.name;
}
