// Unit tests of R13 on the module's roll dialog, action card and absorb picker (issue 25): the
// stunts a roll names (R13.8), full defense on the card (R13.7), the unintended aspect of a
// fumbled advantage named by whoever picks it (R5.2), and the absorb picker by the card's per-hit
// stress rule and harm-kinded consequence slots (R13.2, R13.3). The module's real code against
// the fake Foundry; no bridge process.
import assert from "node:assert/strict";
import { before, describe, test } from "node:test";
import { fcoTrack, consequenceAspect } from "./fixtures/actors.mjs";
import { asUser as actAs, setField, waitFor } from "./support/node-foundry.mjs";
import { cardSide, pressAbsorb } from "./support/cards.mjs";
import { bootOfflineFoundry } from "./support/offline-foundry.mjs";
import { check } from "./support/schemas.mjs";

const GM = { id: "r13cGmUser00001", name: "Gamemaster", isGM: true };
const ANN = { id: "r13cAnnUser0001", name: "Ann", isGM: false };
const BOB = { id: "r13cBobUser0001", name: "Bob", isGM: false };

/** An FCO stunt: its linked skill, bonus and action flags. */
const stunt = (name, skill, flags, bonus = 2) => ({
  name, linked_skill: skill, bonus, overcome: false, caa: false, attack: false, defend: false, refresh_cost: 1, ...flags
});

/** Ann's fighter: Fight stunts for attacking and defending, a Notice stunt for overcoming. */
const brawler = {
  _id: "actorBrawler0001",
  name: "Brawler Ann",
  type: "fate-core-official",
  ownership: { default: 0, [ANN.id]: 3 },
  system: {
    details: { fatePoints: { current: 3, refresh: 3, boosts: 0 } },
    skills: {
      Fight: { name: "Fight", rank: 4 },
      Notice: { name: "Notice", rank: 2 },
      Athletics: { name: "Athletics", rank: 1 }
    },
    aspects: { "High Concept": { name: "High Concept", value: "Bar-Room Champion" } },
    stunts: {
      Haymaker: stunt("Haymaker", "Fight", { attack: true }),
      Riposte: stunt("Riposte", "Fight", { defend: true }, 1),
      Dirty: stunt("Dirty Tricks", "Fight", { caa: true }),
      Spotter: stunt("Spotter", "Notice", { overcome: true })
    },
    tracks: {
      "UGh5c2ljYWw=": fcoTrack("Physical Stress", { boxes: 4, values: [false, false, false, false] }),
      "TWlsZA==": fcoTrack("Mild", { boxes: 1, harm: 2, aspect: consequenceAspect() })
    }
  }
};

/** The GM's NPC: defends with Athletics and a defend stunt. */
const guard = {
  _id: "actorGuard000001",
  name: "Palace Guard",
  type: "fate-core-official",
  ownership: { default: 0 },
  system: {
    details: { fatePoints: { current: 0, refresh: null, boosts: 0 } },
    skills: { Athletics: { name: "Athletics", rank: 3 }, Fight: { name: "Fight", rank: 2 } },
    aspects: {},
    stunts: {
      Dodge: stunt("Dodge Master", "Athletics", { defend: true }),
      Sprinter: stunt("Sprinter", "Athletics", { overcome: true }),
      Shield: stunt("Shield Wall", "Fight", { defend: true })
    },
    tracks: {}
  }
};

let foundry;
let validators;
let bridge;
let stunts;
let rollDialog;
let actions;
let odds;
let view;
let controls;
let pickers;
let compat;

const asUser = (userId, fn) => actAs(foundry, userId, fn);

/** hello's RulesetInfo for a ruleset id (what the bridge sends; only the fields used here vary). */
const rules = (id) => ({
  id,
  title: id,
  conflicts: true,
  ratings: id === "fate-accelerated" ? "approaches" : "skills",
  turn_order: id === "fate-condensed" ? "elective" : "ranked",
  full_defense: id === "fate-core",
  stress_rule: { "fate-core": "one_box", "fate-condensed": "ones", "fate-accelerated": "one_box" }[id] ?? null,
  stunts_chosen: id !== "unwritten"
});
const ACTIONS = ["overcome", "create_advantage", "take_advantage", "discover", "attack"].map((id) => ({ id, label: id }));
const withHello = async (rulesetId, fn) => {
  bridge.hello = { ruleset: rulesetId, actions: ACTIONS, rules: rules(rulesetId) };
  try {
    return await fn();
  } finally {
    bridge.hello = null;
  }
};

/** A checkbox's state as a browser has it: checkedness, else the attribute it was rendered with. */
const ticked = (input) => Boolean(input.checked ?? input.hasAttribute("checked"));
const change = (el) => el.dispatchEvent(new globalThis.DomEvent("change", { bubbles: true }));

before(async () => {
  let modules;
  ({ foundry, validators, modules } = await bootOfflineFoundry({ users: [GM, ANN, BOB], actors: [brawler, guard] }, [
    "actions/stunts", "actions/roll-dialog", "actions/start", "cards/odds", "cards/view", "cards/controls", "cards/pickers", "foundry/compat", "net/bridge"
  ]));
  ({ "actions/stunts": stunts, "actions/roll-dialog": rollDialog, "actions/start": actions, "cards/odds": odds, "cards/view": view, "cards/controls": controls, "cards/pickers": pickers, "foundry/compat": compat } = modules);
  bridge = new modules["net/bridge"].Bridge();
});

// ---- cards as the bridge sends them (schemas/server/card.json) --------------------------------

const ann = { id: brawler._id, name: brawler.name };
const grd = { id: guard._id, name: guard.name };
const card = (overrides = {}) => ({
  kind: "action",
  action_id: "act-r13c",
  ruleset: "fate-core",
  action_type: "attack",
  state: "resolved",
  actor: cardSide({ leader: ann, controllers: [ANN.id], skill: "Fight", skill_rating: { value: 4 }, dice: [1, 0, 0, -1], dice_total: 0, total: { value: 6 }, stunt_bonus: 2, stunts: ["Haymaker"], fate_points: 3 }),
  opposition: cardSide({ leader: grd, skill: "Athletics", skill_rating: { value: 3 }, dice: [0, 0, 0, 0], dice_total: 0, total: { value: 7 }, stunt_bonus: 2, stunts: ["Dodge Master"], full_defense: true }),
  opposition_kind: "active",
  opposition_action: "defend",
  target: grd,
  target_aspect: null,
  aspect_name: null,
  situation: null,
  invokes: [],
  shifts: -1,
  outcome: "tie",
  provisional: false,
  succeeded: false,
  pending_choice: null,
  cost_severity: null,
  pending_hit: 0,
  attack_kind: "physical",
  stress_rule: "one_box",
  effects: [],
  aspects: [],
  gm_fate_points: 2,
  fate_points: { [ann.id]: 3 },
  prompt: { kind: "none", users: [], gm: false, options: [] },
  description: null,
  event_seq: 12,
  event_hash: "0f2c4e11aa0b7d3e5f60718293a4b5c6d7e8f90112233445566778899aabbccd",
  ...overrides
});
const emit = (c) => ({ seq: 40, world: "w", writer: GM.id, op: "create", card_id: "w.r13c", card: c });

/** The controls as this user's client renders them: the real template in a holder. */
const rendered = async (ctx) => {
  const holder = document.createElement("div");
  holder.innerHTML = await compat.renderTemplate(controls.CONTROLS_TEMPLATE, ctx);
  return holder;
};

describe("stunts a roll names (R13.8)", () => {
  const list = [
    { name: "Haymaker", skill: "Fight", bonus: 2, actions: ["attack"] },
    { name: "Riposte", skill: "Fight", bonus: 1, actions: ["defend", "oppose"] },
    { name: "Brawler's Luck", skill: "Fight", bonus: 1, actions: [] },
    { name: "Spotter", skill: "Notice", bonus: 2, actions: ["overcome"] },
    { name: "Haymaker", skill: "Fight", bonus: 2, actions: ["attack"] }
  ];
  const names = (xs) => xs.map((s) => s.name);

  test("a stunt matches its skill and one of its actions; no actions listed matches any action; each name once", () => {
    assert.deepEqual(names(stunts.matchingStunts(list, "Fight", "attack")), ["Haymaker", "Brawler's Luck"]);
    assert.deepEqual(names(stunts.matchingStunts(list, "Fight", "defend")), ["Riposte", "Brawler's Luck"]);
    assert.deepEqual(names(stunts.matchingStunts(list, "Fight", "overcome")), ["Brawler's Luck"]);
    assert.deepEqual(names(stunts.matchingStunts(list, "Notice", "overcome")), ["Spotter"]);
    assert.deepEqual(names(stunts.matchingStunts(list, "Notice", "attack")), []);
    assert.deepEqual(names(stunts.matchingStunts(list, "Athletics", "overcome")), []);
    assert.deepEqual(stunts.matchingStunts(undefined, "Fight", "attack"), []);
    assert.equal(stunts.opposeAction("attack"), "defend");
    assert.equal(stunts.opposeAction("overcome"), "oppose");
  });

  test("none ticked by default where the roller chooses (SRD rulesets); every match ticked under Unwritten; a tick given is kept", () => {
    const chosen = stunts.stuntOptions(list, "Fight", "attack", { chosen: true });
    assert.deepEqual(chosen.map((o) => [o.name, o.label, o.checked]), [["Haymaker", "Haymaker (+2)", false], ["Brawler's Luck", "Brawler's Luck (+1)", false]]);
    const unwritten = stunts.stuntOptions(list, "Fight", "attack", { chosen: false });
    assert.deepEqual(unwritten.map((o) => o.checked), [true, true]);
    // A stunt roll button names its stunt: ticked; the roller's untick is kept too.
    const named = stunts.stuntOptions(list, "Fight", "attack", { chosen: true, ticks: stunts.tickedNames(["Haymaker"]) });
    assert.deepEqual(named.map((o) => o.checked), [true, false]);
    const unticked = stunts.stuntOptions(list, "Fight", "attack", { chosen: false, ticks: { Haymaker: false } });
    assert.deepEqual(unticked.map((o) => o.checked), [false, true]);
    assert.equal(stunts.stuntsChosen(rules("fate-core")), true);
    assert.equal(stunts.stuntsChosen(rules("unwritten")), false);
    assert.equal(stunts.stuntsChosen(null), false, "a bridge that does not say: Unwritten's behaviour");
  });

  test("the roll dialog (Fate Core) lists the skill's stunts for the action, none ticked, follows skill and action, and sends the ticked ones", async () => {
    await withHello("fate-core", async () => {
      const actor = foundry.game.actors.get(brawler._id);
      const answer = rollDialog.askAction(bridge, { actor, skill: "Fight", request: { type: "attack" } });
      const dialog = await waitFor(() => foundry.openDialogs().at(-1), { what: "action dialog" });
      const el = dialog.element;
      const listed = () => [...el.querySelectorAll("input[data-stunt]")].map((i) => [i.value, ticked(i)]);
      const fieldset = el.querySelector("[data-stunts]");
      assert.deepEqual(listed(), [["Haymaker", false]], "Fight + attack: Haymaker only, not ticked");
      assert.equal(fieldset.hidden, false);
      assert.match(fieldset.textContent, /only ticked stunts count/);
      // Another action: the list follows.
      setField(el.querySelector("select[name=type]"), "create_advantage");
      change(el.querySelector("select[name=type]"));
      assert.deepEqual(listed(), [["Dirty Tricks", false]]);
      // Another skill: the list follows; a skill without a matching stunt hides it.
      setField(el.querySelector("select[name=skill]"), "Notice");
      change(el.querySelector("select[name=skill]"));
      assert.deepEqual(listed(), []);
      assert.equal(fieldset.hidden, true);
      setField(el.querySelector("select[name=type]"), "overcome");
      change(el.querySelector("select[name=type]"));
      assert.deepEqual(listed(), [["Spotter", false]]);
      el.querySelector("input[data-stunt]").checked = true;
      change(el.querySelector("input[data-stunt]"));
      // Away and back: the tick is kept.
      setField(el.querySelector("select[name=skill]"), "Fight");
      change(el.querySelector("select[name=skill]"));
      setField(el.querySelector("select[name=skill]"), "Notice");
      change(el.querySelector("select[name=skill]"));
      assert.deepEqual(listed(), [["Spotter", true]]);
      setField(el.querySelector("select[name=opposition]"), "2");
      el.querySelector('button[data-action="roll"]').click();
      const request = await answer;
      assert.deepEqual(request.stunts, ["Spotter"]);
      const payload = actions.startPayload(actor, request.skill, request);
      assert.deepEqual(payload.stunts, ["Spotter"]);
      check(validators.client["action.start"], { request_id: "r-r13c-1", ...payload }, "action.start");
      const asked = odds.oddsPayload(request, actor);
      assert.deepEqual(asked.stunts, ["Spotter"], "the odds count the ticked stunts");
      check(validators.client["action.odds"], { request_id: "r-r13c-odds", ...asked }, "action.odds");
    });
  });

  test("Fate Core: left unticked, the roll names an empty list (no stunt counts)", async () => {
    await withHello("fate-core", async () => {
      const actor = foundry.game.actors.get(brawler._id);
      const answer = rollDialog.askAction(bridge, { actor, skill: "Fight", request: { type: "attack" } });
      const dialog = await waitFor(() => foundry.openDialogs().at(-1), { what: "action dialog" });
      setField(dialog.element.querySelector("select[name=opposition]"), "2");
      dialog.element.querySelector('button[data-action="roll"]').click();
      const request = await answer;
      assert.deepEqual(actions.startPayload(actor, request.skill, request).stunts, []);
    });
  });

  test("Unwritten: every matching stunt starts ticked and is sent; a stunt roll button's stunt is ticked under Fate Core", async () => {
    const actor = foundry.game.actors.get(brawler._id);
    await withHello("unwritten", async () => {
      const ctx = rollDialog.dialogContext(bridge, { actor, skill: "Fight", request: { type: "attack" } });
      assert.deepEqual(ctx.stunts.map((s) => [s.name, s.checked]), [["Haymaker", true]]);
      assert.match(ctx.stuntsHint, /untick/);
    });
    await withHello("fate-core", async () => {
      const ctx = rollDialog.dialogContext(bridge, { actor, skill: "Fight", request: { type: "attack", stunts: ["Haymaker"] } });
      assert.deepEqual(ctx.stunts.map((s) => [s.name, s.checked]), [["Haymaker", true]]);
    });
    // A macro's complete request without stunts names none: the bridge's default for the ruleset.
    assert.equal("stunts" in actions.startPayload(actor, "Fight", { type: "attack", opposition: 1 }), false);
  });

  test("the oppose prompt lists the opposer's stunts for defending an attack, follows the skill, and sends the ticked ones", async () => {
    await withHello("fate-core", async () => {
      const c = card({
        state: "awaiting_opposition", outcome: null, shifts: null, succeeded: null,
        actor: cardSide({ leader: ann, controllers: [ANN.id], skill: "Fight", skill_rating: { value: 4 } }),
        opposition: cardSide({ leader: grd }),
        prompt: { kind: "oppose", users: [], gm: true, options: [] }
      });
      check(validators.server.card, emit(c), "oppose card");
      const ctx = controls.controlsContext(bridge, c);
      assert.equal(ctx.kind, "oppose");
      assert.deepEqual(ctx.skills.map((s) => s.name), ["Athletics", "Fight"]);
      assert.deepEqual(ctx.stunts.map((s) => [s.name, s.checked]), [["Dodge Master", false]], "defend stunts of Athletics, not Sprinter (overcome)");
      const holder = await rendered(ctx);
      const box = holder.querySelector("input[data-stunt]");
      box.checked = true;
      // Fight instead: its defend stunt is listed.
      const skill = holder.querySelector("select[name=skill]");
      setField(skill, "Fight");
      controls.onControlsChange(bridge, c, { target: skill }, holder);
      assert.deepEqual([...holder.querySelectorAll("input[data-stunt]")].map((i) => [i.value, ticked(i)]), [["Shield Wall", false]]);
      holder.querySelector("input[data-stunt]").checked = true;
      const button = holder.querySelector('button[data-fb="oppose"]');
      const [event, payload] = await controls.intentFor(bridge, c, button, holder);
      assert.equal(event, "action.oppose");
      assert.deepEqual(payload, { action_id: c.action_id, skill: "Fight", stunts: ["Shield Wall"] });
      check(validators.client["action.oppose"], { request_id: "r-r13c-oppose", ...payload }, "action.oppose");
      // Against an overcome the opposer opposes: Sprinter is no defend or oppose stunt.
      const overcome = { ...c, action_type: "overcome" };
      assert.deepEqual(controls.controlsContext(bridge, overcome).stunts.map((s) => s.name), ["Dodge Master"], "FCO's defend flag covers oppose");
    });
  });
});

describe("the card shows the stunts used and full defense (R13.7, R13.8)", () => {
  test("each side's stunts by name, and Full defense +2 on the defender", async () => {
    const c = card();
    check(validators.server.card, emit(c), "attack card");
    const ctx = view.cardContext(c, 40);
    assert.deepEqual(ctx.actor.stunts, ["Haymaker"]);
    assert.deepEqual(ctx.opposition.stunts, ["Dodge Master"]);
    assert.equal(ctx.actor.fullDefense, false);
    assert.equal(ctx.opposition.fullDefense, true);
    assert.deepEqual(ctx.opposition.bonuses.map((b) => `${b.label} ${b.value}`), ["stunt +2", "Full defense +2"]);
    const html = document.createElement("div");
    html.innerHTML = await compat.renderTemplate(`modules/fate-bridge/templates/action-card.hbs`, ctx);
    const sides = [...html.querySelectorAll(".fate-bridge-side")];
    assert.deepEqual(sides.map((s) => [...s.querySelectorAll(".fate-bridge-chip--stunt")].map((x) => x.textContent)), [["Haymaker"], ["Dodge Master"]]);
    assert.equal(sides[1].querySelector(".fate-bridge-chip--full-defense").textContent.trim(), "Full defense +2");
    assert.equal(sides[0].querySelector(".fate-bridge-chip--full-defense"), null);
    // A card from before R13 has neither field.
    const old = card();
    delete old.actor.stunts;
    delete old.opposition.full_defense;
    const oldCtx = view.cardContext(old, 41);
    assert.deepEqual(oldCtx.actor.stunts, []);
    assert.equal(oldCtx.opposition.fullDefense, false);
  });
});

describe("the unintended aspect of a fumbled advantage (R5.2)", () => {
  const fumbled = () => card({
    action_type: "create_advantage", state: "choosing", outcome: "fumble", shifts: -3, succeeded: null, target: null, opposition: cardSide({ passive: true, total: { value: 2 } }), opposition_kind: "passive",
    opposition_action: null, attack_kind: null, stress_rule: null, pending_choice: "advantage_fumble",
    prompt: { kind: "choose", users: [ANN.id], gm: true, options: ["fail", "unintended_aspect", "succeed_at_cost"] }
  });

  test("the actor's controller (a player) gets the choice with a required name input, and the name goes as aspect_name", async () => {
    const c = fumbled();
    check(validators.server.card, emit(c), "choosing card");
    const ctx = await asUser(ANN.id, () => controls.controlsContext(bridge, c));
    assert.equal(ctx.kind, "choose");
    assert.deepEqual(ctx.choices.map((x) => x.id), ["fail", "unintended_aspect", "succeed_at_cost"]);
    assert.ok(ctx.aspectName, "a name input for the unintended aspect");
    assert.equal(ctx.needsName, false, "no consequence name here");
    const holder = await rendered(ctx);
    const input = holder.querySelector('input[name="unintendedName"]');
    assert.ok(input.hasAttribute("required"));
    const button = holder.querySelector('button[data-fb="choose"][data-choice="unintended_aspect"]');
    // Without a name nothing is sent, and the player is told why.
    const before = foundry.log.notifications.length;
    assert.equal(await asUser(ANN.id, () => controls.intentFor(bridge, c, button, holder)), null);
    assert.deepEqual(foundry.log.notifications.slice(before).map((n) => [n.type, n.message]), [["warn", "Name the aspect you didn't intend first."]]);
    setField(input, "  Knocked the Lamp Over ");
    const [event, payload] = await asUser(ANN.id, () => controls.intentFor(bridge, c, button, holder));
    assert.equal(event, "action.choose");
    assert.deepEqual(payload, { action_id: c.action_id, choice: "unintended_aspect", aspect_name: "Knocked the Lamp Over" });
    check(validators.client["action.choose"], { request_id: "r-r13c-choose", ...payload }, "action.choose");
    // The other choices need no name.
    const fail = holder.querySelector('button[data-fb="choose"][data-choice="fail"]');
    assert.deepEqual((await asUser(ANN.id, () => controls.intentFor(bridge, c, fail, holder)))[1], { action_id: c.action_id, choice: "fail" });
  });

  test("the GM gets the same control; a player who does not control the actor gets none", async () => {
    const c = fumbled();
    const gm = controls.controlsContext(bridge, c);
    assert.ok(gm.aspectName);
    assert.ok(gm.choices.some((x) => x.id === "unintended_aspect"));
    const bob = await asUser(BOB.id, () => controls.controlsContext(bridge, c));
    assert.equal(bob, null);
  });
});

describe("the absorb picker by the per-hit stress rule (R13.2, R13.3)", () => {
  // A Core-style escalating track, a second (mental) track and consequence slots.
  const target = (overrides = {}) => ({
    id: grd.id,
    name: grd.name,
    stress: [
      { id: "phys", name: "Physical Stress", kind: "physical", boxes: [1, 2, 3, 4].map((value) => ({ value, marked: false })) },
      { id: "ment", name: "Mental Stress", kind: "mental", boxes: [1, 2].map((value) => ({ value, marked: false })) }
    ],
    consequences: [
      { id: "mild", severity: 2, name: null, status: "fresh", harm: null },
      { id: "mild-m", severity: 2, name: null, status: "fresh", harm: "mental" },
      { id: "mod", severity: 4, name: null, status: "fresh", harm: null }
    ],
    ...overrides
  });
  const absorbing = (hit, rule, kind = "physical") => card({ state: "absorbing", pending_hit: hit, stress_rule: rule, attack_kind: kind, outcome: "succeed", shifts: hit, succeeded: null, prompt: { kind: "absorb", users: [], gm: true, options: [] } });
  const boxes = (values, prefix = "t") => values.map((value, i) => ({ key: `${prefix}:${i}`, value }));
  const slots = [{ id: "mild", severity: 2 }, { id: "mod", severity: 4 }];
  const allowed = (choices) => Object.entries(choices.boxes).filter(([, b]) => b.allowed).map(([k]) => k);
  const reasons = (choices) => Object.fromEntries(Object.entries(choices.boxes).map(([k, b]) => [k, b.reason]));

  test("one_box (Core, Accelerated): only the smallest free box worth what the consequences leave", () => {
    const core = boxes([1, 2, 3, 4]);
    let c = pickers.absorbChoices({ rule: "one_box", hit: 3, boxes: core, slots, ticked: [], filled: [] });
    assert.deepEqual(allowed(c), ["t:2"]);
    assert.deepEqual(reasons(c), { "t:0": "too_small_fit", "t:1": "too_small_fit", "t:2": null, "t:3": "smaller_fits" });
    // A mild consequence leaves 1: the 1-box.
    c = pickers.absorbChoices({ rule: "one_box", hit: 3, boxes: core, slots, ticked: [], filled: ["mild"] });
    assert.deepEqual(allowed(c), ["t:0"]);
    assert.equal(c.left, 1);
    // The 1-box marked already (not free): the 2-box is the smallest that fits.
    c = pickers.absorbChoices({ rule: "one_box", hit: 3, boxes: core.slice(1), slots, ticked: [], filled: ["mild"] });
    assert.deepEqual(allowed(c), ["t:1"]);
    // Consequences absorb it all: no box.
    c = pickers.absorbChoices({ rule: "one_box", hit: 3, boxes: core, slots, ticked: [], filled: ["mod"] });
    assert.deepEqual(allowed(c), []);
    assert.equal(reasons(c)["t:0"], "nothing_left");
    // A hit bigger than every box: no box alone, a consequence first.
    c = pickers.absorbChoices({ rule: "one_box", hit: 6, boxes: core, slots, ticked: [], filled: [] });
    assert.deepEqual(allowed(c), []);
    assert.equal(reasons(c)["t:3"], "too_small");
    c = pickers.absorbChoices({ rule: "one_box", hit: 6, boxes: core, slots, ticked: ["t:1"], filled: ["mod"] });
    assert.deepEqual(allowed(c), ["t:1"]);
    assert.equal(c.absorbed, 6);
    // A box absorbs up to its value, never more than is left.
    c = pickers.absorbChoices({ rule: "one_box", hit: 3, boxes: boxes([4]), slots, ticked: ["t:0"], filled: [] });
    assert.equal(c.absorbed, 3);
    // Ticking one replaces the other: radio-like.
    assert.deepEqual(pickers.tickBox("one_box", core, ["t:0"], "t:2"), ["t:2"]);
  });

  test("ones (Condensed): any number of 1-shift boxes; a bigger box (a Core-style sheet) only alone and as the smallest fit", () => {
    const condensed = boxes([1, 1, 1, 1]);
    let c = pickers.absorbChoices({ rule: "ones", hit: 3, boxes: condensed, slots, ticked: ["t:0", "t:1", "t:2"], filled: [] });
    assert.deepEqual(allowed(c), ["t:0", "t:1", "t:2", "t:3"]);
    assert.equal(c.absorbed, 3);
    const escalating = boxes([1, 2, 3, 4]);
    c = pickers.absorbChoices({ rule: "ones", hit: 3, boxes: escalating, slots, ticked: [], filled: [] });
    assert.deepEqual(allowed(c), ["t:0", "t:2"], "the 1-box always, the 3-box as the smallest bigger fit");
    assert.equal(reasons(c)["t:1"], "too_small_fit");
    assert.equal(reasons(c)["t:3"], "smaller_fits");
    // A bigger box replaces the others; a 1-box replaces a bigger one and joins other 1-boxes.
    assert.deepEqual(pickers.tickBox("ones", escalating, ["t:0"], "t:2"), ["t:2"]);
    assert.deepEqual(pickers.tickBox("ones", escalating, ["t:2"], "t:0"), ["t:0"]);
    assert.deepEqual(pickers.tickBox("ones", condensed, ["t:0", "t:1"], "t:3"), ["t:0", "t:1", "t:3"]);
  });

  test("no rule (records from before R13): any boxes, their values summed", () => {
    const c = pickers.absorbChoices({ rule: null, hit: 5, boxes: boxes([1, 2, 3, 4]), slots, ticked: ["t:0", "t:3"], filled: [] });
    assert.deepEqual(allowed(c), ["t:0", "t:1", "t:2", "t:3"]);
    assert.equal(c.absorbed, 5);
    assert.deepEqual(pickers.tickBox(null, boxes([1, 2]), ["t:0"], "t:1"), ["t:0", "t:1"]);
  });

  test("a harm-kinded slot is offered only for that kind of hit; the view says the rule and what absorbs", () => {
    const physical = pickers.absorbView(absorbing(3, "one_box"), target());
    assert.deepEqual(physical.slots.map((s) => s.id), ["mild", "mod"], "the mental-only mild slot is not offered");
    assert.deepEqual(physical.tracks.map((t) => t.id), ["phys"]);
    assert.deepEqual(physical.tracks[0].boxes.map((b) => b.disabled), [true, true, false, true]);
    assert.match(physical.tracks[0].boxes[3].title, /the smaller box worth 3 absorbs the 3 shifts left/);
    assert.equal(physical.total, "Absorbs 0 of 3 shifts");
    assert.match(physical.ruleHint, /One box per hit/);
    const mental = pickers.absorbView(absorbing(2, "ones", "mental"), target());
    assert.deepEqual(mental.slots.map((s) => [s.id, s.label]), [["mild", "Consequence (2)"], ["mild-m", "Consequence (2, mental harm only)"], ["mod", "Consequence (4)"]]);
    const legacy = pickers.absorbView(absorbing(3, null), target());
    assert.equal(legacy.rule, null);
    assert.deepEqual(legacy.tracks[0].boxes.map((b) => b.disabled), [false, false, false, false]);
  });

  test("the Core picker in a dialog: only the fitting box is enabled, ticking replaces, a consequence moves the fit, the answer is a valid action.absorb", async () => {
    const c = absorbing(3, "one_box");
    check(validators.server.card, emit(c), "absorbing card");
    try {
      const pending = pressAbsorb(controls, bridge, c, { characters: [target()] });
      const dialog = await waitFor(() => foundry.openDialogs().at(-1), { what: "absorb dialog" });
      const el = dialog.element;
      const inputs = () => [...el.querySelectorAll("input[data-track]")];
      const enabled = () => inputs().map((i) => !i.disabled);
      const total = () => el.querySelector("[data-absorb-total]").textContent;
      assert.deepEqual(enabled(), [false, false, true, false]);
      assert.equal(el.querySelector("[data-slot=mild-m]"), null, "no mental-only slot for a physical hit");
      inputs()[2].checked = true;
      change(inputs()[2]);
      assert.equal(total(), "Absorbs 3 of 3 shifts");
      // A mild consequence: 1 left, the 1-box fits now and the 3-box is unticked.
      const mild = el.querySelector("[data-slot=mild]");
      mild.value = "Bruised Ribs";
      change(mild);
      assert.deepEqual(enabled(), [true, false, false, false]);
      assert.deepEqual(inputs().map(ticked), [false, false, false, false]);
      assert.equal(total(), "Absorbs 2 of 3 shifts");
      assert.match(inputs()[2].closest("label").title, /smaller box worth 1/);
      inputs()[0].checked = true;
      change(inputs()[0]);
      assert.equal(total(), "Absorbs 3 of 3 shifts");
      el.querySelector('button[data-action="absorb"]').click();
      const [event, payload] = await pending;
      assert.equal(event, "action.absorb");
      assert.deepEqual(payload, { action_id: c.action_id, stress: [{ track: "phys", boxes: [0] }], consequences: { mild: "Bruised Ribs" } });
      check(validators.client["action.absorb"], { request_id: "r-r13c-absorb", ...payload }, "action.absorb");
    } finally {
      bridge.connection = null;
    }
  });
});
