/**
 * Conflicts use Foundry's Combat tracker for turn order (R11.3, R13.5). The bridge decides the order;
 * the writing GM's client writes it: one Combat per open conflict (flag `conflictId`), a combatant
 * per character (its token on the scene being played when there is one), initiatives descending in the
 * bridge's order, the current turn and round from the conflict, those out (taken out, conceded)
 * defeated. An ended conflict's Combat goes.
 * @module conflict-combat
 */
import { characterActor, isTokenCharacterId, tokenCharacterId } from "../foundry/characters.mjs";
import { playedScene } from "../foundry/compat.mjs";
import { MODULE_ID } from "../protocol.mjs";

/** The Combat of a conflict, if this world has one. */
function combatFor(conflictId) {
  return game.combats?.find?.((c) => c.flags?.[MODULE_ID]?.conflictId === conflictId) ?? null;
}

/** The token of a character on the played scene, if any (an unlinked token is its own). */
function tokenFor(characterId) {
  const tokens = playedScene()?.tokens?.contents ?? [];
  return tokens.find((t) => tokenCharacterId(t) === characterId) ?? null;
}

/** The character a combatant stands for: its unlinked token's, else its actor's. */
function combatantCharacterId(combatant) {
  const token = combatant.sceneId && combatant.tokenId ? game.scenes?.get?.(combatant.sceneId)?.tokens?.get?.(combatant.tokenId) : null;
  return token ? tokenCharacterId(token) : combatant.actorId;
}

/**
 * Initiative values for the bridge's order: highest first, one apart, so Foundry's sort
 * (initiative descending) gives exactly the bridge's order.
 * @param {object} conflict  ConflictView
 * @returns {Map<string, number>} character id -> initiative
 */
function initiatives(conflict) {
  const n = conflict.order.length;
  return new Map(conflict.order.map((t, i) => [t.character.id, n - i]));
}

/**
 * The tracker's turn: the index in the bridge's order of the character whose turn it is
 * (R13.5: `current`, picked under elective order), else the bridge's turn index.
 * @param {object} conflict  ConflictView
 */
export function trackerTurn(conflict) {
  const i = conflict.current ? conflict.order.findIndex((t) => t.character.id === conflict.current) : -1;
  return i >= 0 ? i : conflict.turn;
}

/** Characters out of the conflict (taken out or conceded, R13.6): defeated in the tracker. */
function outOf(conflict) {
  const conceded = new Set(conflict.conceded ?? []);
  return new Set(conflict.order.filter((t) => t.out || conceded.has(t.character.id)).map((t) => t.character.id));
}

/**
 * Write one conflict into its Combat (create, add/update combatants, turn, round).
 * @param {object} conflict  ConflictView
 * @returns {Promise<Combat|null>}
 */
async function writeConflict(conflict) {
  let combat = combatFor(conflict.id);
  if (conflict.state !== "open") {
    if (combat) await combat.delete();
    return null;
  }
  if (!combat) {
    const sceneId = playedScene()?.id ?? null;
    combat = await Combat.create({ scene: sceneId, active: true, flags: { [MODULE_ID]: { conflictId: conflict.id, name: conflict.name } } });
  }
  const wanted = initiatives(conflict);
  const out = outOf(conflict);
  const existing = new Map(combat.combatants.contents.map((c) => [combatantCharacterId(c), c]));
  const create = [];
  const update = [];
  for (const [characterId, initiative] of wanted) {
    const have = existing.get(characterId);
    if (!have) {
      const token = tokenFor(characterId);
      // A combatant names the world actor; an unlinked token's combatant names its token too.
      const actorId = token?.actorId ?? (isTokenCharacterId(characterId) ? characterActor(characterId)?.id : characterId);
      if (!actorId) continue;
      const data = { actorId, initiative, defeated: out.has(characterId), flags: { [MODULE_ID]: { conflictId: conflict.id } } };
      if (token) Object.assign(data, { tokenId: token.id, sceneId: token.parent?.id ?? playedScene()?.id });
      create.push(data);
    } else if (have.initiative !== initiative || Boolean(have.defeated) !== out.has(characterId)) {
      update.push({ _id: have.id, initiative, defeated: out.has(characterId) });
    }
  }
  const gone = [...existing.entries()].filter(([characterId]) => !wanted.has(characterId)).map(([, c]) => c.id);
  if (create.length) await combat.createEmbeddedDocuments("Combatant", create);
  if (update.length) await combat.updateEmbeddedDocuments("Combatant", update);
  if (gone.length) await combat.deleteEmbeddedDocuments("Combatant", gone);
  const round = Math.max(1, conflict.exchange);
  const turn = trackerTurn(conflict);
  if (combat.turn !== turn || combat.round !== round) await combat.update({ turn, round });
  return combat;
}

/**
 * Scene writer (active GM only): every conflict of the scene state into the tracker.
 * @param {object} state  SceneState
 */
export async function writeConflicts(state) {
  for (const conflict of state.conflicts ?? []) await writeConflict(conflict);
  // Conflicts the bridge no longer lists: their Combats go.
  const known = new Set((state.conflicts ?? []).map((c) => c.id));
  for (const combat of game.combats?.contents ?? []) {
    const id = combat.flags?.[MODULE_ID]?.conflictId;
    if (id && !known.has(id)) await combat.delete();
  }
}
