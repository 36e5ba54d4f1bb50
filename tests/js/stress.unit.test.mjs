// Stress per track (R5.10 Decision): fate-core-official 4.7's default characters (fixtures shaped as
// FCO stores them: tests/js/fixtures/fco-*.json) through the real adapter both ways, and the absorb
// picker naming each track and each box's value. The fake Foundry, the module's real code.
import assert from "node:assert/strict";
import { before, describe, test } from "node:test";
import path from "node:path";
import { pressAbsorb } from "./support/cards.mjs";
import { MODULE_DIR, bootNodeFoundry, readJson, waitFor } from "./support/node-foundry.mjs";
import { check, loadValidators } from "./support/schemas.mjs";

const GM = { id: "stressGmUser0001", name: "Gamemaster", isGM: true };
const SYSTEMS = ["fate-core", "fate-condensed", "fate-accelerated", "dresden-files-accelerated"];

let foundry;
let validators;
let fco;
let writes;
let pickers;
let controls;
let bridge;
const fixtures = {};

before(async () => {
  validators = await loadValidators();
  for (const system of SYSTEMS) fixtures[system] = await readJson(`tests/js/fixtures/fco-${system}.json`);
  bridge = new (await import(path.join(MODULE_DIR, "scripts/net/bridge.mjs"))).Bridge();
  foundry = await bootNodeFoundry({
    users: [GM], userId: GM.id, activeGM: GM.id, systemId: "fate-core-official",
    actors: SYSTEMS.map((s) => fixtures[s]),
    settings: { "fate-bridge.bridgeUrl": "http://127.0.0.1:9" }
  }, { io: () => { throw new Error("no connection in unit tests"); }, bridge });
  foundry.Hooks.callAll("init");
  fco = await import(path.join(MODULE_DIR, "scripts/adapters/fate-core-official.mjs"));
  writes = await import(path.join(MODULE_DIR, "scripts/foundry/world-writes.mjs"));
  pickers = await import(path.join(MODULE_DIR, "scripts/cards/pickers.mjs"));
  controls = await import(path.join(MODULE_DIR, "scripts/cards/controls.mjs"));
});

const actorOf = (system) => foundry.game.actors.get(fixtures[system]._id);
const shape = (tracks) => tracks.map((t) => [t.name, t.kind, t.boxes.map((b) => b.value), t.boxes.map((b) => b.marked)]);
const free = (n) => Array.from({ length: n }, () => false);

describe("fate-core-official 4.7 defaults -> the bridge's stress tracks (R5.10)", () => {
  const expected = {
    // Escalating boxes keep their values; Physique 3 and Will 1 add FCO's linked-skill boxes.
    "fate-core": {
      stress: [["Physical Stress", "physical", [1, 2, 3, 4], free(4)], ["Mental Stress", "mental", [1, 2, 3], free(3)]],
      consequences: [2, 4, 6]
    },
    // 3 + 3 one-shift boxes, Physique 1 adds a fourth physical box; the Physique 5 / Will 5 slots stay off.
    "fate-condensed": {
      stress: [["Physical Stress", "physical", [1, 1, 1, 1], free(4)], ["Mental Stress", "mental", [1, 1, 1], free(3)]],
      consequences: [2, 4, 6]
    },
    // One track for every hit, escalating.
    "fate-accelerated": { stress: [["Stress", "any", [1, 2, 3], free(3)]], consequences: [2, 4, 6] },
    // Six 1-shift boxes for every hit; Indebted is not stress; Doomed and In Peril are consequences.
    "dresden-files-accelerated": {
      stress: [["Stress", "any", [1, 1, 1, 1, 1, 1], free(6)], ["Indebted", "other", [1, 1, 1, 1, 1], free(5)]],
      consequences: [6, 4]
    }
  };
  for (const system of SYSTEMS) {
    test(`${system}: tracks by FCO's category, linked skills and name, each box's value; schema-valid`, () => {
      const data = fco.toActorData(actorOf(system));
      check(validators.client["actor.sync"], { request_id: `r-${system}`, actor: data }, `actor.sync ${system}`);
      assert.deepEqual(shape(data.stress), expected[system].stress);
      assert.deepEqual(data.consequences.map((c) => c.severity), expected[system].consequences);
      assert.equal(new Set(data.stress.map((t) => t.id)).size, data.stress.length, "one id per track");
    });
  }

  test("a track's kind: FCO's localized defaults (German, Spanish, Portuguese) and categories", () => {
    const track = (name, category = "Combat", linked = []) => ({ name, category, linked_skills: linked.map((s) => ({ linked_skill: s, rank: 1, boxes: 1, enables: false })) });
    assert.equal(fco.trackKind(track("Physische Belastung", "Combat", ["Physique"])), "physical");
    assert.equal(fco.trackKind(track("Psychische Belastung", "Combat", ["Will"])), "mental");
    assert.equal(fco.trackKind(track("Estrés Físico", "Combat", ["Físico"])), "physical");
    assert.equal(fco.trackKind(track("Estresse mental", "Combate", ["Vontade"])), "mental");
    assert.equal(fco.trackKind(track("Physischer Stress")), "physical", "by name when no skill is linked");
    assert.equal(fco.trackKind(track("Estresse", "Combate")), "any");
    assert.equal(fco.trackKind(track("Verschuldet", "Sonstige")), "other");
    assert.equal(fco.trackKind(track("Hunger", "Vampire")), "other", "a DFA mantle's track is not stress");
  });
});

describe("bridge -> fate-core-official: a patch ticks only the right track's boxes (R5.10)", () => {
  /** A patch as the bridge sends it: the actor's tracks with `marks` applied by track name. */
  function patchFor(actor, marks, seq) {
    const data = fco.toActorData(actor);
    const stress = data.stress.map((t) => ({ ...t, boxes: t.boxes.map((b, i) => ({ ...b, marked: (marks[t.name] ?? []).includes(i) || b.marked })) }));
    const consequences = data.consequences.map((c) => ({ id: c.id, severity: c.severity, name: c.name ?? null, status: "fresh" }));
    const patch = { seq, world: "w", writer: "gm", actor_id: actor.id, fate_points: 3, pending_fate_points: 0, overwhelmed: false, consequences, stress };
    check(validators.server["actor.patch"], patch, "actor.patch");
    return patch;
  }
  /** The box_values keys an update writes on tracks that are not consequences (those follow the slots). */
  const boxKeys = (update, actor) => {
    const consequenceKeys = new Set(fco.consequenceTracks(actor).map(({ key }) => `system.tracks.${key}.box_values`));
    return Object.keys(update).filter((k) => k.endsWith(".box_values") && !consequenceKeys.has(k));
  };

  for (const [seq, system, track, boxes] of [
    [101, "fate-core", "Physical Stress", [1]],
    [102, "fate-condensed", "Mental Stress", [0, 2]],
    [103, "fate-accelerated", "Stress", [2]],
    [104, "dresden-files-accelerated", "Stress", [0, 1, 2]]
  ]) {
    test(`${system}: marking ${track} ${boxes.map((b) => b + 1).join(", ")} writes that track's box_values only, and reads back`, async () => {
      const actor = actorOf(system);
      const before = structuredClone(actor.system.tracks);
      const key = Object.keys(before).find((k) => before[k].name === track);
      const update = fco.patchUpdate(actor, patchFor(actor, { [track]: boxes }, seq));
      assert.deepEqual(boxKeys(update, actor), [`system.tracks.${key}.box_values`], "no other track's boxes");
      assert.ok(await writes.handleActorPatch(bridge, patchFor(actor, { [track]: boxes }, seq)));
      const after = actor.system.tracks;
      assert.deepEqual(after[key].box_values, before[key].box_values.map((_, i) => boxes.includes(i)));
      // Other tracks keep their boxes and all they had; a patch may give each its wire id to keep (issue 25).
      const unpinned = ({ fate_bridge_id: _id, ...rest }) => rest;
      for (const other of Object.keys(before).filter((k) => k !== key)) assert.deepEqual(unpinned(after[other]), before[other], `${before[other].name} untouched`);
      const back = fco.toActorData(actor).stress.find((t) => t.name === track);
      assert.deepEqual(back.boxes.map((b) => b.marked), before[key].box_values.map((_, i) => boxes.includes(i)));
    });
  }

  test("a track of kind other is never written, even if a patch says it is marked", () => {
    const actor = actorOf("dresden-files-accelerated");
    const update = fco.patchUpdate(actor, patchFor(actor, { Indebted: [0, 1] }, 105));
    assert.deepEqual(boxKeys(update, actor), []);
    // A patch that changes nothing on the stress tracks writes none of their box_values.
    const core = actorOf("fate-core");
    assert.deepEqual(boxKeys(fco.patchUpdate(core, patchFor(core, {}, 106)), core), []);
  });

  test("a patch stored before named tracks (a flat list of booleans, replayed by world.sync) ticks nothing on FCO and reads as one physical track on flags", async () => {
    const core = actorOf("fate-core");
    const old = { ...patchFor(core, {}, 107), stress: [true, false] };
    assert.deepEqual(boxKeys(fco.patchUpdate(core, old), core), []);
    const generic = await import(path.join(MODULE_DIR, "scripts/adapters/generic.mjs"));
    assert.deepEqual(generic.patchUpdate(core, old)["flags.fate-bridge.stress"], [{ id: "physical", name: "Physical Stress", kind: "physical", boxes: [{ value: 1, marked: true }, { value: 1, marked: false }] }]);
  });
});

describe("the absorb picker names the track and each box's value (R5.10)", () => {
  const target = (system) => {
    const data = fco.toActorData(actorOf(system));
    return { id: data.id, name: data.name, stress: data.stress, consequences: data.consequences.map((c) => ({ id: c.id, severity: c.severity, name: c.name ?? null, status: "fresh" })) };
  };
  const card = (system, kind, hit) => ({ action_id: "act-9", action_type: "attack", state: "absorbing", pending_hit: hit, attack_kind: kind, target: { id: fixtures[system]._id, name: fixtures[system].name }, prompt: { kind: "absorb", users: [], gm: true, options: [] } });

  test("a physical hit offers only the physical track, with escalating values; a mental hit only the mental one", () => {
    const physical = pickers.absorbView(card("fate-core", "physical", 3), target("fate-core"));
    assert.equal(physical.hit, "Core Brawler must absorb a physical hit of 3 shifts.");
    assert.deepEqual(physical.tracks.map((t) => [t.name, t.boxes.map((b) => b.value)]), [["Physical Stress", [1, 2, 3, 4]]]);
    assert.equal(physical.tracks[0].boxes[2].title, "Physical Stress, box 3: absorbs 3");
    const mental = pickers.absorbView(card("fate-core", "mental", 1), target("fate-core"));
    assert.deepEqual(mental.tracks.map((t) => t.name), ["Mental Stress"]);
    const dfa = pickers.absorbView(card("dresden-files-accelerated", "mental", 1), target("dresden-files-accelerated"));
    assert.deepEqual(dfa.tracks.map((t) => t.name), ["Stress"], "the any track, never Indebted");
  });

  test("the picker's answer is a schema-valid action.absorb naming the track and the boxes", async () => {
    const state = { characters: [target("fate-condensed")] };
    try {
      const pending = pressAbsorb(controls, bridge, card("fate-condensed", "physical", 3), state);
      const dialog = await waitFor(() => foundry.openDialogs().at(-1), { what: "absorb dialog" });
      assert.equal(dialog.config.rejectClose, false);
      const el = dialog.element;
      const lines = [...el.querySelectorAll("[data-track-line]")].map((l) => l.textContent.replace(/\s+/g, " ").trim());
      assert.deepEqual(lines, ["Physical Stress 1 1 1 1"], "only the physical track, each box labelled with its value");
      const boxes = [...el.querySelectorAll("input[data-track]")];
      boxes[0].checked = true;
      boxes[3].checked = true;
      el.querySelector("[data-slot]").value = "Winded";
      el.querySelector('button[data-action="absorb"]').click();
      const [event, payload] = await pending;
      assert.equal(event, "action.absorb");
      const physicalId = state.characters[0].stress.find((t) => t.kind === "physical").id;
      assert.deepEqual(payload.stress, [{ track: physicalId, boxes: [0, 3] }]);
      assert.deepEqual(Object.values(payload.consequences), ["Winded"]);
      check(validators.client["action.absorb"], { request_id: "r-absorb-1", ...payload }, "action.absorb");
    } finally {
      bridge.connection = null;
    }
  });
});

describe("an attack carries its kind (R11.3)", () => {
  test("the action dialog shows Harm for an attack only; the answer becomes a valid action.start with attack_kind", async () => {
    const { setField } = await import("./support/node-foundry.mjs");
    const { askAction } = await import(path.join(MODULE_DIR, "scripts/actions/roll-dialog.mjs"));
    const { startPayload } = await import(path.join(MODULE_DIR, "scripts/actions/start.mjs"));
    bridge.hello = { actions: [{ id: "overcome", label: "Overcome" }, { id: "attack", label: "Attack" }] };
    try {
      const actor = actorOf("fate-condensed");
      const answer = askAction(bridge, { actor, skill: "Provoke" });
      const dialog = await waitFor(() => foundry.openDialogs().at(-1), { what: "action dialog" });
      const el = dialog.element;
      const kind = el.querySelector("select[name=attackKind]");
      assert.deepEqual([...kind.querySelectorAll("option")].map((o) => [o.value, o.textContent]), [["", "The conflict's kind (else physical)"], ["physical", "Physical"], ["mental", "Mental"]]);
      assert.equal(kind.hidden, true, "an overcome has no kind of harm");
      setField(el.querySelector("select[name=type]"), "attack");
      el.querySelector("select[name=type]").dispatchEvent(new globalThis.DomEvent("change"));
      assert.equal(kind.hidden, false);
      setField(kind, "mental");
      setField(el.querySelector("select[name=target]"), fixtures["fate-core"]._id);
      el.querySelector('button[data-action="roll"]').click();
      const request = await answer;
      assert.equal(request.attackKind, "mental");
      const payload = startPayload(actor, request.skill, request);
      assert.equal(payload.attack_kind, "mental");
      check(validators.client["action.start"], { request_id: "r-kind-1", ...payload }, "action.start");
      // Left at its default, the bridge decides: no attack_kind is sent.
      assert.equal("attack_kind" in startPayload(actor, "Provoke", { type: "attack", opposition: 1, targetId: fixtures["fate-core"]._id }), false);
    } finally {
      bridge.hello = null;
    }
  });
});
