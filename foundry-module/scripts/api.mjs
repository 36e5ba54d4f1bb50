/**
 * The macro API on `game.modules.get("fate-bridge").api` (see MACROS.md).
 * @module api
 */
import { rollOvercome } from "./actions.mjs";
import { PROTOCOL_VERSION } from "./protocol.mjs";
import { runtime } from "./runtime.mjs";

/**
 * @param {Actor|string} actorOrId  an Actor, an actor id or an actor name
 * @returns {Actor|null}
 */
function resolveActor(actorOrId) {
  if (actorOrId && typeof actorOrId === "object") return actorOrId;
  return game.actors.get(actorOrId) ?? game.actors.getName?.(actorOrId) ?? null;
}

export function createApi() {
  return Object.freeze({
    PROTOCOL_VERSION,
    /**
     * Roll an overcome for an actor's skill. Without `opposition`, the roll dialog asks.
     * @param {Actor|string} actorOrId
     * @param {string} skill
     * @param {{opposition?: number, description?: string}} [options]
     */
    async roll(actorOrId, skill, options = {}) {
      const actor = resolveActor(actorOrId);
      if (!actor) {
        ui.notifications.warn(game.i18n.format("FATEBRIDGE.Notify.ActorNotFound", { actor: String(actorOrId) }));
        return null;
      }
      return rollOvercome(actor, skill, options);
    },
    /** @returns {import("./connection.mjs").ConnectionStatus} */
    get status() {
      return { ...(runtime.connection?.status ?? { state: "offline", reason: null, message: null }) };
    },
    /** @returns {import("./connection.mjs").ConnectionManager|null} */
    get connection() {
      return runtime.connection;
    }
  });
}
