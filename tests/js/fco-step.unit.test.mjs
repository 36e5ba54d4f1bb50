// fate-core-official 4.7.14 on Foundry 14, in step with the bridge (issue 25, "FCO in step"): the
// fake runs as Foundry 14 with FCO's actor class (statuses stay empty) and the FCO stand-in's
// sheet and Fate Utilities; the module under test is always the real code, connected to a stub
// bridge that records what the module sends (each intent checked against its schema).
import assert from "node:assert/strict";
import path from "node:path";
import { after, before, beforeEach, describe, test } from "node:test";
import { MODULE_DIR, bootNodeFoundry, readJson, setField, waitFor } from "./support/node-foundry.mjs";
import { FCO_CLICK_GUARD_MS, domEvent, installFcoStandIn, userClick, userDoubleClick } from "./support/fco-stand-in.mjs";
import { check, loadValidators } from "./support/schemas.mjs";
import { consequenceAspect, fcoTrack, goblin, ogre, zird } from "./fixtures/actors.mjs";

const GM = { id: "gmUser000000001", name: "Gamemaster", isGM: true };
const PLAYER = { id: "playerUser00001", name: "Ann", isGM: false };
const OTHER = { id: "playerUser00002", name: "Bob", isGM: false };
const ASSISTANT = { id: "assistantGm00001", name: "Assistant", isGM: true, role: 3 };
const ZIRD = "actorZird0000001";
const OGRE = "actorOgre0000001";
const GOBLIN = "actorGoblin00001";
const ALLY = "actorAllyBob0001";
const SCRAPPER = "fcoCondensed0001";

/** Bob's character: every user may observe it (default OBSERVER). */
function ally() {
  return {
    _id: ALLY, name: "Bob's Bard", type: "fate-core-official", ownership: { default: 2, [OTHER.id]: 3 },
    system: {
      details: { fatePoints: { current: 2, refresh: 2, boosts: 0 } },
      skills: { Rapport: { name: "Rapport", rank: 3 }, Lore: { name: "Lore", rank: 1 } },
      aspects: {}, stunts: {},
      tracks: { TWlsZA: fcoTrack("Mild", { harm: 2, aspect: consequenceAspect() }) }
    }
  };
}

/** Zird with FCO's stunt kinds: linked to a skill (caa), a defend-only one, a "Special" one, and a rollable track. */
function zirdWithStunts() {
  const actor = zird(PLAYER.id);
  actor.system.stunts.Duelist = { name: "Duelist", linked_skill: "Athletics", bonus: 2, overcome: false, caa: false, attack: false, defend: true, refresh_cost: 1 };
  actor.system.stunts.Polymath = { name: "Polymath", linked_skill: "Special", bonus: 1, overcome: true, caa: false, attack: false, defend: false, refresh_cost: 1 };
  actor.system.tracks.Wealth = { ...fcoTrack("Wealth", { boxes: 3, category: "Other", values: [true, false, false] }), rollable: "full" };
  return actor;
}

/** The bridge's GM budget in the stub's scene states (the last one set). */
let budget = 0;
const sceneState = (overrides = {}) => {
  if (Number.isInteger(overrides.gm_fate_points)) budget = overrides.gm_fate_points;
  return {
    ruleset: "unwritten",
    rules: { id: "unwritten", title: "Unwritten", conflicts: false, ratings: "skills", turn_order: null, full_defense: false, stress_rule: null, stunts_chosen: false },
    scene: { number: 1, session: 1, scenario: 1 }, settings: { trust_player_ratings: false, full_defense: false },
    gm_fate_points: budget, aspects: [], contests: [], challenges: [], conflicts: [], compels: [], created_id: null, ...overrides
  };
};
const situation = (id, name, free = {}) => ({ id, name, kind: "situation", attached_to: null, free_invokes: free, count: 1 });

let foundry;
let validators;
let bridge;
let adapters;
let writes;
let dialog;
/** What the module sent the stub bridge: {event, payload}. */
const sent = [];
/** The stub bridge's answers by event (default: ok with empty data). */
const unavailable = () => ({ ok: false, error: { code: "unavailable", message: "not in this stub" } });
const answers = { "action.odds": unavailable, "world.state": unavailable };
let seq = 100;

before(async () => {
  validators = await loadValidators();
  const scrapper = await readJson("tests/js/fixtures/fco-fate-condensed.json");
  bridge = new (await import(path.join(MODULE_DIR, "scripts/net/bridge.mjs"))).Bridge();
  foundry = await bootNodeFoundry({
    generation: 14,
    users: [GM, PLAYER, OTHER, ASSISTANT],
    userId: GM.id,
    activeGM: GM.id,
    systemId: "fate-core-official",
    actors: [zirdWithStunts(), ogre(), goblin(), ally(), scrapper],
    settings: { "fate-bridge.bridgeUrl": "http://127.0.0.1:9" }
  }, { io: () => { throw new Error("no connection in unit tests"); }, bridge });
  installFcoStandIn(foundry);
  foundry.Hooks.callAll("init");
  adapters = await import(path.join(MODULE_DIR, "scripts/adapters/index.mjs"));
  writes = await import(path.join(MODULE_DIR, "scripts/foundry/world-writes.mjs"));
  dialog = await import(path.join(MODULE_DIR, "scripts/actions/roll-dialog.mjs"));
  bridge.connection = {
    connected: true,
    status: { state: "connected", reason: null, message: null },
    call: async (event, payload) => {
      const validate = validators.client[event];
      if (validate) check(validate, { request_id: "r1", ...payload }, event);
      sent.push({ event, payload: structuredClone(payload) });
      return answers[event] ? answers[event](payload) : { ok: true, data: {} };
    }
  };
});

after(() => {
  bridge.connection = null;
});

beforeEach(() => {
  sent.length = 0;
  for (const d of foundry.openDialogs()) d.element.querySelector('[data-action="close"]')?.click();
});

const settle = (ms = 0) => new Promise((r) => setTimeout(r, ms));
const sentOf = (event) => sent.filter((s) => s.event === event).map((s) => s.payload);
const actorOf = (id) => foundry.game.actors.get(id);
const data = (id) => adapters.adapterFor().toActorData(actorOf(id));
const change = (el, value) => {
  setField(el, value);
  el.dispatchEvent(domEvent("change"));
};
function patch(actorId, fields = {}) {
  const current = data(actorId);
  const emit = {
    seq: ++seq, world: "w", writer: "gm", actor_id: actorId, fate_points: current.fate_points ?? 0, pending_fate_points: 0, overwhelmed: false,
    consequences: (current.consequences ?? []).map((c) => ({ id: c.id, severity: c.severity, name: c.name ?? null, status: "fresh" })),
    stress: current.stress ?? [], boosts: 0, ...fields
  };
  check(validators.server["actor.patch"], emit, "actor.patch");
  return emit;
}
async function sceneEmit(state) {
  const emit = { seq: ++seq, world: "w", writer: "gm", state };
  check(validators.server["scene.state"], emit, "scene.state");
  await bridge.scene.handle(emit, { activeGM: true });
  await settle(10);
}
/** Run fn as another user of this client (Foundry's game.user). */
async function as(user, fn) {
  const saved = foundry.game.user;
  foundry.game.user = foundry.game.users.get(user.id);
  try {
    return await fn();
  } finally {
    foundry.game.user = saved;
  }
}

describe("a. status icons come off under FCO on Foundry 14", () => {
  test("the fake is FCO on Foundry 14: effects are made, `statuses` stays empty", async () => {
    const actor = actorOf(OGRE);
    await actor.toggleStatusEffect("fate-bridge-mild", { active: true });
    assert.equal(actor.effects.size, 1);
    assert.equal(actor.statuses.size, 0, "fcoActor.applyActiveEffects does nothing on Foundry 14");
    await actor.toggleStatusEffect("fate-bridge-mild", { active: false });
    assert.equal(actor.effects.size, 0);
  });

  test("token.status sets and removes the effects, once each, reading the actor's effects", async () => {
    const actor = actorOf(ZIRD);
    const shown = () => actor.effects.contents.flatMap((e) => [...e.statuses]).sort();
    const emit = (statuses) => ({ seq: ++seq, world: "w", writer: "gm", actor_id: ZIRD, statuses });
    assert.deepEqual(await writes.handleTokenStatus(bridge, emit({ mild: true, overwhelmed: true })), ["fate-bridge-mild", "fate-bridge-overwhelmed"]);
    assert.deepEqual(shown(), ["fate-bridge-mild", "fate-bridge-overwhelmed"]);
    assert.equal(actor.statuses.size, 0);
    assert.deepEqual(await writes.handleTokenStatus(bridge, emit({ mild: false, overwhelmed: true })), ["fate-bridge-mild"]);
    assert.deepEqual(shown(), ["fate-bridge-overwhelmed"], "the mild icon comes off");
    assert.deepEqual(await writes.handleTokenStatus(bridge, emit({ mild: false, overwhelmed: true, boost: false })), [], "nothing changes twice");
    assert.equal(actor.effects.size, 1);
    assert.deepEqual(await writes.handleTokenStatus(bridge, emit({ overwhelmed: false })), ["fate-bridge-overwhelmed"]);
    assert.deepEqual(shown(), [], "no icon left");
  });
});

describe("b. FCO's boosts, GM fate points and situation aspects are the bridge's too", () => {
  test("a patch writes only the bridge's boosts: boosts given with Fate Utilities stay", async () => {
    const actor = actorOf(ZIRD);
    const boosts = () => actor.system.details.fatePoints.boosts;
    await actor.update({ "system.details.fatePoints.boosts": 2 }); // Fate Utilities' player boosts field
    await writes.handleActorPatch(bridge, patch(ZIRD, { boosts: 1 }));
    assert.equal(boosts(), 3, "two from Fate Utilities and the bridge's one");
    await writes.handleActorPatch(bridge, patch(ZIRD, { boosts: 0 }));
    assert.equal(boosts(), 2, "the bridge's boost was used; Fate Utilities' stay");
    await actor.update({ "system.details.fatePoints.boosts": 1 }); // one spent through Fate Utilities
    await writes.handleActorPatch(bridge, patch(ZIRD, { boosts: 2 }));
    assert.equal(boosts(), 3);
  });

  test("the bridge's GM budget is the active GM's Fate Utilities pool, both ways, without echo", async () => {
    const gm = foundry.game.users.get(GM.id);
    await sceneEmit(sceneState({ gm_fate_points: 4 }));
    assert.equal(gm.getFlag("fate-core-official", "gmfatepoints"), 4);
    assert.deepEqual(sentOf("fate.gm_budget"), [], "the bridge's own number is not sent back");
    const fu = foundry.fco.renderFateUtilities();
    change(fu.querySelector(`input[name="gmfp"][data-gmid="${GM.id}"]`), 2);
    await waitFor(() => sentOf("fate.gm_budget").length === 1, { what: "fate.gm_budget" });
    assert.deepEqual(sentOf("fate.gm_budget"), [{ fate_points: 2 }]);
    await sceneEmit(sceneState({ gm_fate_points: 2 }));
    assert.equal(sentOf("fate.gm_budget").length, 1);
  });

  test("situation aspects: the bridge's show in Fate Utilities; the GM's edits there reach the bridge", async () => {
    const scene = foundry.game.scenes.viewed;
    const fcoAspects = () => (scene.getFlag("fate-core-official", "situation_aspects") ?? []).map((a) => [a.name, Number(a.free_invokes)]);
    // The stub bridge's scene: scene.aspect changes it and answers with it.
    let aspects = [situation("sit1", "On Fire", { gm: 1, [ZIRD]: 1 })];
    await sceneEmit(sceneState({ aspects }));
    assert.deepEqual(fcoAspects(), [["On Fire", 2]], "free invokes: everyone's, as Fate Utilities counts them");
    assert.deepEqual(sentOf("scene.aspect"), []);
    answers["scene.aspect"] = (p) => {
      if (p.op === "add") aspects = [...aspects, situation("sit2", p.name, p.free_invokes ?? {})];
      if (p.op === "remove") aspects = aspects.filter((a) => a.id !== p.aspect_id);
      if (p.op === "edit") aspects = aspects.map((a) => (a.id !== p.aspect_id ? a : { ...a, name: p.name ?? a.name, free_invokes: p.free_invokes ?? a.free_invokes }));
      return { ok: true, data: sceneState({ aspects: structuredClone(aspects), created_id: p.op === "add" ? "sit2" : null }) };
    };
    const fu = foundry.fco.renderFateUtilities();
    change(fu.querySelector('input[name="sit_aspect"]'), "Ablaze");
    await waitFor(() => sentOf("scene.aspect").length === 1, { what: "rename" });
    change(foundry.fco.renderFateUtilities().querySelector('input[name="free_i"]'), 3);
    await waitFor(() => sentOf("scene.aspect").length === 2, { what: "free invokes" });
    assert.deepEqual(sentOf("scene.aspect"), [
      { op: "edit", aspect_id: "sit1", name: "Ablaze" },
      { op: "edit", aspect_id: "sit1", free_invokes: { gm: 2, [ZIRD]: 1 } }
    ], "the GM's share changes; Zird keeps its invoke");
    // A new line in Fate Utilities is sent once it has a name.
    foundry.fco.renderFateUtilities().querySelector("#add_sit_aspect").click();
    await settle(10);
    assert.equal(sentOf("scene.aspect").length, 2, "an unnamed line is not an aspect yet");
    change(foundry.fco.renderFateUtilities().querySelectorAll('input[name="sit_aspect"]')[1], "Smoke");
    await waitFor(() => sentOf("scene.aspect").length === 3, { what: "add" });
    assert.deepEqual(sentOf("scene.aspect")[2], { op: "add", name: "Smoke" });
    // The bridge's state now has both: Fate Utilities shows each once, nothing is sent back.
    assert.deepEqual(aspects, [situation("sit1", "Ablaze", { gm: 2, [ZIRD]: 1 }), situation("sit2", "Smoke")]);
    await sceneEmit(sceneState({ aspects }));
    assert.deepEqual(fcoAspects(), [["Ablaze", 3], ["Smoke", 0]]);
    assert.equal(sentOf("scene.aspect").length, 3);
    // Deleted in Fate Utilities: removed on the bridge.
    foundry.fco.renderFateUtilities().querySelector("#delete_0").click();
    await waitFor(() => sentOf("scene.aspect").length === 4, { what: "remove" });
    assert.deepEqual(sentOf("scene.aspect")[3], { op: "remove", aspect_id: "sit1" });
    // Gone from the bridge (the scene ended): gone from Fate Utilities; its own unsent lines stay.
    await scene.setFlag("fate-core-official", "situation_aspects", [...scene.getFlag("fate-core-official", "situation_aspects"), { name: "", free_invokes: 0 }]);
    await sceneEmit(sceneState({ aspects: [] }));
    assert.deepEqual(fcoAspects(), [["", 0]]);
    delete answers["scene.aspect"];
  });

  test("only the writing GM's client writes FCO's stores; every GM's pool is the budget, and a point the assistant spends from its own pool lands once", async () => {
    const POOL = ["fate-core-official", "gmfatepoints"];
    const gm = foundry.game.users.get(GM.id);
    const assistant = foundry.game.users.get(ASSISTANT.id);
    await sceneEmit(sceneState({ gm_fate_points: 3 }));
    assert.deepEqual([gm.getFlag(...POOL), assistant.getFlag(...POOL)], [3, 3], "every GM's pool shows the bridge's one budget");
    assert.deepEqual(sentOf("fate.gm_budget"), []);
    await as(ASSISTANT, () => bridge.scene.handle({ seq: ++seq, world: "w", writer: "gm", state: sceneState({ gm_fate_points: 3, aspects: [situation("x1", "Not Written")] }) }, { activeGM: false }));
    assert.equal(foundry.game.scenes.active.getFlag("fate-core-official", "situation_aspects")?.some((a) => a.name === "Not Written") ?? false, false, "the assistant's client wrote nothing");
    // FCO takes a point off the assistant's own pool on the assistant's client: that client sends nothing.
    await as(ASSISTANT, () => assistant.setFlag(...POOL, 2));
    await settle(10);
    assert.deepEqual(sentOf("fate.gm_budget"), []);
    // Foundry's server passes the update on to the writing GM's client: the budget loses one.
    const spend = { flags: { "fate-core-official": { gmfatepoints: 2 } } };
    foundry.receiveUserUpdate(ASSISTANT.id, spend, {}, ASSISTANT.id);
    await waitFor(() => sentOf("fate.gm_budget").length === 1, { what: "fate.gm_budget" });
    assert.deepEqual(sentOf("fate.gm_budget"), [{ fate_points: 2 }]);
    foundry.receiveUserUpdate(ASSISTANT.id, spend, {}, ASSISTANT.id);
    await settle(10);
    assert.equal(sentOf("fate.gm_budget").length, 1, "the same update again spends nothing more");
    // The GM spends one from its own pool before the bridge's answer came: both spends land.
    await gm.setFlag(...POOL, 2);
    await waitFor(() => sentOf("fate.gm_budget").length === 2, { what: "the GM's spend" });
    assert.deepEqual(sentOf("fate.gm_budget")[1], { fate_points: 1 });
    await sceneEmit(sceneState({ gm_fate_points: 1 }));
    assert.deepEqual([gm.getFlag(...POOL), assistant.getFlag(...POOL)], [1, 1]);
    assert.equal(sentOf("fate.gm_budget").length, 2, "the bridge's own number is not sent back");
  });

  test("situation aspects go to the scene being played; a GM looking at another scene changes nothing", async () => {
    const played = foundry.game.scenes.active;
    const other = foundry.viewScene([], "sceneOther000001", { activate: false });
    assert.equal(foundry.game.scenes.viewed, other);
    assert.equal(foundry.game.scenes.active, played);
    await sceneEmit(sceneState({ aspects: [situation("sitP", "Collapsing Roof")] }));
    assert.ok(played.getFlag("fate-core-official", "situation_aspects").some((a) => a.name === "Collapsing Roof"), "written on the played scene");
    assert.equal(other.getFlag("fate-core-official", "situation_aspects"), undefined, "not on the viewed one");
    // Fate Utilities' list of the viewed scene edited: that scene is not being played.
    await other.setFlag("fate-core-official", "situation_aspects", [{ name: "Only Here", free_invokes: 1 }]);
    await settle(10);
    assert.deepEqual(sentOf("scene.aspect"), []);
    foundry.viewScene([], played.id);
    await sceneEmit(sceneState({ aspects: [] }));
  });
});

describe("c. a stale FCO sheet never reaches the bridge", () => {
  test("a sheet that held its render re-submits old fate points and consequence names: the bridge's values stay", async () => {
    const actor = actorOf(ZIRD);
    const sheet = foundry.renderActorSheet(ZIRD);
    // The player is typing in the refresh field: FCO holds re-renders until it loses focus.
    sheet.querySelector('input[name="system.details.fatePoints.refresh"]').dispatchEvent(domEvent("focus", {}));
    const mild = data(ZIRD).consequences[0].id;
    const fp = actor.system.details.fatePoints.current;
    const p = patch(ZIRD, { fate_points: fp - 1 });
    p.consequences = p.consequences.map((c) => (c.id === mild ? { ...c, name: "Singed", status: "fresh" } : c));
    await writes.handleActorPatch(bridge, p);
    assert.equal(actor.system.details.fatePoints.current, fp - 1);
    assert.equal(foundry.fco.sheetState(sheet).renderBanked, true, "the sheet did not re-render");
    // The player changes refresh: FCO submits the whole form, with the fate points and the empty mild name it showed.
    sent.length = 0;
    change(sheet.querySelector('input[name="system.details.fatePoints.refresh"]'), 4);
    await waitFor(() => sentOf("actor.sync").length === 1, { what: "the refresh edit synced" });
    const synced = sentOf("actor.sync")[0].actor;
    assert.equal(synced.refresh, 4, "the real edit reaches the bridge");
    assert.equal(synced.fate_points, fp - 1, "not the stale fate points");
    assert.equal(synced.consequences.find((c) => c.id === mild).name, "Singed", "not the stale empty name");
    assert.equal(actor.system.details.fatePoints.current, fp - 1, "the sheet's stale value is put back");
    assert.equal(data(ZIRD).consequences.find((c) => c.id === mild).name, "Singed");
    // Closing the stale sheet submits it again: nothing to send, nothing reverted.
    sent.length = 0;
    await foundry.fco.closeSheet(sheet);
    await settle(20);
    assert.deepEqual(sentOf("actor.sync"), []);
    assert.equal(actor.system.details.fatePoints.current, fp - 1);
    // A fresh sheet's edit of the same fields is the user's, and is sent.
    const fresh = foundry.renderActorSheet(ZIRD);
    change(fresh.querySelector('input[name="system.details.fatePoints.current"]'), 5);
    await waitFor(() => sentOf("actor.sync").length === 1, { what: "a real fate point edit" });
    assert.equal(sentOf("actor.sync")[0].actor.fate_points, 5);
    await foundry.fco.closeSheet(fresh);
  });
});

describe("d. helpers, share to chat, track identity", () => {
  test("a player's dialog offers only characters Foundry shows the player; helpers only those it may observe", async () => {
    foundry.viewScene([ZIRD, OGRE, ALLY, { id: "tokHiddenGob0001", actorId: GOBLIN, actorLink: false, name: "Lurking Goblin", hidden: true }], "sceneStep0000001");
    const zirdActor = actorOf(ZIRD);
    const player = await as(PLAYER, () => dialog.dialogContext(bridge, { actor: zirdActor, skill: "Lore" }));
    assert.deepEqual(player.opposers.map((o) => o.name), ["Grumpy Ogre", "Bob's Bard"], "the hidden goblin is not offered");
    assert.deepEqual(player.helpers.map((h) => h.name), ["Bob's Bard"], "no NPC's skills for a player: only characters the player may observe");
    const gm = dialog.dialogContext(bridge, { actor: zirdActor, skill: "Lore" });
    assert.deepEqual(gm.opposers.map((o) => o.name), ["Grumpy Ogre", "Bob's Bard", "Lurking Goblin"]);
    assert.deepEqual(gm.helpers.map((h) => h.name), ["Grumpy Ogre", "Bob's Bard", "Lurking Goblin"]);
  });

  test("a double click on a skill is FCO's share to chat: no roll dialog, no native roll; one click still opens the dialog", async () => {
    const sheet = foundry.renderActorSheet(ZIRD);
    const row = [...sheet.querySelectorAll('div[name="skill"]')].find((r) => r.dataset.skillname === "Lore");
    const native = foundry.log.fcoNativeRolls.length;
    userDoubleClick(row);
    await settle(FCO_CLICK_GUARD_MS + 60);
    assert.equal(foundry.openDialogs().length, 0, "the double click opened no roll dialog");
    assert.deepEqual(foundry.log.fcoShared.at(-1), { actor: ZIRD, type: "skill", name: "Lore" });
    assert.equal(foundry.log.fcoNativeRolls.length, native);
    userClick(row);
    assert.equal(foundry.openDialogs().length, 0, "a click waits for FCO's double-click guard");
    await waitFor(() => foundry.openDialogs().length === 1, { what: "the roll dialog" });
    assert.equal(foundry.openDialogs()[0].element.querySelector("select[name=skill]").value, "Lore");
    assert.equal(foundry.log.fcoNativeRolls.length, native);
  });

  test("FCO re-keying a track (rationaliseKeys at world load) keeps its slot and stress ids", async () => {
    const scrapper = actorOf(SCRAPPER);
    const before = data(SCRAPPER);
    assert.ok(Object.keys(scrapper.system.tracks).includes("Mild Consequence"), "the fixture is keyed by name (a character default just applied)");
    await scrapper.rationaliseKeys();
    assert.ok(Object.keys(scrapper.system.tracks).every((k) => k !== scrapper.system.tracks[k].name), "FCO re-keyed every track to tob64(name)");
    const afterRekey = data(SCRAPPER);
    assert.deepEqual(afterRekey.consequences.map((c) => c.id), before.consequences.map((c) => c.id));
    assert.deepEqual(afterRekey.stress.map((t) => t.id), before.stress.map((t) => t.id));
  });

  test("renaming a track that holds a consequence keeps its slot; FCO's intermediate empty tracks are not synced", async () => {
    const scrapper = actorOf(SCRAPPER);
    const mild = data(SCRAPPER).consequences.find((c) => c.severity === 2);
    const p = patch(SCRAPPER);
    p.consequences = p.consequences.map((c) => (c.id === mild.id ? { ...c, name: "Bruised Pride", status: "recovering" } : c));
    await writes.handleActorPatch(bridge, p);
    sent.length = 0;
    await scrapper.renameTrack("Mild Consequence", "Scrape");
    await settle(20);
    const after = data(SCRAPPER);
    const slot = after.consequences.find((c) => c.id === mild.id);
    assert.ok(slot, `the mild slot kept its id: ${JSON.stringify(after.consequences)}`);
    assert.equal(slot.name, "Bruised Pride");
    const syncs = sentOf("actor.sync").filter((s) => s.actor.id === SCRAPPER);
    assert.ok(syncs.length >= 1);
    assert.ok(syncs.every((s) => (s.actor.consequences ?? []).some((c) => c.id === mild.id)), "never synced without its tracks");
  });
});

describe("e. FCO's stunt and Fate Utilities roll buttons roll through the bridge", () => {
  test("a stunt's roll button starts the bridge's action with its skill, action and stunt", async () => {
    bridge.hello = { actions: ["overcome", "create_advantage", "attack"].map((id) => ({ id, label: id })) };
    const sheet = foundry.renderActorSheet(ZIRD);
    const native = foundry.log.fcoNativeRolls.length;
    sheet.querySelector('button[name="stunt_name"][data-linkedskill^="Scholar_"]').click();
    const opened = await waitFor(() => foundry.openDialogs()[0], { what: "the roll dialog" });
    assert.equal(opened.element.querySelector("select[name=skill]").value, "Lore");
    assert.equal(opened.element.querySelector("select[name=type]").value, "create_advantage");
    assert.equal(foundry.log.fcoNativeRolls.length, native, "FCO did not roll it");
  });

  test("what the bridge cannot roll stays FCO's: a defend-only stunt, a 'Special' stunt, a track", async () => {
    const sheet = foundry.renderActorSheet(ZIRD);
    const native = foundry.log.fcoNativeRolls.length;
    sheet.querySelector('button[name="stunt_name"][data-linkedskill^="Duelist_"]').click();
    sheet.querySelector('button[name="stunt_name"][data-linkedskill^="Polymath_"]').click();
    sheet.querySelector('i[name="roll_track"][data-trackname="Wealth"]').click();
    await settle(20);
    assert.equal(foundry.openDialogs().length, 0);
    assert.deepEqual(foundry.log.fcoNativeRolls.slice(native).map((r) => r.stunt ?? r.track), ["Duelist", "Polymath", "Wealth"]);
  });

  test("Fate Utilities' skill and stunt rolls go to the bridge", async () => {
    foundry.viewScene([ZIRD], "sceneFuRolls0001");
    const native = foundry.log.fcoNativeRolls.length;
    const select = () => foundry.fco.renderFateUtilities().querySelector("select.skill_select");
    change(select(), "Athletics (3)");
    let opened = await waitFor(() => foundry.openDialogs()[0], { what: "the roll dialog" });
    assert.equal(opened.element.querySelector("select[name=skill]").value, "Athletics");
    opened.element.querySelector('[data-action="close"]').click();
    change(select(), "stunt_Scholar_Lore_2");
    opened = await waitFor(() => foundry.openDialogs()[0], { what: "the stunt's roll dialog" });
    assert.equal(opened.element.querySelector("select[name=skill]").value, "Lore");
    assert.equal(opened.element.querySelector("select[name=type]").value, "create_advantage");
    assert.equal(foundry.log.fcoNativeRolls.length, native, "Fate Utilities rolled nothing itself");
  });
});
