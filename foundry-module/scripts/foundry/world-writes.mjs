/**
 * The bridge's writes into the world that only the active GM's client makes: `actor.patch`
 * (fate points, consequences, stress, overwhelmed) and `token.status` (status effects).
 * Everyone else ignores them.
 * @module world-writes
 */
import { characterActor } from "./characters.mjs";
import { adapterFor } from "../adapters/index.mjs";
import { hasStatus, registerStatusEffects } from "./compat.mjs";
import { MODULE_ID, STATUS_IDS } from "../protocol.mjs";
import { recordWritten } from "./stale-guard.mjs";

/** Marker in update options for writes that came from the bridge: never sent back (no echo). */
export const BRIDGE_WRITE = "fateBridgeWrite";

const ICONS = Object.freeze({
  overwhelmed: "icons/svg/unconscious.svg",
  mild: "icons/svg/blood.svg",
  moderate: "icons/svg/bones.svg",
  severe: "icons/svg/skull.svg",
  boost: "icons/svg/upgrade.svg"
});

/** The module's status effects, `{id, name, img}` with localized names. */
export function statusEffects() {
  return Object.entries(STATUS_IDS).map(([key, id]) => ({ id, name: game.i18n.localize(`FATEBRIDGE.StatusEffect.${key}`), img: ICONS[key] }));
}

/** Register the status effects (hook `init`). */
export function registerStatuses() {
  registerStatusEffects(statusEffects());
}

/** Whether this client writes `writer: "gm"` emits. */
function writesForGm(bridge, emit) {
  return emit?.writer === "gm" && bridge.isWritingGM();
}

/**
 * Write an `actor.patch` into the actor with the BRIDGE_WRITE marker (no echo back), keeping what
 * it wrote into the fields a stale sheet could re-submit (stale-guard.mjs).
 * @param {import("../net/bridge.mjs").Bridge} bridge
 * @param {import("../protocol.mjs").ActorPatch} patch
 * @returns {Promise<Actor|null>}
 */
export async function handleActorPatch(bridge, patch) {
  if (!writesForGm(bridge, patch)) return null;
  const actor = characterActor(patch.actor_id);
  if (!actor) return null;
  if ((actor.flags?.[MODULE_ID]?.patchSeq ?? -1) >= patch.seq) return null;
  const adapter = adapterFor();
  const update = { ...adapter.patchUpdate(actor, patch), [`flags.${MODULE_ID}.patchSeq`]: patch.seq };
  recordWritten(actor, update, adapter.guardedFields?.(actor) ?? []);
  await actor.update(update, { [BRIDGE_WRITE]: true });
  return actor;
}

/**
 * Set the module's status effects on the actor (and so its tokens) as the bridge says. What the
 * actor shows is read from its effects (compat `hasStatus`), never from `actor.statuses`, which
 * fate-core-official on v14 leaves empty.
 * @param {import("../net/bridge.mjs").Bridge} bridge
 * @param {{seq: number, writer: string, actor_id: string, statuses: Record<string, boolean>}} emit
 * @returns {Promise<string[]|null>} the status ids toggled
 */
export async function handleTokenStatus(bridge, emit) {
  if (!writesForGm(bridge, emit)) return null;
  const actor = characterActor(emit.actor_id);
  if (!actor) return null;
  const toggled = [];
  for (const [key, active] of Object.entries(emit.statuses)) {
    const id = STATUS_IDS[key];
    if (!id || hasStatus(actor, id) === Boolean(active)) continue;
    await actor.toggleStatusEffect(id, { active: Boolean(active), overlay: key === "overwhelmed" });
    toggled.push(id);
  }
  return toggled;
}
