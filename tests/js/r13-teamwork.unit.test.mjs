// Unit tests of issue 34 on the module: the "Invoke for …" control of an ally (R13.10), the
// invoke picker naming every holder of a free invoke (never an id), Accelerated's approaches
// only in the roll dialog (R13.1), and the status line's causes in words. The module's real
// code against the fake Foundry; no bridge process.
import assert from "node:assert/strict";
import { before, describe, test } from "node:test";
import { asUser as actAs } from "./support/node-foundry.mjs";
import { cardSide } from "./support/cards.mjs";
import { bootOfflineFoundry } from "./support/offline-foundry.mjs";
import { check } from "./support/schemas.mjs";

const GM = { id: "r13tGmUser00001", name: "Gamemaster", isGM: true };
const ANN = { id: "r13tAnnUser0001", name: "Ann", isGM: false };
const BOB = { id: "r13tBobUser0001", name: "Bob", isGM: false };

const actor = (id, name, owner, skills = { Athletics: 2, Fight: 1 }) => ({
  _id: id,
  name,
  type: "fate-core-official",
  ownership: owner ? { default: 0, [owner]: 3 } : { default: 0 },
  system: {
    details: { fatePoints: { current: 2, refresh: 3, boosts: 0 } },
    skills: Object.fromEntries(Object.entries(skills).map(([n, rank]) => [n, { name: n, rank }])),
    aspects: {},
    stunts: {},
    tracks: {}
  }
});
const annFighter = actor("actorAnnFight001", "Ann the Bold", ANN.id);
const annSecond = actor("actorAnnSecond01", "Ann's Hound", ANN.id);
const bobScout = actor("actorBobScout001", "Bob the Scout", BOB.id, { Careful: 3, Quick: 2, Athletics: 4 });
const guard = actor("actorGuard000001", "Palace Guard", null);
const wolf = actor("actorWolf0000001", "Grey Wolf", null);

let foundry;
let validators;
let Bridge;
let bridge;
let controls;
let pickers;
let rollDialog;
let status;
let compat;

const asUser = (userId, fn) => actAs(foundry, userId, fn);

before(async () => {
  let modules;
  ({ foundry, validators, modules } = await bootOfflineFoundry(
    { users: [GM, ANN, BOB], actors: [annFighter, annSecond, bobScout, guard, wolf] },
    ["cards/controls", "cards/pickers", "actions/roll-dialog", "net/status", "foundry/compat", "net/bridge"]
  ));
  ({ "cards/controls": controls, "cards/pickers": pickers, "actions/roll-dialog": rollDialog, "net/status": status, "foundry/compat": compat } = modules);
  ({ Bridge } = modules["net/bridge"]);
  bridge = new Bridge();
});

const who = (a) => ({ id: a._id, name: a.name });
/** Ann the Bold's overcome against the GM's guard, in the invoke phase (schemas/server/card.json). */
const card = (overrides = {}) => ({
  kind: "action",
  action_id: "act-r13t",
  ruleset: "fate-condensed",
  action_type: "overcome",
  state: "invoking",
  actor: cardSide({ leader: who(annFighter), controllers: [ANN.id], skill: "Athletics", skill_rating: { value: 2 }, dice: [0, 0, 0, 0], dice_total: 0, total: { value: 2 }, fate_points: 2 }),
  opposition: cardSide({ leader: who(guard), skill: "Athletics", skill_rating: { value: 2 }, dice: [0, 0, 0, 0], dice_total: 0, total: { value: 2 } }),
  opposition_kind: "active",
  opposition_action: "oppose",
  target: null,
  target_aspect: null,
  aspect_name: null,
  situation: null,
  invokes: [],
  shifts: 0,
  outcome: "tie",
  provisional: true,
  succeeded: null,
  pending_choice: null,
  cost_severity: null,
  pending_hit: 0,
  attack_kind: null,
  stress_rule: null,
  effects: [],
  aspects: [],
  gm_fate_points: 2,
  fate_points: { [annFighter._id]: 2 },
  prompt: { kind: "invoke", users: [ANN.id], gm: true, options: [] },
  description: null,
  event_seq: 12,
  event_hash: "0f2c4e11aa0b7d3e5f60718293a4b5c6d7e8f90112233445566778899aabbccd",
  ...overrides
});

describe("R13.10: Invoke for … (an ally's invoke)", () => {
  before(() => {
    foundry.viewScene([annFighter._id, annSecond._id, bobScout._id, guard._id, wolf._id]);
  });

  test("a player with a character in the scene not taking part gets it for each side; never against its own character's side", async () => {
    const c = card();
    check(validators.server.card, { seq: 1, world: "w", writer: GM.id, op: "create", card_id: "w.r13t", card: c }, "invoking card");
    await asUser(BOB.id, async () => {
      assert.deepEqual(pickers.allyInvokers(c).map((a) => a.name), ["Bob the Scout"]);
      assert.deepEqual(controls.allySides(c).map((s) => [s.which, s.label]), [["actor", "Invoke for Ann the Bold"], ["opposition", "Invoke for Palace Guard"]]);
      const ctx = controls.controlsContext(bridge, c);
      assert.equal(ctx.kind, "ally", "Bob is not prompted, yet has the ally's control");
      const holder = document.createElement("div");
      holder.innerHTML = await compat.renderTemplate(controls.CONTROLS_TEMPLATE, ctx);
      const buttons = [...holder.querySelectorAll('[data-fb="invoke-ally"]')];
      assert.deepEqual(buttons.map((b) => [b.dataset.side, b.textContent.trim()]), [["actor", "Invoke for Ann the Bold"], ["opposition", "Invoke for Palace Guard"]]);
    });
    // Ann acts with Ann the Bold: her hound may help her side, never the guard's.
    await asUser(ANN.id, () => {
      assert.deepEqual(pickers.allyInvokers(c).map((a) => a.name), ["Ann's Hound"]);
      assert.deepEqual(controls.allySides(c).map((s) => s.which), ["actor"]);
    });
    // The GM, for its NPCs not taking part (never a player's character).
    await asUser(GM.id, () => {
      assert.deepEqual(pickers.allyInvokers(c).map((a) => [a.name, a.npc]), [["Grey Wolf", true]]);
      assert.equal(controls.allySides(c).length, 2);
    });
  });

  test("not before the roll, not after both sides passed, not on a card the GM undid", async () => {
    await asUser(BOB.id, () => {
      for (const c of [card({ state: "resolved" }), card({ state: "awaiting_opposition" }), card({ undone: true })]) {
        assert.deepEqual(controls.allySides(c), [], c.state);
      }
    });
  });

  test("the ally's picker offers its characters and their own aspects, and names the side it invokes for", async () => {
    const c = card();
    await asUser(BOB.id, () => {
      const ctx = pickers.invokeContext(c, "actor", {
        who: [{ id: bobScout._id, name: bobScout.name, label: "Bob the Scout (2 fate points)" }],
        more: [{ id: "aspect-scout", name: "Eyes Like a Hawk", kind: "character", attached_to: who(bobScout), free_invokes: {}, count: 1 }]
      });
      assert.equal(ctx.single.id, bobScout._id);
      assert.deepEqual(ctx.aspects.map((a) => [a.name, a.where]), [["Eyes Like a Hawk", "Bob the Scout"]]);
    });
  });
});

describe("names, never ids, in the invoke picker", () => {
  test("a free invoke held by a character not on the card, or by the GM, is named", async () => {
    const c = card({
      aspects: [{ id: "sit-fog", name: "Thick Fog", kind: "situation", attached_to: null, free_invokes: { [bobScout._id]: 1, gm: 2 }, count: 1 }]
    });
    await asUser(ANN.id, () => {
      const ctx = pickers.invokeContext(c, "actor");
      assert.equal(ctx.aspects[0].free, "free: Bob the Scout ×1, GM ×2");
      assert.doesNotMatch(ctx.aspects[0].free, /actor[A-Z]/);
    });
  });
});

describe("R13.1: Accelerated rolls its six approaches only", () => {
  test("the roll dialog and an opposer's skills list the approaches, at the sheet's ratings (Mediocre without one)", async () => {
    const approaches = ["Careful", "Clever", "Flashy", "Forceful", "Quick", "Sneaky"];
    const accelerated = new Bridge();
    accelerated.hello = { ruleset: "fate-accelerated", actions: [{ id: "overcome" }], rules: { id: "fate-accelerated", approaches } };
    const ratings = rollDialog.rollableRatings(game.actors.get(bobScout._id), accelerated.rules);
    assert.deepEqual(ratings, { Careful: 3, Clever: 0, Flashy: 0, Forceful: 0, Quick: 2, Sneaky: 0 });
    const ctx = rollDialog.dialogContext(accelerated, { actor: game.actors.get(bobScout._id) });
    assert.deepEqual(ctx.skills.map((s) => s.name).sort(), approaches);
    assert.ok(!ctx.skills.some((s) => s.name === "Athletics"));
    // Under skills, the sheet's skills as they are.
    assert.deepEqual(Object.keys(rollDialog.rollableRatings(game.actors.get(bobScout._id), null)).sort(), ["Athletics", "Careful", "Quick"]);
  });
});

describe("the status line's causes in words", () => {
  test("socket.io's reasons and an unknown transport error become sentences naming the bridge; the raw words stay in the tooltip", () => {
    for (const reason of ["transport close", "transport error", "ping timeout", "io server disconnect", "websocket error", "xhr poll error"]) {
      const { detail, raw } = status.statusText({ state: "offline", reason, message: "websocket error" });
      assert.doesNotMatch(detail, /websocket|transport|xhr|io server/i, reason);
      assert.ok(detail.length > 20, reason);
      assert.equal(raw, "websocket error");
    }
    assert.match(status.statusText({ state: "offline", reason: "xhr poll error", message: null }).detail, /Cannot reach the bridge at http:\/\/127\.0\.0\.1:9/);
    assert.match(status.statusText({ state: "offline", reason: "transport close", message: null }).detail, /was lost\. Trying again/);
  });
});
