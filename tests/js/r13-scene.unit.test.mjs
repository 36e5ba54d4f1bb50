// Unit tests of R13 in the module (issue 25): the scene panel's conflict controls per ruleset
// (whose turn, elective "next", full defense, concession) and the ruleset the module proposes
// from fate-core-official's framework (R13.9). The module's real code against the fake Foundry;
// no bridge process.
import assert from "node:assert/strict";
import path from "node:path";
import { before, describe, test } from "node:test";
import { MODULE_DIR, asUser as actAs, readJson, waitFor } from "./support/node-foundry.mjs";
import { bootOfflineFoundry } from "./support/offline-foundry.mjs";
import { check } from "./support/schemas.mjs";

const GM = { id: "r13GmUser000001", name: "Gamemaster", isGM: true };
const ANN = { id: "r13AnnUser00001", name: "Ann", isGM: false };
const BOB = { id: "r13BobUser00001", name: "Bob", isGM: false };

const FRAMEWORKS = ["fate-core", "fate-condensed", "fate-accelerated", "dresden-files-accelerated"];

let foundry;
let validators;
let view;
let ruleset;
let frameworks;
let combat;
let Bridge;
const fixtures = {};

const asUser = (userId, fn) => actAs(foundry, userId, fn);

before(async () => {
  for (const fw of FRAMEWORKS) fixtures[fw] = await readJson(`tests/js/fixtures/fco-${fw}.json`);
  let modules;
  ({ foundry, validators, modules } = await bootOfflineFoundry({
    users: [GM, ANN, BOB],
    // One character of a Fate Condensed game: what the world's characters say when FCO's
    // world lists are not there.
    actors: [{ ...fixtures["fate-condensed"], ownership: { default: 0, [ANN.id]: 3 } }]
  }, ["scene/view", "net/ruleset", "adapters/fco-frameworks", "scene/combat", "net/bridge"]));
  ({ "scene/view": view, "net/ruleset": ruleset, "adapters/fco-frameworks": frameworks, "scene/combat": combat } = modules);
  ({ Bridge } = modules["net/bridge"]);
});

// ---- conflicts as the bridge sends them (ConflictView, schemas/server/scene_state.json) -------

const who = {
  zird: { id: "actorZird0000001", name: "Zird the Arcane" },
  vera: { id: "actorVera0000001", name: "Vera Quickfoot" },
  ogre: { id: "actorOgre0000001", name: "Grumpy Ogre" },
  imp: { id: "actorImp00000001", name: "Sly Imp" }
};

const RULES = {
  "fate-core": { id: "fate-core", title: "Fate Core", conflicts: true, ratings: "skills", turn_order: "ranked", full_defense: true, stress_rule: "one_box", stunts_chosen: true },
  "fate-condensed": { id: "fate-condensed", title: "Fate Condensed", conflicts: true, ratings: "skills", turn_order: "elective", full_defense: false, stress_rule: "ones", stunts_chosen: true },
  "fate-accelerated": { id: "fate-accelerated", title: "Fate Accelerated", conflicts: true, ratings: "approaches", turn_order: "ranked", full_defense: false, stress_rule: "one_box", stunts_chosen: true },
  unwritten: { id: "unwritten", title: "Unwritten", conflicts: false, ratings: "skills", turn_order: null, full_defense: false, stress_rule: null, stunts_chosen: false }
};

/** Heroes (Zird: Ann's, Vera: Bob's) against Monsters (Ogre, Imp: NPCs). */
function conflict({ method = "elective", current = who.zird.id, acted = [], fullDefense = [], conceded = [], out = [], state = "open" } = {}) {
  const order = [who.zird, who.vera, who.ogre, who.imp].map((c, i) => ({
    character: c, side_id: i < 2 ? "s1" : "s2", rating: method === "ranked" ? 3 - i : 0, out: out.includes(c.id) || conceded.includes(c.id), npc: i >= 2
  }));
  return {
    id: "conflict-1", name: "Brawl on the roof", kind: "physical", state, exchange: 1,
    order_method: method, order_skill: method === "ranked" ? "Notice" : "",
    order, turn: Math.max(0, order.findIndex((t) => t.character.id === current)), current,
    acted, full_defense: fullDefense, conceded, clears_stress: false, ties: [],
    sides: [
      { id: "s1", name: "Heroes", members: [who.zird, who.vera], controllers: [ANN.id, BOB.id], progress: 0, conceded: false },
      { id: "s2", name: "Monsters", members: [who.ogre, who.imp], controllers: [], progress: 0, conceded: false }
    ],
    zones: [], winner: null
  };
}

function sceneState(rules, conflicts = []) {
  return {
    ruleset: rules?.id ?? "unwritten", rules, scene: { number: 1, session: 1, scenario: 1 }, gm_fate_points: 0,
    aspects: [], contests: [], challenges: [], conflicts, compels: [], settings: { trust_player_ratings: false, full_defense: false }
  };
}

const ids = (list) => list.map((c) => c.id);

describe("R13.5 elective order: who may go next", () => {
  test("the schema's ConflictView: the test conflicts are what the bridge sends", () => {
    const state = sceneState(RULES["fate-condensed"], [conflict()]);
    check(validators.server["scene.state"], { seq: 1, world: "r13-world", writer: "gm", state }, "scene.state");
  });

  test("those still in who have not acted this exchange, never the one acting now", () => {
    // R13.5: whoever acted picks who goes next among those who have not acted.
    assert.deepEqual(ids(view.electiveChoices(conflict())), [who.vera.id, who.ogre.id, who.imp.id]);
    assert.deepEqual(ids(view.electiveChoices(conflict({ current: who.vera.id, acted: [who.zird.id] }))), [who.ogre.id, who.imp.id]);
    // R13.6: taken out or conceded: out of the picking.
    assert.deepEqual(ids(view.electiveChoices(conflict({ current: who.vera.id, acted: [who.zird.id], out: [who.ogre.id] }))), [who.imp.id]);
    assert.deepEqual(ids(view.electiveChoices(conflict({ conceded: [who.imp.id] }))), [who.vera.id, who.ogre.id]);
    assert.ok(view.electiveChoices(conflict()).every((c) => !c.newExchange));
  });

  test("when everyone still in has acted, the last to act picks anyone still in to open the next exchange", () => {
    // R13.5: the last to act in an exchange picks who opens the next (itself included).
    const last = conflict({ current: who.imp.id, acted: [who.zird.id, who.vera.id, who.ogre.id] });
    const choices = view.electiveChoices(last);
    assert.deepEqual(ids(choices), [who.zird.id, who.vera.id, who.ogre.id, who.imp.id]);
    assert.ok(choices.every((c) => c.newExchange));
    const withOut = conflict({ current: who.imp.id, acted: [who.zird.id, who.ogre.id], out: [who.vera.id] });
    assert.deepEqual(ids(view.electiveChoices(withOut)), [who.zird.id, who.ogre.id, who.imp.id]);
  });

  test("the panel: elective order offers the picker to whoever acts now (its player or the GM); ranked order keeps its plain Next", async () => {
    const rules = RULES["fate-condensed"];
    const gm = view.conflictView(conflict(), foundry.game.user, rules);
    assert.equal(gm.elective, true);
    assert.equal(gm.canNext, true);
    assert.deepEqual(ids(gm.nextChoices), [who.vera.id, who.ogre.id, who.imp.id]);
    assert.equal(gm.whoseTurn, "Zird the Arcane's turn");
    assert.match(gm.facts, /elective order/);
    assert.equal(gm.turns.find((t) => t.id === who.zird.id).current, true);
    assert.equal(gm.turns[0].rating, null, "no ratings under elective order");
    const ann = await asUser(ANN.id, () => view.conflictView(conflict(), foundry.game.user, rules));
    assert.equal(ann.canNext, true, "Ann plays Zird, whose turn it is");
    const onOgre = conflict({ current: who.ogre.id, acted: [who.zird.id] });
    const annOnOgre = await asUser(ANN.id, () => view.conflictView(onOgre, foundry.game.user, rules));
    assert.equal(annOnOgre.canNext, false, "the GM picks after an NPC acted");
    assert.deepEqual(annOnOgre.nextChoices, []);
    assert.deepEqual(ids(view.conflictView(onOgre, foundry.game.user, rules).nextChoices), [who.vera.id, who.imp.id]);

    const ranked = view.conflictView(conflict({ method: "ranked" }), foundry.game.user, RULES["fate-core"]);
    assert.equal(ranked.elective, false);
    assert.equal(ranked.canNext, true);
    assert.deepEqual(ranked.nextChoices, [], "ranked order: no picker");
    assert.match(ranked.facts, /order by Notice/);
    assert.equal(ranked.turns[0].rating, "+3");
  });

  test("the rendered panel: the picker's select and Next in one form; acted, full defense and conceded tags", async () => {
    const { renderTemplate } = await import(path.join(MODULE_DIR, "scripts/foundry/compat.mjs"));
    const { PANEL_TEMPLATE } = await import(path.join(MODULE_DIR, "scripts/scene/panel.mjs"));
    const state = sceneState(RULES["fate-condensed"], [conflict({ current: who.vera.id, acted: [who.zird.id], conceded: [who.imp.id] })]);
    const holder = document.createElement("div");
    holder.innerHTML = await renderTemplate(PANEL_TEMPLATE, view.scenePanelContext(state));
    const form = holder.querySelector('form[data-form="next-conflict-1"]');
    assert.ok(form, "the next picker");
    assert.deepEqual([...form.querySelectorAll('select[name="nextId"] option')].map((o) => o.value), [who.ogre.id]);
    assert.ok(form.querySelector('[data-action="conflictNext"][data-conflict="conflict-1"]'));
    assert.equal(holder.querySelectorAll('[data-action="conflictNext"]').length, 1, "one Next");
    const row = (id) => holder.querySelector(`.fate-bridge-turn[data-character="${id}"]`);
    assert.ok(row(who.zird.id).querySelector('[data-state="acted"]'));
    assert.ok(row(who.vera.id).querySelector('[data-state="current"]'));
    assert.ok(row(who.imp.id).querySelector('[data-state="conceded"]'));
    assert.match(holder.querySelector(".fate-bridge-tracker__turn").textContent, /Vera Quickfoot's turn/);
    // The GM picks who opens a new elective conflict.
    assert.ok(holder.querySelector('form[data-form="conflict"] select[name="conflictFirst"]'));
    assert.equal(holder.querySelector('form[data-form="conflict"] [name="groupNpcs"]'), null);

    const ranked = sceneState(RULES["fate-core"], [conflict({ method: "ranked", fullDefense: [who.ogre.id] })]);
    holder.innerHTML = await renderTemplate(PANEL_TEMPLATE, view.scenePanelContext(ranked));
    assert.equal(holder.querySelector('select[name="nextId"]'), null);
    assert.equal(holder.querySelectorAll('[data-action="conflictNext"]').length, 1);
    assert.ok(row(who.ogre.id).querySelector('[data-state="full-defense"]'));
    assert.equal(holder.querySelector('[name="conflictFirst"]'), null, "ranked order: nobody picks who opens");
  });
});

describe("R13.7 full defense and R13.6 concession: who sees the buttons", () => {
  test("full defense: only when the rules have it, on that character's turn, for its player or the GM, once", async () => {
    const core = RULES["fate-core"];
    const c = conflict({ method: "ranked" });
    assert.equal(view.canFullDefend(c, who.zird.id, core), true, "the GM, on Zird's turn");
    assert.equal(view.canFullDefend(c, who.vera.id, core), false, "not Vera's turn");
    assert.equal(await asUser(ANN.id, () => view.canFullDefend(c, who.zird.id, core)), true, "Ann plays Zird");
    assert.equal(await asUser(BOB.id, () => view.canFullDefend(c, who.zird.id, core, foundry.game.user)), true, "Bob is on Zird's side (the side's controllers)");
    const onOgre = conflict({ method: "ranked", current: who.ogre.id });
    assert.equal(await asUser(ANN.id, () => view.canFullDefend(onOgre, who.ogre.id, core)), false, "an NPC's: the GM's");
    assert.equal(view.canFullDefend(onOgre, who.ogre.id, core), true);
    assert.equal(view.canFullDefend(conflict({ method: "ranked", fullDefense: [who.zird.id] }), who.zird.id, core), false, "already in full defense");
    // R13.7: Fate Accelerated has none; Fate Condensed only when the world turns it on.
    assert.equal(view.canFullDefend(c, who.zird.id, RULES["fate-accelerated"]), false);
    assert.equal(view.canFullDefend(conflict(), who.zird.id, RULES["fate-condensed"]), false);
    assert.equal(view.canFullDefend(conflict(), who.zird.id, { ...RULES["fate-condensed"], full_defense: true }), true);
    assert.equal(view.canFullDefend(conflict({ method: "ranked", state: "ended" }), who.zird.id, core), false);
    const panel = view.conflictView(c, foundry.game.user, core);
    assert.deepEqual(panel.turns.filter((t) => t.canFullDefense).map((t) => t.id), [who.zird.id]);
  });

  test("concede: every character still in, for its player or the GM; not once out", async () => {
    const c = conflict({ conceded: [who.vera.id], out: [who.imp.id] });
    const gm = view.conflictView(c, foundry.game.user, RULES["fate-condensed"]);
    assert.deepEqual(gm.turns.filter((t) => t.canConcede).map((t) => t.id), [who.zird.id, who.ogre.id]);
    assert.deepEqual(gm.turns.filter((t) => t.out).map((t) => t.id), [who.vera.id, who.imp.id]);
    const ann = await asUser(ANN.id, () => view.conflictView(c, foundry.game.user, RULES["fate-condensed"]));
    assert.deepEqual(ann.turns.filter((t) => t.canConcede).map((t) => t.id), [who.zird.id], "not the monsters'");
    assert.equal(view.canConcede(conflict({ state: "ended" }), who.zird.id), false);
  });
});

describe("R11.3 redrawing a conflict's zones: the scene panel's editor", () => {
  const map = [
    { name: "Roof", adjacent: ["Stairs", "Ledge"], occupants: [who.zird, who.ogre] },
    { name: "Stairs", adjacent: ["Roof"], occupants: [who.vera] },
    { name: "Ledge", adjacent: [], occupants: [] }
  ];
  const withZones = (opts) => ({ ...conflict(opts), zones: map });

  test("the map text is what readZones reads back: one line per zone, a zone without neighbours alone", () => {
    const gm = view.conflictView(withZones(), foundry.game.user, RULES["fate-condensed"]);
    assert.equal(gm.canRedraw, true);
    assert.equal(gm.mapText, "Roof: Stairs, Ledge\nStairs: Roof\nLedge");
    assert.deepEqual(view.readZones(gm.mapText), map.map(({ name, adjacent }) => ({ name, adjacent })));
    assert.equal(view.writeZones(view.readZones(" Yard :  Gate ,Wall \n\n Gate\n")), "Yard: Gate, Wall\nGate");
    assert.equal(view.writeZones([]), "");
    assert.deepEqual(view.readZones(view.writeZones([])), []);
    const bare = view.conflictView(conflict(), foundry.game.user, RULES["fate-condensed"]);
    assert.equal(bare.canRedraw, true, "a conflict without zones may be given some");
    assert.equal(bare.mapText, "");
  });

  test("only the GM, only on an open conflict", async () => {
    const ann = await asUser(ANN.id, () => view.conflictView(withZones(), foundry.game.user, RULES["fate-condensed"]));
    assert.equal(ann.canRedraw, false);
    assert.equal(ann.mapText, "", "a player is not handed the editor's text");
    const ended = view.conflictView(withZones({ state: "ended" }), foundry.game.user, RULES["fate-condensed"]);
    assert.equal(ended.canRedraw, false);
    assert.equal(ended.mapText, "");
  });
});

describe("conflicts are allowed by the world's rules", () => {
  test("state.rules.conflicts, else hello.rules; a ruleset without conflicts shows none", () => {
    const c = conflict();
    assert.equal(view.scenePanelContext(sceneState(RULES["fate-core"], [c])).conflictsAllowed, true);
    assert.equal(view.scenePanelContext(sceneState(RULES["fate-accelerated"], [c])).conflictsAllowed, true);
    const none = view.scenePanelContext(sceneState(RULES.unwritten, [c]));
    assert.equal(none.conflictsAllowed, false);
    assert.deepEqual(none.conflicts, []);
    const noRules = { ...sceneState(null, [c]), ruleset: "fate-condensed" };
    delete noRules.rules;
    assert.equal(view.scenePanelContext(noRules).conflictsAllowed, false, "no rules anywhere: none");
    const ctx = view.scenePanelContext(noRules, { helloRules: RULES["fate-condensed"] });
    assert.equal(ctx.conflictsAllowed, true, "hello's rules");
    assert.equal(ctx.setup.electiveStart, true);
  });

  test("the Combat tracker follows `current` and marks those out defeated", () => {
    const c = conflict({ current: who.ogre.id, acted: [who.zird.id] });
    c.turn = 0;
    assert.equal(combat.trackerTurn(c), 2);
    assert.equal(combat.trackerTurn({ ...c, current: null }), 0);
  });
});

describe("R13.9: the ruleset proposed from fate-core-official's framework", () => {
  const EXPECTED = { "fate-core": "fate-core", "fate-condensed": "fate-condensed", "fate-accelerated": "fate-accelerated", "dresden-files-accelerated": "fate-condensed" };

  test("each of FCO's four frameworks, from the skills and tracks its default loads", () => {
    for (const fw of FRAMEWORKS) {
      const { skills, tracks } = fixtures[fw].system;
      assert.equal(frameworks.fcoFramework({ skills, tracks }), fw, fw);
      assert.equal(frameworks.rulesetForFramework(frameworks.fcoFramework({ skills, tracks })), EXPECTED[fw], fw);
      // The skill list alone decides too (a world whose tracks the GM emptied).
      assert.equal(frameworks.fcoFramework({ skills }), fw, `${fw} by skills`);
    }
  });

  test("Core and Condensed differ by Academics; a Core list that lost a skill or two is still Core", () => {
    const core = Object.values(fixtures["fate-core"].system.skills).map((s) => s.name);
    assert.equal(frameworks.fcoFramework({ skills: core.filter((n) => n !== "Drive" && n !== "Shoot") }), "fate-core");
    assert.equal(frameworks.fcoFramework({ skills: [...core, "Academics"] }), "fate-condensed");
    // Condensed's track names with Core's skills: the skills decide.
    assert.equal(frameworks.fcoFramework({ skills: core, tracks: fixtures["fate-condensed"].system.tracks }), "fate-core");
  });

  test("an unknown game gets no proposal", () => {
    const homebrew = { skills: ["Swords", "Sorcery", "Sailing", "Swagger"], tracks: ["Wounds", "Sanity"] };
    assert.equal(frameworks.fcoFramework(homebrew), null);
    assert.equal(frameworks.rulesetForFramework(frameworks.fcoFramework(homebrew)), null);
    assert.equal(frameworks.fcoFramework({}), null);
    assert.equal(frameworks.rulesetForFramework("space-opera"), null);
    assert.equal(ruleset.rulesetProposal("unwritten", { setting: "", fco: null }), null);
  });

  test("the proposal: the GM's setting first, else FCO's game; nothing when the bridge plays it already", () => {
    assert.equal(ruleset.rulesetProposal("unwritten", { setting: "", fco: "fate-core" }), "fate-core");
    assert.equal(ruleset.rulesetProposal("fate-core", { setting: "", fco: "fate-core" }), null);
    assert.equal(ruleset.rulesetProposal("fate-core", { setting: "fate-accelerated", fco: "fate-core" }), "fate-accelerated");
    assert.equal(ruleset.rulesetProposal("fate-accelerated", { setting: "fate-accelerated", fco: "fate-core" }), null);
  });

  test("where the lists come from: FCO's world data item (setting `wid`), else its legacy settings, else the characters", async () => {
    // No FCO settings in this fake world: the characters (one Fate Condensed character) decide.
    assert.equal(frameworks.fcoProposal(), "fate-condensed");
    // FCO's own registrations (fco.js, i18nInit): world-scoped, hidden.
    foundry.game.settings.register("fate-core-official", "wid", { scope: "world", config: false, type: String, default: "" });
    foundry.game.settings.register("fate-core-official", "skills", { scope: "world", config: false, type: Object, default: {} });
    foundry.game.settings.register("fate-core-official", "tracks", { scope: "world", config: false, type: Object, default: {} });
    await foundry.game.settings.set("fate-core-official", "skills", fixtures["dresden-files-accelerated"].system.skills);
    assert.equal(frameworks.fcoProposal(), "fate-condensed", "the legacy world lists (Dresden Files Accelerated)");
    const item = { uuid: "Item.fcoWorldData001", system: { skills: fixtures["fate-core"].system.skills, tracks: fixtures["fate-core"].system.tracks, defaults: {} } };
    const lookup = globalThis.fromUuidSync;
    globalThis.fromUuidSync = (uuid) => (uuid === item.uuid ? item : lookup(uuid));
    try {
      await foundry.game.settings.set("fate-core-official", "wid", item.uuid);
      assert.equal(frameworks.fcoProposal(), "fate-core", "the world data item's lists");
    } finally {
      globalThis.fromUuidSync = lookup;
      await foundry.game.settings.set("fate-core-official", "wid", "");
      await foundry.game.settings.set("fate-core-official", "skills", {});
    }
  });

  test("the setting: GM-only, world scope, the four rulesets and 'as the bridge has it'", () => {
    const config = foundry.game.settings.configs.get("fate-bridge.ruleset");
    assert.equal(config.scope, "world");
    assert.equal(config.restricted, true);
    assert.equal(config.default, "");
    assert.deepEqual(Object.keys(config.choices), ["", "unwritten", "fate-core", "fate-condensed", "fate-accelerated"]);
  });
});

describe("R13.9: switching the bridge's world", () => {
  /** A connection that records calls and answers world.ruleset with `answer`; hello as `bridge`'s. */
  function stubConnection(bridge, answer) {
    const calls = [];
    return {
      calls,
      connected: true,
      status: { state: "connected" },
      async call(event, payload) {
        calls.push({ event, payload });
        if (event === "world.ruleset") return answer(payload);
        if (event === "hello") return { ok: true, data: { ...bridge.hello, ruleset: payload ? "fate-condensed" : bridge.hello.ruleset, rules: RULES["fate-condensed"] } };
        return { ok: false, error: { code: "invalid", message: "not in this test" } };
      }
    };
  }

  test("the GM connects to a bridge on another ruleset: a dialog offers FCO's; confirming sends world.ruleset", async () => {
    const bridge = new Bridge();
    const connection = stubConnection(bridge, ({ ruleset: r }) => ({ ok: true, data: { ruleset: r, changed: true, rules: RULES[r] } }));
    bridge.connection = connection;
    bridge.hello = { role: "gm", ruleset: "unwritten", rules: RULES.unwritten };
    try {
      const offered = ruleset.offerRuleset(bridge);
      const dialog = await waitFor(() => foundry.openDialogs().at(-1), { what: "ruleset dialog" });
      assert.equal(dialog.config.rejectClose, false);
      assert.match(dialog.element.textContent, /fate-core-official game is Fate Condensed, but the bridge plays Unwritten/);
      dialog.element.querySelector('button[data-action="switch"]').click();
      const data = await offered;
      assert.equal(data.ruleset, "fate-condensed");
      const sent = connection.calls.filter((c) => c.event === "world.ruleset");
      assert.deepEqual(sent.map((c) => c.payload), [{ ruleset: "fate-condensed" }], "sent once (the setting's own change sends nothing more)");
      check(validators.client["world.ruleset"], { request_id: "r-ruleset-1", ...sent[0].payload }, "world.ruleset");
      assert.equal(foundry.game.settings.get("fate-bridge", "ruleset"), "fate-condensed", "the GM's choice is kept");
      assert.equal(bridge.hello.ruleset, "fate-condensed", "hello asked again");
      assert.match(foundry.log.notifications.at(-1).message, /now plays Fate Condensed/);
    } finally {
      await foundry.game.settings.set("fate-bridge", "ruleset", "");
    }
  });

  test("a player is never asked; nothing is asked when the bridge plays the proposal", async () => {
    const bridge = new Bridge();
    bridge.hello = { role: "player", ruleset: "unwritten" };
    assert.equal(await asUser(ANN.id, () => ruleset.offerRuleset(bridge)), null);
    bridge.hello = { role: "gm", ruleset: "fate-condensed" };
    assert.equal(await ruleset.offerRuleset(bridge), null);
    assert.equal(foundry.openDialogs().length, 0);
  });

  test("the GM changes the setting while a conflict is open: the refusal is shown and the setting goes back", async () => {
    const bridge = new Bridge();
    const connection = stubConnection(bridge, () => ({ ok: false, error: { code: "wrong_state", message: "A conflict is still open.", field: "ruleset" } }));
    bridge.connection = connection;
    bridge.hello = { role: "gm", ruleset: "fate-core", rules: RULES["fate-core"] };
    try {
      // The setting's onChange hands the new value to this client's Bridge (main.mjs).
      await foundry.game.settings.set("fate-bridge", "ruleset", "fate-accelerated");
      await ruleset.onRulesetSetting(bridge, "fate-accelerated");
      await waitFor(() => foundry.game.settings.get("fate-bridge", "ruleset") === "fate-core", { what: "the setting reverted" });
      assert.deepEqual(connection.calls.filter((c) => c.event === "world.ruleset").map((c) => c.payload), [{ ruleset: "fate-accelerated" }]);
      const note = foundry.log.notifications.at(-1);
      assert.equal(note.type, "error");
      assert.match(note.message, /rules stay as they are: That does not fit what is happening now\. \(ruleset\) Switch to Fate Accelerated once every conflict/);
    } finally {
      await foundry.game.settings.set("fate-bridge", "ruleset", "");
    }
  });
});
