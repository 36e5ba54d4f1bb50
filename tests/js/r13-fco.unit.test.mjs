// R13.3 from fate-core-official's own data: the Superb extra mild consequence that FCO's Fate Core
// and Fate Condensed defaults enable at Physique (or Will) 5 reaches the bridge as a slot for that
// kind of harm alone; every other consequence takes any harm. FCO 4.7 fixtures, the real adapter.
import assert from "node:assert/strict";
import { before, test } from "node:test";
import { readJson } from "./support/node-foundry.mjs";
import { bootOfflineFoundry } from "./support/offline-foundry.mjs";
import { check } from "./support/schemas.mjs";

const GM = { id: "r13GmUser0000001", name: "Gamemaster", isGM: true };
const SYSTEMS = ["fate-core", "fate-condensed", "fate-accelerated", "dresden-files-accelerated"];
const fixtures = {};
let fco;
let validators;
let foundry;

/** The fixture's character at Physique 5 and Will 5, with FCO's linked slots turned on as FCO does. */
function superb(system) {
  const actor = structuredClone(fixtures[system]);
  actor._id = `${actor._id.slice(0, 10)}Superb`;
  for (const skill of Object.values(actor.system.skills)) {
    if (["Physique", "Will"].includes(skill.name)) skill.rank = 5;
  }
  for (const track of Object.values(actor.system.tracks)) {
    if ((track.linked_skills ?? []).some((l) => l.enables)) track.enabled = true;
  }
  return actor;
}

before(async () => {
  for (const system of SYSTEMS) fixtures[system] = await readJson(`tests/js/fixtures/fco-${system}.json`);
  let modules;
  ({ foundry, validators, modules } = await bootOfflineFoundry({
    users: [GM],
    actors: [...SYSTEMS.map((s) => fixtures[s]), superb("fate-core"), superb("fate-condensed")]
  }, ["adapters/fate-core-official"]));
  fco = modules["adapters/fate-core-official"];
});

const slots = (actor) => fco.toActorData(actor).consequences.map((c) => [c.severity, c.harm ?? null]);

test("R13.3: FCO's defaults below Superb send plain slots, harm left out", () => {
  for (const system of SYSTEMS) {
    const data = fco.toActorData(foundry.game.actors.get(fixtures[system]._id));
    assert.ok(data.consequences.every((c) => !("harm" in c)), system);
    check(validators.client["actor.sync"], { request_id: "r1", actor: data }, system);
  }
});

test("R13.3: at Physique and Will 5, Core and Condensed add a physical and a mental mild slot", () => {
  for (const system of ["fate-core", "fate-condensed"]) {
    const actor = foundry.game.actors.get(superb(system)._id);
    const got = slots(actor);
    assert.deepEqual(got.filter(([, harm]) => harm).sort(), [[2, "mental"], [2, "physical"]], system);
    assert.deepEqual(got.filter(([, harm]) => !harm).map(([severity]) => severity), [2, 4, 6], system);
    check(validators.client["actor.sync"], { request_id: "r1", actor: fco.toActorData(actor) }, system);
  }
});

test("R13.3: a consequence's harm comes from the skill that enables it, else its name, else none", () => {
  assert.equal(fco.consequenceHarm({ name: "Extra", category: "Combat", harm_can_absorb: 2, linked_skills: [{ linked_skill: "Will", rank: 5, enables: true }] }), "mental");
  assert.equal(fco.consequenceHarm({ name: "Physical Mild Consequence", category: "Combat", harm_can_absorb: 2 }), "physical");
  assert.equal(fco.consequenceHarm({ name: "Mild Consequence", category: "Combat", harm_can_absorb: 2 }), undefined);
  assert.equal(fco.consequenceHarm({ name: "Doomed", category: "Combat", harm_can_absorb: 6 }), undefined);
});
