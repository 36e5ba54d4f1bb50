// Foundry v14 (issue 8.6): the module deletes keys with v14's `_del` operator (a ForcedDeletion,
// as fate-core-official 4.7.14 writes them), not the `-=key` form v14 deprecates; the fake
// Foundry runs as v14 here and records any deprecated deletion.
import assert from "node:assert/strict";
import path from "node:path";
import { before, test } from "node:test";
import { MODULE_DIR, bootNodeFoundry } from "./support/node-foundry.mjs";

const GM = { id: "gmUser000000001", name: "Gamemaster", isGM: true };
let foundry;
let generic;
let compat;

before(async () => {
  foundry = await bootNodeFoundry({
    generation: 14,
    users: [GM],
    userId: GM.id,
    activeGM: GM.id,
    systemId: "worldbuilding",
    actors: [{ _id: "actorGeneric0001", name: "Nova", type: "character", system: {}, flags: { "fate-bridge": { skills: { Fight: 2, Notice: 1 } } }, ownership: { default: 0 } }],
    settings: { "fate-bridge.bridgeUrl": "http://127.0.0.1:9" }
  }, { io: () => { throw new Error("no connection in unit tests"); } });
  foundry.Hooks.callAll("init");
  generic = await import(path.join(MODULE_DIR, "scripts/adapters/generic.mjs"));
  compat = await import(path.join(MODULE_DIR, "scripts/foundry/compat.mjs"));
});

test("v14: removing a flag skill uses _del, and nothing uses the deprecated -=key form", async () => {
  assert.equal(compat.generation(), 14);
  assert.deepEqual(Object.keys(compat.deletionKey("Fight")), ["Fight"]);
  assert.equal(compat.deletionKey("Fight").Fight, globalThis._del);
  const actor = foundry.game.actors.get("actorGeneric0001");
  await generic.setSkill(actor, "Fight", null);
  assert.deepEqual(generic.skills(actor), { Notice: 1 });
  assert.deepEqual(foundry.log.deprecatedDeletions, []);
});
