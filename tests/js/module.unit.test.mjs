// Unit tests of the module's real code against the fake Foundry (no bridge process).
import assert from "node:assert/strict";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { before, describe, test } from "node:test";
import { cardSide } from "./support/cards.mjs";
import { MODULE_DIR, asUser as actAs, bootNodeFoundry, readJson, setField, waitFor } from "./support/node-foundry.mjs";
import { check, loadValidators } from "./support/schemas.mjs";
import { ogre, zird } from "./fixtures/actors.mjs";

const GM = { id: "gmUser000000001", name: "Gamemaster", isGM: true };
const PLAYER = { id: "playerUser00001", name: "Player", isGM: false };


/** A card as the bridge sends it (validated against schemas/server/card.json below). */
function workedCard(overrides = {}) {
  return {
    kind: "action",
    action_id: "act-1",
    ruleset: "unwritten",
    action_type: "overcome",
    state: "resolved",
    actor: cardSide({
      leader: { id: "actorAthlete0001", name: "Zird the Arcane" }, controllers: [PLAYER.id], skill: "Athletics",
      skill_rating: { value: 3 }, dice: [1, 1, 0, 0], dice_total: 2, total: { value: 5 }, passed: true, fate_points: 3
    }),
    opposition: cardSide({ passive: true, total: { value: 4 }, passed: true }),
    opposition_kind: "passive",
    opposition_action: null,
    target: null,
    target_aspect: null,
    aspect_name: null,
    situation: null,
    invokes: [],
    shifts: 1,
    outcome: "succeed",
    provisional: false,
    succeeded: true,
    pending_choice: null,
    cost_severity: null,
    pending_hit: 0,
    effects: [{ kind: "success", text: "", count: 0, character: null, aspect_id: null, detail: "", cause: null }],
    aspects: [],
    gm_fate_points: 2,
    fate_points: { actorAthlete0001: 3 },
    prompt: { kind: "none", users: [], gm: false, options: [] },
    description: null,
    event_seq: 7,
    event_hash: "9f2c4e11aa0b7d3e5f60718293a4b5c6d7e8f90112233445566778899aabbccd",
    ...overrides
  };
}

/** A finished create-an-advantage against an active opposer, with invokes and effects. */
function finishedCard() {
  const ogreRef = { id: "actorOgre0000001", name: "Grumpy Ogre" };
  const zirdRef = { id: "actorAthlete0001", name: "Zird the Arcane" };
  return workedCard({
    action_type: "create_advantage", outcome: "excel", shifts: 5,
    actor: cardSide({ leader: zirdRef, controllers: [PLAYER.id], skill: "Athletics", skill_rating: { value: 3 }, stunt_bonus: 2, invoke_bonus: 2, dice: [-1, 0, 0, 1], dice_total: 0, total: { value: 7 }, passed: true, fate_points: 1 }),
    opposition: cardSide({ leader: ogreRef, skill: "Fight", skill_rating: { value: 3 }, invoke_bonus: 2, dice: [-1, -1, -1, 0], dice_total: -3, total: { value: 2 }, passed: true }),
    opposition_kind: "active", opposition_action: "oppose", target: ogreRef, aspect_name: "Ogre Off Balance",
    invokes: [
      { side: "actor", invoker: zirdRef.id, invoker_name: zirdRef.name, aspect_id: "actorAthlete0001.hc", aspect_name: "Wizard of the Old School", payment: "fate_point", effect: "bonus", dice: null },
      { side: "actor", invoker: zirdRef.id, invoker_name: zirdRef.name, aspect_id: "sit1", aspect_name: "Slippery Floor", payment: "free", effect: "reroll", dice: [-1, 0, 0, 1] },
      { side: "opposition", invoker: "gm", invoker_name: "GM", aspect_id: "actorOgre0000001.hc", aspect_name: "Hungry Bridge Ogre", payment: "fate_point", effect: "bonus", dice: null }
    ],
    effects: [
      { kind: "aspect", text: "Ogre Off Balance", count: 2, character: zirdRef, aspect_id: "sit2", detail: "", cause: null },
      { kind: "fate_point", text: "Hungry Bridge Ogre", count: 1, character: ogreRef, aspect_id: null, detail: "invoked_against", cause: null },
      { kind: "success", text: "", count: 0, character: null, aspect_id: null, detail: "", cause: null }
    ],
    aspects: [
      { id: "sit1", name: "Slippery Floor", kind: "situation", attached_to: null, free_invokes: {} },
      { id: "sit2", name: "Ogre Off Balance", kind: "situation", attached_to: ogreRef, free_invokes: { [zirdRef.id]: 2 } },
      { id: "actorAthlete0001.hc", name: "Wizard of the Old School", kind: "character", attached_to: zirdRef, free_invokes: {} },
      { id: "actorOgre0000001.hc", name: "Hungry Bridge Ogre", kind: "character", attached_to: ogreRef, free_invokes: {} }
    ],
    fate_points: { [zirdRef.id]: 1 },
    event_seq: 21
  });
}

let foundry;
/** A Bridge of the tests' own (the module's is main.mjs's). */
let bridge;
let validators;
let cards;
let sheet;
let adapters;
let writes;
let controls;

before(async () => {
  validators = await loadValidators();
  bridge = new (await import(path.join(MODULE_DIR, "scripts/net/bridge.mjs"))).Bridge();
  foundry = await bootNodeFoundry({
    users: [GM, PLAYER],
    userId: GM.id,
    activeGM: GM.id,
    systemId: "fate-core-official",
    actors: [
      {
        _id: "actorAthlete0001",
        name: "Zird the Arcane",
        type: "fate-core-official",
        system: {
          skills: {
            Athletics: { name: "Athletics", rank: 3 },
            Lore: { name: "Lore", rank: 4 },
            Broken: { name: "Broken", rank: "lots" }
          }
        },
        ownership: { default: 0, [PLAYER.id]: 3, [GM.id]: 3 }
      }
    ],
    settings: { "fate-bridge.bridgeUrl": "http://127.0.0.1:9" }
  }, { io: () => { throw new Error("no connection in unit tests"); }, bridge });
  // Foundry's start sequence without connecting: ready would connect, so fire init only.
  foundry.Hooks.callAll("init");
  cards = await import(path.join(MODULE_DIR, "scripts/cards/chat.mjs"));
  sheet = await import(path.join(MODULE_DIR, "scripts/adapters/sheet.mjs"));
  adapters = await import(path.join(MODULE_DIR, "scripts/adapters/index.mjs"));
  writes = await import(path.join(MODULE_DIR, "scripts/foundry/world-writes.mjs"));
  controls = await import(path.join(MODULE_DIR, "scripts/cards/controls.mjs"));
});

describe("manifest and assets", () => {
  test("module.json declares what Foundry needs and no system restriction", async () => {
    const manifest = await readJson("foundry-module/module.json");
    assert.equal(manifest.id, "fate-bridge");
    assert.equal(manifest.title, "Fate Bridge");
    assert.equal(manifest.version, (await readJson("package.json")).version); // one version everywhere
    assert.deepEqual(manifest.compatibility, { minimum: "13", verified: "14" });
    assert.equal(manifest.socket, true);
    assert.equal(manifest.relationships?.systems, undefined);
    for (const file of [...manifest.esmodules, ...manifest.styles, ...manifest.languages.map((l) => l.path)]) {
      await readFile(path.join(MODULE_DIR, file)); // throws when missing
    }
  });

  test("every FATEBRIDGE key used in scripts and templates exists in lang/en.json", async () => {
    const lang = await readJson("foundry-module/lang/en.json");
    const files = [];
    for (const dir of ["scripts", "templates"]) {
      for (const f of await readdir(path.join(MODULE_DIR, dir), { recursive: true })) {
        if (/\.(mjs|hbs)$/.test(f) && !f.startsWith("vendor")) files.push(path.join(MODULE_DIR, dir, f));
      }
    }
    const used = new Set();
    for (const f of files) for (const m of (await readFile(f, "utf8")).matchAll(/FATEBRIDGE(?:\.[A-Za-z0-9_-]+)+/g)) used.add(m[0]);
    // keys built from a variable part
    for (const s of ["connected", "connecting", "offline", "refused"]) used.add(`FATEBRIDGE.Status.${s}`);
    for (const r of ["bad_key", "unknown_world", "protocol_mismatch", "invalid_auth", "role"]) used.add(`FATEBRIDGE.Status.Reason.${r}`);
    for (const s of ["confirming", "declared", "awaiting_opposition", "invoking", "choosing", "costing", "absorbing", "resolved"]) used.add(`FATEBRIDGE.Card.State.${s}`);
    const costs = { minor: ["npc_boost", "aspect_on_actor", "wrinkle", "tough_choice"], serious: ["mild_consequence", "opponent_advantage", "reinforce_opposition", "delay", "big_wrinkle"] };
    for (const k of [...costs.minor, ...costs.serious]) used.add(`FATEBRIDGE.Cost.${k}`);
    for (const c of ["fail", "succeed_at_cost", "unintended_aspect", "aspect", "mark", "full_hit", "boost"]) used.add(`FATEBRIDGE.Choice.${c}`);
    for (const k of ["boost", "aspect", "free_invokes", "consequence", "overwhelmed", "questions", "hint", "hintAsked", "hintGiven", "hit", "stress", "cost", "fate_point", "conceded"]) used.add(`FATEBRIDGE.Card.Effect.${k}`);
    for (const k of ["invited", "declined", "dropped"]) used.add(`FATEBRIDGE.Card.Participant.${k}`);
    // Consent to harm: each answer's line, each part's word, each decline's effect, its state.
    for (const k of ["asked", "accepted", "declined"]) used.add(`FATEBRIDGE.Card.Consent.${k}`);
    for (const k of ["target", "opposer", "aspect"]) used.add(`FATEBRIDGE.Card.ConsentPart.${k}`) && used.add(`FATEBRIDGE.Card.Effect.declined${k}`);
    used.add("FATEBRIDGE.Card.State.declined");
    for (const k of ["overwhelmed", "mild", "moderate", "severe", "boost"]) used.add(`FATEBRIDGE.StatusEffect.${k}`);
    for (let v = -2; v <= 8; v++) used.add(`FATEBRIDGE.Ladder.${v}`);
    for (const k of ["mild", "moderate", "severe"]) used.add(`FATEBRIDGE.Severity.${k}`);
    for (const k of ["direct", "environment"]) used.add(`FATEBRIDGE.Contest.Mode.${k}`);
    for (const k of ["physical", "mental"]) used.add(`FATEBRIDGE.Conflict.Kind.${k}`) && used.add(`FATEBRIDGE.Harm.${k}`);
    for (const k of ["scene", "session", "scenario"]) used.add(`FATEBRIDGE.Scene.End.${k}`) && used.add(`FATEBRIDGE.Scene.EndExplain.${k}`);
    for (const k of ["scene", "session", "scenario"]) used.add(`FATEBRIDGE.SceneEnd.Title.${k}`);
    for (const k of ["invoked_against", "conceded", "conceded_contest", "hint_unused"]) used.add(`FATEBRIDGE.FatePoint.${k}`);
    for (const k of ["overcome", "create_advantage", "take_advantage", "discover", "attack", "contest", "challenge"]) used.add(`FATEBRIDGE.History.Kind.${k}`);
    for (const k of ["resolved", "cancelled"]) used.add(`FATEBRIDGE.History.Rolls.${k}`);
    // R13.2: the absorb picker's per-hit rule and why a box is refused.
    for (const k of ["sum", "ones", "one_box"]) used.add(`FATEBRIDGE.Absorb.Rule.${k}`);
    for (const k of ["nothing_left", "too_small", "too_small_fit", "smaller_fits"]) used.add(`FATEBRIDGE.Absorb.Why.${k}`);
    // Reaching the bridge: each path's line, each Bridge URL problem, each permission state.
    for (const k of ["same_machine", "direct", "prompt", "blocked_loopback", "blocked_local", "mixed_content"]) used.add(`FATEBRIDGE.Reach.Path.${k}`);
    for (const k of ["no_host", "bad_scheme", "bad_port", "has_path", "has_credentials", "unparseable"]) used.add(`FATEBRIDGE.Reach.BadUrl.${k}`);
    for (const k of ["granted", "prompt", "denied", "none", "notNeeded", "insecure"]) used.add(`FATEBRIDGE.Reach.Permission.${k}`);
    used.add("FATEBRIDGE.Relay.Reason.no_key");
    // R13.1: each approach's name, the key built from the name the bridge knows it by.
    for (const k of ["Careful", "Clever", "Flashy", "Forceful", "Quick", "Sneaky"]) used.add(`FATEBRIDGE.Approach.${k}`);
    // The wire carries ids (protocol 7): every refusal code the bridge sends, and the module's
    // own, has its sentence; every action and outcome its name; every notice code its text.
    const errorCodes = (await readJson("schemas/defs/ErrorInfo.json")).properties.code.enum;
    assert.ok(errorCodes.includes("wrong_state"));
    for (const k of [...errorCodes, "offline", "offlineBecause", "timeout", "bad_ack"]) used.add(`FATEBRIDGE.Error.${k}`);
    for (const k of ["overcome", "create_advantage", "take_advantage", "leave_mark", "discover", "attack", "defend", "oppose"]) used.add(`FATEBRIDGE.Action.${k}`);
    for (const family of ["fate", "unwritten"]) for (const k of ["fumble", "tie", "succeed", "excel"]) used.add(`FATEBRIDGE.Outcome.${family}.${k}`);
    for (const k of ["bound", "malformed_frame", "bind_timeout", "too_many_connections"]) used.add(`FATEBRIDGE.Notice.${k}`);
    const missing = [...used].filter((k) => typeof k.split(".").reduce((o, p) => o?.[p], lang) !== "string");
    // prefixes of keys built at run time are not keys themselves
    const prefixes = ["Status", "Status.Reason", "Card.State", "Card.Participant", "Card.Consent", "Card.ConsentPart", "Ladder", "Card.Bonus", "Card.Effect", "Card.Invoke", "Card.Payment", "Choice", "Cost", "Controls.CostTitle", "Invoke.Effect", "Invoke.Kind", "Invoke.Payment", "StatusEffect", "Severity", "FatePoint", "Contest.Mode", "SceneEnd.Title", "Conflict.Kind", "Scene.End", "Scene.EndExplain", "History.Kind", "History.Rolls", "Harm", "Absorb.Rule", "Absorb.Why", "Reach", "Reach.Path", "Reach.BadUrl", "Reach.Permission", "Relay.Reason", "Approach", "Action", "Outcome", "Error", "Notice", "Refusal"].map((p) => `FATEBRIDGE.${p}`);
    const realMissing = missing.filter((k) => !prefixes.includes(k));
    assert.deepEqual(realMissing, []);
    assert.ok(used.size > 40);
  });

  test("the GM key is a client setting, the bridge address a world setting", () => {
    const configs = foundry.game.settings.configs;
    assert.equal(configs.get("fate-bridge.gmKey").scope, "client");
    assert.equal(configs.get("fate-bridge.bridgeUrl").scope, "world");
    assert.equal(configs.get("fate-bridge.bridgeUrl").default, "http://127.0.0.1:8765");
    assert.equal(configs.get("fate-bridge.worldId").default, "default");
  });

  test("the api is published on the module, speaking the bridge's protocol", async () => {
    const api = foundry.game.modules.get("fate-bridge").api;
    for (const fn of ["roll", "start", "invoke", "pass", "choose", "cost", "concede", "rollDeclared", "card", "state"]) assert.equal(typeof api[fn], "function", fn);
    assert.equal(api.PROTOCOL_VERSION, (await readJson("schemas/index.json")).protocol);
    assert.equal(api.status.state, "offline");
  });
});

describe("adapters", () => {
  test("fate-core-official -> bridge: skills, aspects (text, tags stripped), stunts with action flags, fate points, consequence tracks, stress boxes", () => {
    const actor = new Actor(zird(PLAYER.id));
    const data = adapters.adapterFor("fate-core-official").toActorData(actor);
    check(validators.client["actor.sync"], { request_id: "r-1", actor: data }, "actor.sync");
    assert.deepEqual(data.skills, { Athletics: 3, Lore: 4, Will: 2 });
    assert.deepEqual(data.owners, [PLAYER.id]);
    assert.deepEqual(data.aspects.map((a) => a.name), ["Wizard of the Old School", "Rivals in the Collegia"]);
    for (const a of data.aspects) assert.match(a.key, /^[A-Za-z0-9_.:-]{1,64}$/);
    assert.deepEqual(data.stunts, [{ name: "Scholar", skill: "Lore", bonus: 2, actions: ["create_advantage", "take_advantage"] }]);
    assert.equal(data.fate_points, 3);
    assert.equal(data.refresh, 3);
    assert.deepEqual(data.consequences.map(({ severity, name }) => ({ severity, name })), [{ severity: 2, name: undefined }, { severity: 4, name: "Twisted Ankle" }, { severity: 6, name: undefined }]);
    for (const c of data.consequences) assert.match(c.id, /^[A-Za-z0-9_.:-]{1,64}$/);
    // R5.10: named tracks of a kind, each box's value (escalating: 1, 2); Wealth (no boxes) and
    // consequences are not stress.
    assert.deepEqual(data.stress.map((t) => [t.name, t.kind, t.boxes.map((b) => b.value), t.boxes.map((b) => b.marked)]), [
      ["Physical", "physical", [1, 2], [false, false]],
      ["Mental", "mental", [1, 2], [true, false]]
    ]);
    // An unranked skill is left out; a null refresh is left to the bridge.
    const npc = adapters.adapterFor("fate-core-official").toActorData(new Actor({ ...ogre(), system: { ...ogre().system, skills: { Fight: { name: "Fight", rank: "lots" } } } }));
    assert.deepEqual(npc.skills, {});
    assert.equal("refresh" in npc, false);
  });

  test("bridge -> fate-core-official: an actor.patch writes fate points, consequence names and marks, stress boxes; no echo", async () => {
    const actor = new Actor(zird(PLAYER.id));
    foundry.game.actors.set(actor.id, actor);
    const fco = adapters.adapterFor("fate-core-official");
    const ids = fco.toActorData(actor).consequences.map((c) => c.id);
    const [physicalTrack, mentalTrack] = fco.toActorData(actor).stress;
    const marks = (track, ...marked) => ({ ...track, boxes: track.boxes.map((b, i) => ({ ...b, marked: marked[i] })) });
    const patch = {
      seq: 41, world: "w", writer: "gm", actor_id: actor.id, fate_points: 1, pending_fate_points: 1, overwhelmed: false,
      consequences: [
        { id: ids[0], severity: 2, name: "Singed Eyebrows", status: "fresh" },
        { id: ids[1], severity: 4, name: null, status: "fresh" },
        { id: ids[2], severity: 6, name: null, status: "fresh" }
      ],
      stress: [marks(physicalTrack, true, false), marks(mentalTrack, true, true)]
    };
    check(validators.server["actor.patch"], patch, "actor.patch");
    const synced = [];
    bridge.connection = { connected: true, call: async (event, payload) => { synced.push(event); return { ok: true, data: {} }; } };
    try {
      const written = await writes.handleActorPatch(bridge, patch);
      assert.equal(written, actor);
      assert.equal(actor.updates.at(-1).options.fateBridgeWrite, true);
      assert.deepEqual(synced, [], "a write from the bridge is not synced back");
      const t = actor.system.tracks;
      assert.equal(actor.system.details.fatePoints.current, 1);
      assert.deepEqual([t["TWlsZA=="].aspect.name, t["TWlsZA=="].box_values], ["Singed Eyebrows", [true]]);
      assert.deepEqual([t["TW9kZXJhdGU="].aspect.name, t["TW9kZXJhdGU="].box_values], ["", [false]]);
      assert.deepEqual(t["UGh5c2ljYWw="].box_values, [true, false]);
      assert.deepEqual(t["TWVudGFs"].box_values, [true, true]);
      assert.equal(actor.flags["fate-bridge"].pendingFatePoints, 1);
      assert.equal(await writes.handleActorPatch(bridge, patch), null, "a replayed patch is not written twice");
      // Round trip: the sheet now reads back as the bridge said.
      const back = fco.toActorData(actor);
      assert.equal(back.fate_points, 1);
      assert.deepEqual(back.consequences.map((c) => c.name ?? null), ["Singed Eyebrows", null, null]);
      assert.deepEqual(back.stress, patch.stress);
      // A user's edit is synced.
      await actor.update({ "system.details.fatePoints.current": 4 });
      assert.deepEqual(synced, ["actor.sync"]);
    } finally {
      bridge.connection = null;
    }
  });

  test("an emits frame is written item by item, in order; a frame without its list, a null item or an unknown item changes nothing", async () => {
    const session = await import(path.join(MODULE_DIR, "scripts/net/session.mjs"));
    const actor = new Actor({ ...zird(PLAYER.id), _id: "actorFrame000001" });
    foundry.game.actors.set(actor.id, actor);
    const fco = adapters.adapterFor("fate-core-official");
    const base = { world: "w", writer: "gm", actor_id: actor.id, pending_fate_points: 0, overwhelmed: false, consequences: fco.toActorData(actor).consequences.map((c) => ({ ...c, name: null, status: "fresh" })), stress: fco.toActorData(actor).stress };
    const frame = { emits: [
      { event: "actor.patch", data: { ...base, seq: 901, fate_points: 4 } },
      null,
      { event: "not.an.emit", data: { seq: 902 } },
      { event: "actor.patch", data: { ...base, seq: 903, fate_points: 2 } }
    ] };
    check(validators.server["actor.patch"], frame.emits[0].data, "actor.patch");
    const warned = [];
    const warn = console.warn;
    console.warn = (...args) => warned.push(args.join(" "));
    try {
      await session.processFrame(bridge, frame);
      assert.deepEqual(actor.updates.map((u) => u.changes["system.details.fatePoints.current"] ?? u.changes.system?.details?.fatePoints?.current), [4, 2], "both patches, in the frame's order");
      assert.equal(actor.system.details.fatePoints.current, 2);
      const written = actor.updates.length;
      for (const bad of [{}, { emits: "card" }, null]) await session.processFrame(bridge, bad);
      assert.equal(actor.updates.length, written, "a malformed frame writes nothing");
      assert.equal(warned.filter((w) => w.includes("emits frame")).length, 3);
      assert.equal(warned.filter((w) => w.includes("not an object")).length, 1, "the null item was skipped, the items after it written");
    } finally {
      console.warn = warn;
      foundry.game.actors.delete(actor.id);
    }
  });

  test("generic flags both ways", () => {
    const generic = adapters.adapterFor("dnd5e");
    const actor = new Actor({
      _id: "genericActor0001", name: "Ann",
      flags: { "fate-bridge": { skills: { Fight: 2, Bad: 99, Notice: "1" }, aspects: [{ key: "hc", name: "Sellsword with a Heart" }], stunts: [{ name: "Riposte", skill: "Fight", bonus: 2, actions: ["defend"] }], fatePoints: 2, refresh: 3, stress: [false, true] } }
    });
    const data = generic.toActorData(actor);
    check(validators.client["actor.sync"], { request_id: "r-2", actor: data }, "actor.sync");
    assert.deepEqual(data.skills, { Fight: 2, Notice: 1 });
    assert.deepEqual(data.aspects, [{ key: "hc", name: "Sellsword with a Heart" }]);
    assert.deepEqual(data.consequences, [{ id: "mild", severity: 2 }, { id: "moderate", severity: 4 }, { id: "severe", severity: 6 }]);
    // An older flat list of boxes is one physical track of 1-shift boxes (R5.10).
    const legacy = { id: "physical", name: "Physical Stress", kind: "physical", boxes: [{ value: 1, marked: false }, { value: 1, marked: true }] };
    assert.deepEqual([data.fate_points, data.refresh, data.stress], [2, 3, [legacy]]);
    const stress = [{ ...legacy, boxes: [{ value: 1, marked: true }, { value: 1, marked: true }] }, { id: "debt", name: "Indebted", kind: "other", boxes: [{ value: 1, marked: false }] }];
    const patch = { seq: 1, world: "w", writer: "gm", actor_id: actor.id, fate_points: 1, pending_fate_points: 0, overwhelmed: true, consequences: [{ id: "mild", severity: 2, name: "Bruised", status: "fresh" }], stress };
    check(validators.server["actor.patch"], patch, "actor.patch");
    const update = generic.patchUpdate(actor, patch);
    assert.deepEqual(update, {
      "flags.fate-bridge.fatePoints": 1, "flags.fate-bridge.pendingFatePoints": 0, "flags.fate-bridge.overwhelmed": true,
      "flags.fate-bridge.consequences": [{ id: "mild", severity: 2, name: "Bruised" }], "flags.fate-bridge.stress": stress
    });
    // The tracks read back as written; a bad kind is "other" (never marked), junk is dropped.
    const again = generic.toActorData(new Actor({ _id: "genericActor0002", name: "Bo", flags: { "fate-bridge": { stress: [...stress, { id: "x", name: "Odd", kind: "fire", boxes: [{ value: 99 }] }, null, "junk"] } } }));
    check(validators.client["actor.sync"], { request_id: "r-3", actor: again }, "actor.sync");
    assert.deepEqual(again.stress, [...stress, { id: "x", name: "Odd", kind: "other", boxes: [{ value: 12, marked: false }] }]);
  });

  test("status effects are registered in CONFIG.statusEffects: v13 array, v14 keyed by id; twice changes nothing", async () => {
    const ids = Object.values((await import(path.join(MODULE_DIR, "scripts/protocol.mjs"))).STATUS_IDS);
    assert.deepEqual(CONFIG.statusEffects.map((e) => e.id), ids);
    assert.equal(CONFIG.statusEffects.find((e) => e.id === "fate-bridge-overwhelmed").name, "Overwhelmed");
    const v13 = CONFIG.statusEffects;
    try {
      CONFIG.statusEffects = { dead: { id: "dead", name: "Dead" } };
      writes.registerStatuses();
      writes.registerStatuses();
      assert.deepEqual(Object.keys(CONFIG.statusEffects), ["dead", ...ids]);
      assert.equal(CONFIG.statusEffects["fate-bridge-mild"].name, "Mild consequence");
    } finally {
      CONFIG.statusEffects = v13;
    }
    writes.registerStatuses();
    assert.equal(CONFIG.statusEffects.length, ids.length);
  });

  test("token.status toggles only what changed, on the active GM's client", async () => {
    const actor = foundry.game.actors.get("actorAthlete0001");
    const emit = { seq: 50, world: "w", writer: "gm", actor_id: actor.id, statuses: { overwhelmed: true, mild: false, moderate: false, severe: false, boost: true } };
    check(validators.server["token.status"], emit, "token.status");
    assert.deepEqual(await writes.handleTokenStatus(bridge, emit), ["fate-bridge-overwhelmed", "fate-bridge-boost"]);
    assert.deepEqual(await writes.handleTokenStatus(bridge, emit), []);
    assert.deepEqual(foundry.log.statusToggles.at(-2), { actor: actor.id, token: null, status: "fate-bridge-overwhelmed", active: true, overlay: true });
    const gmUser = foundry.game.user;
    foundry.game.user = foundry.game.users.get(PLAYER.id);
    try {
      assert.equal(await writes.handleTokenStatus(bridge, { ...emit, statuses: { boost: false } }), null);
    } finally {
      foundry.game.user = gmUser;
    }
  });
});

describe("chat cards", () => {
  test("the fixture cards match the bridge's card schema", () => {
    check(validators.server.card, { seq: 7, world: "w", writer: GM.id, op: "create", card_id: "card-1", card: workedCard() }, "card emit");
    check(validators.server.card, { seq: 8, world: "w", writer: GM.id, op: "create", card_id: "card-x", card: finishedCard() }, "card emit");
  });

  test("the writer creates one message with the bridge's dice as a pre-evaluated 4dF roll", async () => {
    const before = foundry.log.created.length;
    const emit = { seq: 7, world: "w", writer: GM.id, op: "create", card_id: "card-1", card: workedCard() };
    const message = await cards.handleCardEmit(bridge, emit);
    assert.equal(foundry.log.created.length, before + 1);
    assert.deepEqual(message.flags["fate-bridge"], { cardId: "card-1", seq: 7, card: emit.card });
    assert.equal(message.speaker.actor, "actorAthlete0001");
    assert.equal(message.rolls.length, 1, "passive opposition has no roll");
    const [roll] = message.rolls;
    assert.equal(roll.total, 5);
    assert.equal(roll.formula, "3 + 4dF");
    assert.deepEqual(roll.dice[0].results.map((r) => r.result), [1, 1, 0, 0]);
    const html = message.element;
    const text = (sel) => html.querySelector(sel).textContent.replace(/\s+/g, " ").trim();
    assert.equal(text(".fate-bridge-side--actor .fate-bridge-side__name"), "Zird the Arcane");
    assert.equal(text(".fate-bridge-side--actor .fate-bridge-side__skill"), "Athletics Good +3");
    assert.deepEqual([...html.querySelectorAll(".fate-bridge-side--actor .fate-bridge-die")].map((d) => d.dataset.face), ["1", "1", "0", "0"]);
    assert.equal(text(".fate-bridge-side--actor .fate-bridge-side__total"), "Superb +5");
    assert.equal(text(".fate-bridge-side--opposition .fate-bridge-side__total"), "Great +4");
    assert.equal(text(".fate-bridge-card__outcome"), "Succeed +1 shift");
    assert.equal(text(".fate-bridge-card__verdict"), "Success");
    assert.ok(html.querySelector(".fate-bridge-card--succeed"));
    assert.ok(html.classList.contains("fate-bridge-message"), "renderChatMessageHTML hook decorates the message");
    assert.match(text(".fate-bridge-card__footer"), /Event #7/);
  });

  test("a replayed emit changes nothing; a newer update edits the same message", async () => {
    const before = foundry.log.created.length;
    assert.equal(await cards.handleCardEmit(bridge, { seq: 7, world: "w", writer: GM.id, op: "create", card_id: "card-1", card: workedCard() }), null);
    const card = workedCard({ state: "invoking", provisional: true, succeeded: null, outcome: "fumble", shifts: -3, event_seq: 9 });
    card.actor = { ...card.actor, dice: [-1, -1, 0, 0], dice_total: -2, total: { value: 1 }, passed: false };
    const updated = await cards.handleCardEmit(bridge, { seq: 9, world: "w", writer: GM.id, op: "update", card_id: "card-1", card });
    assert.equal(foundry.log.created.length, before);
    assert.equal(updated.flags["fate-bridge"].seq, 9);
    assert.deepEqual(updated.rolls[0].dice[0].results.map((r) => r.result), [-1, -1, 0, 0]);
    assert.equal(updated.element.querySelector(".fate-bridge-card__state").textContent, "Invoking aspects");
    assert.match(updated.element.querySelector(".fate-bridge-card__outcome").textContent, /Fumble[\s\S]*so far/);
    assert.ok(updated.element.querySelector(".fate-bridge-card--provisional"));
    assert.equal(foundry.game.messages.filter((m) => m.flags["fate-bridge"]?.cardId === "card-1").length, 1);
  });

  test("concurrent live and replayed emits of one card create one message", async () => {
    const emit = { seq: 11, world: "w", writer: GM.id, op: "create", card_id: "card-2", card: workedCard({ event_seq: 11 }) };
    await Promise.all([cards.handleCardEmit(bridge, emit), cards.handleCardEmit(bridge, structuredClone(emit))]);
    assert.equal(foundry.game.messages.filter((m) => m.flags["fate-bridge"]?.cardId === "card-2").length, 1);
  });

  test("other clients do not write", async () => {
    const before = foundry.log.created.length;
    assert.equal(await cards.handleCardEmit(bridge, { seq: 12, world: "w", writer: PLAYER.id, op: "create", card_id: "card-3", card: workedCard() }), null);
    assert.equal(foundry.log.created.length, before);
  });

  test("a finished card lists invokes with who paid what, effects in words, and both sides' rolls", async () => {
    const message = await cards.handleCardEmit(bridge, { seq: 13, world: "w", writer: GM.id, op: "create", card_id: "card-4", card: finishedCard() });
    assert.equal(message.rolls.length, 2, "active opposition rolled too");
    assert.equal(message.rolls[0].formula, "7 + 4dF"); // Athletics 3 + stunt 2 + invokes 2 ... as the card totals
    assert.equal(message.rolls[1].total, 2);
    const lines = (sel) => [...message.element.querySelectorAll(sel)].map((e) => e.textContent.replace(/\s+/g, " ").trim());
    assert.deepEqual(lines(".fate-bridge-card__invoke"), [
      "Zird the Arcane invoked Wizard of the Old School for +2 (fate point)",
      "Zird the Arcane invoked Slippery Floor to reroll (free invoke) \u2212+",
      "GM invoked Hungry Bridge Ogre for +2 (fate point)"
    ]);
    assert.deepEqual(lines(".fate-bridge-card__effect"), [
      "Aspect placed: Ogre Off Balance, 2 free invokes for Zird the Arcane",
      "Grumpy Ogre earns a fate point at the scene's end: Hungry Bridge Ogre was invoked against them"
    ]);
    assert.deepEqual(lines(".fate-bridge-side--actor .fate-bridge-chip"), ["stunt +2", "invokes +2"]);
    assert.equal(lines(".fate-bridge-card__subject")[0], "Ogre Off Balance");
  });
});

describe("card controls: only what this user may press", () => {
  const asUser = (userId, fn) => actAs(foundry, userId, fn);

  test("invoking: the player gets Invoke/Pass for its side; the GM for both sides", async () => {
    const card = workedCard({ state: "invoking", provisional: true, succeeded: null, prompt: { kind: "invoke", users: [PLAYER.id], gm: true, options: [] } });
    card.actor = { ...card.actor, passed: false };
    const player = await asUser(PLAYER.id, () => controls.controlsContext(bridge, card));
    assert.deepEqual(player.sides.map((s) => [s.which, s.canPass]), [["actor", true]]);
    const gm = controls.controlsContext(bridge, card);
    assert.deepEqual(gm.sides.map((s) => [s.which, s.canPass]), [["actor", true], ["opposition", false]]);
    assert.equal(await asUser(PLAYER.id, () => controls.controlsContext(bridge, { ...card, prompt: { ...card.prompt, users: [] } })), null, "not prompted: nothing");
  });

  test("costing: the cost picker is the GM's alone, with the kinds of the card's severity", async () => {
    const card = workedCard({ state: "costing", cost_severity: "serious", prompt: { kind: "cost", users: [], gm: true, options: ["mild_consequence", "delay"] } });
    assert.equal(await asUser(PLAYER.id, () => controls.controlsContext(bridge, card)), null);
    const gm = controls.controlsContext(bridge, card);
    assert.deepEqual(gm.costs.map((c) => c.label), ["A mild consequence on the actor", "Delay the success"]);
    assert.equal(gm.costTitle, "Serious cost");
  });

  test("the invoke picker lists each aspect's free invokes and pays what fits", async () => {
    const picker = await import(path.join(MODULE_DIR, "scripts/cards/pickers.mjs"));
    const card = finishedCard();
    const ctx = picker.invokeContext(card, "actor");
    assert.deepEqual(ctx.invokers.map((i) => i.label), ["Zird the Arcane (1 fate points)", "GM budget (2 fate points)"]);
    assert.deepEqual(ctx.aspects.map((a) => [a.name, a.free]), [
      ["Slippery Floor", ""], ["Ogre Off Balance", "free: Zird the Arcane ×2"], ["Wizard of the Old School", ""], ["Hungry Bridge Ogre", ""]
    ]);
    assert.equal(picker.suggestedPayment(card.aspects[1], "actorAthlete0001"), "free");
    assert.equal(picker.suggestedPayment(card.aspects[0], "actorAthlete0001"), "fate_point");
    assert.equal(picker.suggestedPayment({ kind: "boost", free_invokes: { gm: 1 } }, "gm"), "boost");
  });

  test("alike boosts are one line with their count, in the invoke picker and the scene panel", async () => {
    // Issue 9: the bridge sends three alike boosts as one entry (count 3, id the one spent).
    const picker = await import(path.join(MODULE_DIR, "scripts/cards/pickers.mjs"));
    const view = await import(path.join(MODULE_DIR, "scripts/scene/view.mjs"));
    const momentum = { id: "b2", name: "Zird's momentum", kind: "boost", attached_to: null, free_invokes: { actorAthlete0001: 1 }, count: 3 };
    const card = finishedCard();
    card.aspects = [momentum, ...card.aspects];
    const ctx = picker.invokeContext(card, "actor");
    assert.deepEqual([ctx.aspects[0].id, ctx.aspects[0].name, ctx.aspects[0].free], ["b2", "Zird's momentum ×3", "free: Zird the Arcane ×3"]);
    assert.equal(ctx.aspects[1].name, "Slippery Floor", "an entry without a count keeps its name");
    const state = { ruleset: "unwritten", scene: { number: 1, session: 1, scenario: 1 }, gm_fate_points: 0, aspects: [momentum], contests: [], challenges: [], conflicts: [], compels: [] };
    const panel = view.scenePanelContext(state);
    assert.deepEqual([panel.boosts[0].name, panel.boosts[0].free], ["Zird's momentum ×3", "Zird the Arcane ×3"]);
  });
});

describe("sheet controls", () => {
  test("a fate-core-official sheet gets one die button per skill, once, and it opens the roll dialog", async () => {
    const el = foundry.renderActorSheet("actorAthlete0001");
    await waitFor(() => el.querySelectorAll(".fate-bridge-roll").length === 3, { what: "buttons" });
    foundry.Hooks.callAll("renderActorSheetV2", { actor: foundry.game.actors.get("actorAthlete0001"), element: el }, el);
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(el.querySelectorAll(".fate-bridge-roll").length, 3, "re-render does not duplicate buttons");
    const skills = [...el.querySelectorAll(".mfate-skills-list__skill-name")].map((s) => s.querySelector(".fate-bridge-roll")?.dataset.skill);
    assert.deepEqual(skills, ["Athletics", "Lore", "Broken"]);
  });

  test("the action dialog: ladder -2..+8 or an active opposer, fields per action type, rejectClose always passed", async () => {
    // Not connected: starting from the API warns instead of opening a dialog.
    const api = foundry.game.modules.get("fate-bridge").api;
    assert.equal(await api.roll("actorAthlete0001", "Athletics", { opposition: 4 }), null);
    assert.match(foundry.log.notifications.at(-1).message, /not connected/);
    bridge.hello = { actions: [{ id: "overcome", label: "Overcome" }, { id: "create_advantage", label: "Create an Advantage" }, { id: "take_advantage", label: "Take Advantage" }, { id: "discover", label: "Discover" }] };
    const { askAction } = await import(path.join(MODULE_DIR, "scripts/actions/roll-dialog.mjs"));
    const actor = foundry.game.actors.get("actorAthlete0001");
    const answer = askAction(bridge, { actor, skill: "Lore" });
    const dialog = await waitFor(() => foundry.openDialogs()[0], { what: "dialog" });
    const el = dialog.element;
    assert.equal(dialog.config.rejectClose, false);
    assert.equal(dialog.title, "Zird the Arcane: take an action");
    assert.deepEqual([...el.querySelectorAll("select[name=type] option")].map((o) => o.value), ["overcome", "create_advantage", "take_advantage", "discover"]);
    assert.equal(el.querySelector("select[name=skill]").value, "Lore", "the clicked skill is pre-filled");
    const options = [...el.querySelectorAll("select[name=opposition] option")];
    assert.deepEqual(options.slice(0, 11).map((o) => Number(o.value)), [8, 7, 6, 5, 4, 3, 2, 1, 0, -1, -2]);
    assert.equal(options.find((o) => o.value === "4").textContent, "Great (+4)");
    assert.equal(options.find((o) => o.value === "-2").textContent, "Terrible (\u22122)");
    assert.ok(options.some((o) => o.value.startsWith("actor:")), "other actors can oppose actively");
    assert.equal(el.querySelector("select[name=opposition]").value, "2");
    assert.ok(el.querySelector("[name=dangerActor]"), "the GM sees the danger flags");
    // Overcome shows the situation, hides the aspect name and target.
    assert.equal(el.querySelector("[name=aspectName]").hidden, true);
    assert.equal(el.querySelector("[name=situation]").hidden, false);
    setField(el.querySelector("select[name=type]"), "create_advantage");
    el.querySelector("select[name=type]").dispatchEvent(new globalThis.DomEvent("change"));
    assert.equal(el.querySelector("[name=aspectName]").hidden, false);
    setField(el.querySelector("select[name=opposition]"), "4");
    setField(el.querySelector("input[name=aspectName]"), "Books Everywhere");
    setField(el.querySelector("input[name=description]"), "  topple the shelves ");
    setField(el.querySelector("[name=dangerActor]"), true);
    el.querySelector('button[data-action="roll"]').click();
    assert.deepEqual(await answer, {
      type: "create_advantage", skill: "Lore", opposition: 4, aspectName: "Books Everywhere",
      dangerous: { actor: true, opposition: false }, description: "topple the shelves"
    });
    bridge.hello = null;
  });

  test("the request becomes a valid action.start payload", async () => {
    const { startPayload } = await import(path.join(MODULE_DIR, "scripts/actions/start.mjs"));
    const actor = foundry.game.actors.get("actorAthlete0001");
    const payloads = [
      startPayload(actor, "Athletics", { opposition: 3 }),
      startPayload(actor, "Lore", { type: "create_advantage", opposerId: "actorOgre0000001", targetId: "actorOgre0000001", aspectName: "Off Balance", helpers: [{ character_id: "genericActor0001", skill: "Fight" }], dangerous: { actor: true } }),
      startPayload(actor, "Lore", { type: "take_advantage", opposition: 2, targetAspectId: "sit1" }),
      startPayload(actor, "Lore", { type: "discover", opposition: 2, situation: "The old map" }),
      startPayload(actor, "Athletics", { recovery: { character_id: actor.id, slot_id: "mild" } })
    ];
    for (const p of payloads) check(validators.client["action.start"], { request_id: "r-9", ...p }, "action.start");
    assert.deepEqual(payloads[1].opposition, { kind: "active", opposer_id: "actorOgre0000001" });
    assert.deepEqual(payloads[1].dangerous, { actor: true, opposition: false });
    assert.equal("opposition" in payloads[4], false, "recovery: the bridge sets the opposition");
  });

  test("cancelling the action dialog resolves to null", async () => {
    const { askAction } = await import(path.join(MODULE_DIR, "scripts/actions/roll-dialog.mjs"));
    const answer = askAction(bridge, { actor: foundry.game.actors.get("actorAthlete0001"), skill: "Lore" });
    const dialog = await waitFor(() => foundry.openDialogs()[0], { what: "dialog" });
    dialog.element.querySelector('button[data-action="cancel"]').click();
    assert.equal(await answer, null);
  });

  test("the generic panel lists flag skills and lets an owner add one", async () => {
    const actor = new Actor({ _id: "genericActor0002", name: "Bea", flags: { "fate-bridge": { skills: { Notice: 1, Fight: 3 } } }, ownership: { default: 0 } });
    foundry.game.actors.set(actor.id, actor);
    const root = document.createElement("div");
    root.innerHTML = '<section class="window-content"><p>sheet</p></section>';
    await sheet.injectPanel(bridge, root, actor);
    const rows = [...root.querySelectorAll(".fate-bridge-panel__skill")];
    assert.deepEqual(rows.map((r) => r.dataset.skill), ["Fight", "Notice"]);
    assert.match(rows[0].textContent, /\+3\s+Fight\s+Good \(\+3\)/);
    assert.equal(root.querySelectorAll(".fate-bridge-panel .fate-bridge-roll").length, 2);
    await sheet.injectPanel(bridge, root, actor);
    assert.equal(root.querySelectorAll(".fate-bridge-panel").length, 1, "re-render replaces the panel");

    root.querySelector('[data-fate-bridge-action="add"]').click();
    const dialog = await waitFor(() => foundry.openDialogs()[0], { what: "skill dialog" });
    assert.equal(dialog.config.rejectClose, false);
    setField(dialog.element.querySelector("input[name=name]"), "Stealth");
    setField(dialog.element.querySelector("input[name=rating]"), "2");
    dialog.element.querySelector('button[data-action="save"]').click();
    await waitFor(() => actor.flags["fate-bridge"].skills.Stealth === 2, { what: "flag update" });
    assert.deepEqual(actor.flags["fate-bridge"].skills, { Notice: 1, Fight: 3, Stealth: 2 });
  });

  test("an owner can remove a flag skill", async () => {
    const actor = foundry.game.actors.get("genericActor0002");
    const done = sheet.editSkill(actor, "Notice", 1);
    const dialog = await waitFor(() => foundry.openDialogs()[0], { what: "skill dialog" });
    dialog.element.querySelector('button[data-action="remove"]').click();
    await done;
    assert.deepEqual(actor.flags["fate-bridge"].skills, { Fight: 3, Stealth: 2 });
  });
});

describe("connection backoff", () => {
  test("delays grow exponentially up to the cap, with jitter between half and all of the step", async () => {
    const { ConnectionManager } = await import(path.join(MODULE_DIR, "scripts/net/connection.mjs"));
    const c = new ConnectionManager({ url: "http://x", world: "w", role: "gm", user: "u", baseDelay: 100, maxDelay: 1000 });
    const delays = Array.from({ length: 8 }, () => c.nextDelay());
    const steps = [100, 200, 400, 800, 1000, 1000, 1000, 1000];
    delays.forEach((d, i) => assert.ok(d >= steps[i] / 2 && d <= steps[i], `delay ${i} = ${d} outside [${steps[i] / 2}, ${steps[i]}]`));
  });

  test("a rate_limited answer is sent again with the same request id; other refusals are not", async () => {
    const { ConnectionManager } = await import(path.join(MODULE_DIR, "scripts/net/connection.mjs"));
    const c = new ConnectionManager({ url: "http://x", world: "w", role: "gm", user: "u", rateDelay: 1, rateRetries: 3 });
    const sent = [];
    const answers = [];
    c.status = { state: "connected", reason: null, message: null };
    c.socket = { timeout: () => ({ emit: (event, body, answer) => { sent.push([event, body.request_id]); setTimeout(() => answer(null, answers.shift())); } }), listeners: () => [] };
    const limited = { ok: false, error: { code: "rate_limited", message: "Too many messages; slow down.", field: null } };
    answers.push(limited, limited, { ok: true, data: { n: 1 } });
    assert.deepEqual(await c.call("world.state", {}), { ok: true, data: { n: 1 } });
    assert.equal(sent.length, 3);
    assert.equal(new Set(sent.map(([, id]) => id)).size, 1, "one request id: the bridge answers it once");
    sent.length = 0;
    answers.push(limited, limited, limited, limited);
    assert.equal((await c.call("world.state", {})).error.code, "rate_limited", "bounded: it gives up and says so");
    assert.equal(sent.length, 4);
    sent.length = 0;
    answers.push({ ok: false, error: { code: "forbidden", message: "no", field: null } });
    assert.equal((await c.call("world.state", {})).error.code, "forbidden");
    assert.equal(sent.length, 1);
  });
});

describe("a commit's emits in the sender's own answer (protocol 4)", () => {
  test("the answer's emits reach the emits frame's listeners before the call resolves; a lost answer is told", async () => {
    const { ConnectionManager } = await import(path.join(MODULE_DIR, "scripts/net/connection.mjs"));
    const { EMITS_FRAME } = await import(path.join(MODULE_DIR, "scripts/protocol.mjs"));
    const c = new ConnectionManager({ url: "http://x", world: "w", role: "gm", user: "u" });
    const heard = [];
    const listeners = { [EMITS_FRAME]: [(frame) => heard.push(["frame", frame])] };
    let reply = null;
    c.status = { state: "connected", reason: null, message: null };
    c.socket = {
      timeout: () => ({ emit: (event, body, answer) => setTimeout(() => reply(answer)) }),
      listeners: (event) => listeners[event] ?? []
    };
    const card = { event: "card", data: { seq: 7 } };
    reply = (answer) => answer(null, { ok: true, data: { action_id: "a1" }, emits: [card] });
    const ack = await c.call("action.start", {});
    assert.deepEqual(heard, [["frame", { emits: [card] }]], "handled as the frame would have been, once");
    assert.deepEqual(ack.data, { action_id: "a1" });

    heard.length = 0;
    reply = (answer) => answer(null, { ok: true, data: {} });
    await c.call("world.state", {});
    assert.deepEqual(heard, [], "an answer without emits hands nothing on");

    let lost = 0;
    c.onAckLost(() => (lost += 1));
    reply = (answer) => answer(new Error("operation has timed out"));
    const timedOut = await c.call("action.pass", {});
    assert.equal(timedOut.error.code, "timeout");
    assert.equal(lost, 1, "a call that got no answer may have committed: the session catches up");
    reply = (answer) => answer(null, "not an ack");
    assert.equal((await c.call("world.state", {})).error.code, "bad_ack");
    assert.equal(lost, 1);
  });
});

describe("GM cards follow the bridge's structured views", () => {
  const zirdRef = { id: "actorAthlete0001", name: "Zird the Arcane" };
  const ogreRef = { id: "actorOgre0000001", name: "Grumpy Ogre" };
  const emit = (seq, card, cardId, op = "create") => ({ seq, world: "w", writer: "gm", op, card_id: cardId, card });
  const text = (message) => message.element.textContent.replace(/\s+/g, " ").trim();

  function contestCard(twistAspect) {
    const rolls = [
      { side_id: "s1", action_id: "a1", total: { value: 3 }, shifts: 0, forfeited: false },
      { side_id: "s2", action_id: "a2", total: { value: 3 }, shifts: 0, forfeited: false }
    ];
    const exchange = { number: 1, rolls, winner: null, margin: 0, progress: 0, twist: true, twist_aspect: twistAspect, excelled: false };
    return {
      kind: "contest",
      contest: {
        id: "c1", name: "Chase across the rooftops", mode: "direct", skill: "Athletics", passive: null, target: 3, state: "open",
        exchange: 2, twist_pending: twistAspect === null, winner: null, current: [], history: [exchange],
        sides: [
          { id: "s1", name: "Zird", members: [zirdRef], controllers: [PLAYER.id], progress: 0, conceded: false },
          { id: "s2", name: "The Ogre", members: [ogreRef], controllers: [], progress: 0, conceded: false }
        ]
      },
      exchange
    };
  }

  test("fate point reasons are localized from their kind, the aspect named where there is one", async () => {
    const { fatePointReason, EARNING_KINDS } = await import(path.join(MODULE_DIR, "scripts/cards/view.mjs"));
    assert.deepEqual(EARNING_KINDS.map((kind) => fatePointReason({ kind, aspect: kind === "invoked_against" ? "Hungry Bridge Ogre" : null })), [
      "Hungry Bridge Ogre was invoked against them", "conceded", "conceded the contest", "a hint not taken"
    ]);
    assert.equal(fatePointReason({ kind: "a_newer_reason", aspect: null }), "a_newer_reason", "an unknown kind shows as sent");
    const card = finishedCard();
    card.effects[1] = { ...card.effects[1], detail: "conceded", text: "" };
    check(validators.server.card, emit(30, card, "card-reason"), "card");
    const message = await cards.handleCardEmit(bridge, { ...emit(30, card, "card-reason"), writer: GM.id });
    assert.match(text(message), /Grumpy Ogre earns a fate point at the scene's end: conceded/);
  });

  test("the scene-end card: consequences by name and severity, fate points with reasons, procedures closed unfinished", async () => {
    const card = {
      kind: "scene_end", scope: "scene",
      summary: {
        ended_scene: 4,
        removed_consequences: [{ character: zirdRef, name: "Bruised Ego", severity: 2 }],
        recovering_consequences: [{ character: ogreRef, name: "Twisted Ankle", severity: 4 }, { character: zirdRef, name: "Cracked Staff", severity: 8 }],
        fate_points: [{ character: zirdRef, gained: 2, reasons: [{ kind: "invoked_against", aspect: "Wizard of the Old School" }, { kind: "hint_unused", aspect: null }] }],
        expired_boosts: ["Upper Hand"],
        cleared_aspects: ["Crowded Market"],
        no_longer_overwhelmed: [ogreRef],
        closed_unfinished: ["Chase across the rooftops", "Ready the airship"]
      }
    };
    check(validators.server.card, emit(40, card, "w.scene-end-4"), "scene-end card");
    const message = await cards.handleCardEmit(bridge, emit(40, card, "w.scene-end-4"));
    const t = text(message);
    assert.match(t, /Scene 4 ends/);
    assert.match(t, /Fate points gained Zird the Arcane \+2 Wizard of the Old School was invoked against them, a hint not taken/);
    assert.match(t, /Consequences healed Zird the Arcane Bruised Ego mild/);
    assert.match(t, /Consequences now recovering Grumpy Ogre Twisted Ankle moderate Zird the Arcane Cracked Staff 8 shifts/);
    assert.match(t, /Closed with the scene, unfinished Chase across the rooftops no result Ready the airship no result/);
    assert.equal(message.element.querySelectorAll(".fate-bridge-scene-end__section--closed li").length, 2);
  });

  test("an exchange the GM undid: its card updates in place, marked undone", async () => {
    const cardId = "w.c1.x9";
    await cards.handleCardEmit(bridge, emit(60, contestCard("Loose Tiles"), cardId));
    const undone = { ...contestCard("Loose Tiles"), undone: true };
    check(validators.server.card, emit(61, undone, cardId, "update"), "undone contest card");
    const message = await cards.handleCardEmit(bridge, emit(61, undone, cardId, "update"));
    assert.equal(foundry.game.messages.filter((m) => m.flags["fate-bridge"]?.cardId === cardId).length, 1);
    assert.ok(message.element.querySelector(".fate-bridge-card--undone"));
    assert.match(text(message), /undone The GM took this back/);
  });

  test("a named twist updates the exchange's card in place: same message, the twist's name shown", async () => {
    const cardId = "w.c1.x1";
    check(validators.server.card, emit(50, contestCard(null), cardId), "contest card");
    const first = await cards.handleCardEmit(bridge, emit(50, contestCard(null), cardId));
    assert.match(text(first), /a twist happens/);
    assert.equal(first.element.querySelector("[data-twist-aspect]"), null);
    const before = foundry.log.created.length;
    check(validators.server.card, emit(52, contestCard("Loose Tiles"), cardId, "update"), "contest card update");
    const updated = await cards.handleCardEmit(bridge, emit(52, contestCard("Loose Tiles"), cardId, "update"));
    assert.equal(updated.id, first.id, "the same message");
    assert.equal(foundry.log.created.length, before, "no new message");
    assert.equal(updated.element.querySelector("[data-twist-aspect]").textContent, "Loose Tiles");
    assert.match(text(updated), /The twist: Loose Tiles/);
    assert.equal(await cards.handleCardEmit(bridge, emit(51, contestCard(null), cardId, "update")), null, "an older emit changes nothing");
    // Only the active GM writes "gm" cards.
    const saved = foundry.game.user;
    foundry.game.user = foundry.game.users.get(PLAYER.id);
    try {
      assert.equal(await cards.handleCardEmit(bridge, emit(53, contestCard("Loose Tiles"), "w.c1.x9")), null);
    } finally {
      foundry.game.user = saved;
    }
  });

  test("a challenge summary shows each cost's severity and kind in words and the GM's text", async () => {
    const task = (id, name, costs, outcome) => ({
      id, name, skill: "Fight", opposition: { value: 4 }, action_id: `act-${id}`, actor: ogreRef,
      total: { value: 4 }, shifts: 0, outcome, state: "resolved", succeeded: true, costs
    });
    const card = {
      kind: "challenge",
      challenge: {
        id: "ch1", name: "Ready the airship", state: "complete", advantages: [], carry_boosts: false,
        tasks: [
          task("t1", "Hold the mooring lines", [{ severity: "serious", kind: "delay", text: "The storm arrives first" }], "fumble"),
          task("t2", "Load the crates", [{ severity: "minor", kind: "wrinkle", text: "" }], "tie")
        ]
      }
    };
    check(validators.server.card, emit(60, card, "w.ch1"), "challenge card");
    const message = await cards.handleCardEmit(bridge, emit(60, card, "w.ch1"));
    const costs = [...message.element.querySelectorAll(".fate-bridge-task__cost")].map((e) => e.textContent.replace(/\s+/g, " ").trim());
    assert.deepEqual(costs, ["Serious cost Delay the success: The storm arrives first", "Minor cost A new wrinkle"]);
    assert.ok(message.element.querySelector(".fate-bridge-task__cost--serious"));
  });
});

describe("gift and give: who sees the controls", () => {
  const asUser = (userId, fn) => actAs(foundry, userId, fn);
  const fumbled = (overrides = {}) => {
    const card = finishedCard();
    return {
      ...card, outcome: "fumble", shifts: -3, succeeded: false, state: "resolved",
      effects: [{ kind: "aspect", text: "Ogre Off Balance", count: 0, character: null, aspect_id: "sit2", detail: "", cause: null }],
      prompt: { kind: "none", users: [], gm: false, options: [] },
      ...overrides
    };
  };

  test("a fumbled advantage shows the GM, and only the GM, a gift button; not once a gift was given, not on other outcomes", async () => {
    const card = fumbled();
    check(validators.server.card, { seq: 70, world: "w", writer: GM.id, op: "create", card_id: "w.gift", card }, "card");
    const gm = controls.controlsContext(bridge, card);
    assert.equal(gm.kind, "gift");
    assert.equal(gm.giftLabel, "Give a free invoke (fumble)");
    assert.equal(await asUser(PLAYER.id, () => controls.controlsContext(bridge, card)), null, "a player never sees the gift");
    // Still choosing: the player answers the choice, the GM sees the gift next to it.
    const choosing = fumbled({ state: "choosing", prompt: { kind: "choose", users: [PLAYER.id], gm: true, options: ["fail", "unintended_aspect", "succeed_at_cost"] } });
    const gmChoosing = controls.controlsContext(bridge, choosing);
    assert.equal(gmChoosing.kind, "choose");
    assert.ok(gmChoosing.giftLabel);
    const player = await asUser(PLAYER.id, () => controls.controlsContext(bridge, choosing));
    assert.equal(player.kind, "choose");
    assert.equal(player.giftLabel, undefined);
    const given = fumbled({ effects: [{ kind: "free_invokes", text: "gift", count: 1, character: null, aspect_id: "sit2", detail: "", cause: null }] });
    assert.equal(controls.controlsContext(bridge, given), null, "one gift per action");
    assert.equal(controls.controlsContext(bridge, fumbled({ outcome: "tie" })), null);
    assert.equal(controls.controlsContext(bridge, fumbled({ action_type: "overcome" })), null);
    assert.equal(controls.controlsContext(bridge, fumbled({ state: "invoking" })).giftLabel, undefined, "not before the roll is final");
  });

  test("the GM, and only the GM, can cancel an open action; a closed one offers nothing", async () => {
    const open = fumbled({ action_type: "overcome", state: "invoking", prompt: { kind: "invoke", users: [PLAYER.id], gm: true, options: [] } });
    const gm = controls.controlsContext(bridge, open);
    assert.equal(gm.kind, "invoke", "the prompt's own controls stay");
    assert.equal(gm.cancelLabel, "Cancel action");
    const player = await asUser(PLAYER.id, () => controls.controlsContext(bridge, open));
    assert.equal(player.kind, "invoke");
    assert.equal(player.cancelLabel, undefined, "a player never sees cancel");
    const waiting = controls.controlsContext(bridge, fumbled({ action_type: "overcome", state: "costing", prompt: { kind: "none", users: [], gm: false, options: [] } }));
    assert.equal(waiting.kind, "cancel", "cancel alone when nothing else is asked of the GM");
    for (const state of ["resolved", "cancelled"]) {
      assert.equal(controls.controlsContext(bridge, fumbled({ action_type: "overcome", state })), null, state);
    }
  });

  test("the cancel button confirms, then sends a valid action.cancel with the GM's reason; keeping it sends nothing", async () => {
    const card = fumbled({ action_type: "overcome", state: "choosing" });
    const holder = document.createElement("div");
    const button = document.createElement("button");
    button.dataset.fb = "cancel";
    holder.append(button);
    const kept = controls.intentFor(bridge, card, button, holder);
    const first = await waitFor(() => foundry.openDialogs().at(-1), { what: "cancel dialog" });
    assert.equal(first.config.rejectClose, false);
    first.element.querySelector('button[data-action="keep"]').click();
    assert.equal(await kept, null);
    const pending = controls.intentFor(bridge, card, button, holder);
    const dialog = await waitFor(() => foundry.openDialogs().find((d) => d !== first), { what: "second cancel dialog" });
    setField(dialog.element.querySelector('[name="reason"]'), "Wrong skill");
    dialog.element.querySelector('button[data-action="cancelAction"]').click();
    const [event, payload] = await pending;
    assert.equal(event, "action.cancel");
    assert.deepEqual(payload, { action_id: card.action_id, reason: "Wrong skill" });
    check(validators.client["action.cancel"], { request_id: "r-cancel-1", ...payload }, "action.cancel");
  });

  test("a cancelled card says so, with the refunds and the reason in words", async () => {
    const card = fumbled({
      action_type: "overcome", state: "cancelled", outcome: null, succeeded: null,
      effects: [
        { kind: "refund", text: "Skeptic", count: 1, character: { id: "actorAthlete0001", name: "Zird the Arcane" }, aspect_id: "b.hc", detail: "fate_point", cause: null },
        { kind: "cancelled", text: "Wrong skill", count: 0, character: null, aspect_id: null, detail: "", cause: null }
      ]
    });
    const cancelled = { seq: 71, world: "w", writer: "gm", op: "create", card_id: "w.cancelled", card };
    check(validators.server.card, cancelled, "cancelled card");
    const message = await cards.handleCardEmit(bridge, cancelled);
    const text = message.element.textContent.replace(/\s+/g, " ");
    assert.match(text, /Cancelled by the GM/);
    assert.match(text, /Zird the Arcane gets back what the invoke on Skeptic cost/);
    assert.match(text, /The GM cancelled this action: Wrong skill/);
  });

  test("the gift button sends a valid action.gift for the picked aspect and holder, never the acting side", async () => {
    const picker = await import(path.join(MODULE_DIR, "scripts/cards/pickers.mjs"));
    const card = fumbled();
    const ctx = picker.giftContext(card);
    assert.equal(ctx.holders[0].id, "actorOgre0000001", "the opposition first");
    assert.ok(!ctx.holders.some((h) => h.id === "actorAthlete0001"), "never the acting side");
    assert.equal(ctx.holders.at(-1).id, "gm");
    assert.equal(ctx.aspects[0].id, "sit2", "the newest situation aspect first");
    const holder = document.createElement("div");
    const button = document.createElement("button");
    button.dataset.fb = "gift";
    holder.append(button);
    const pending = controls.intentFor(bridge, card, button, holder);
    const dialog = await waitFor(() => foundry.openDialogs().at(-1), { what: "gift dialog" });
    assert.equal(dialog.config.rejectClose, false);
    setField(dialog.element.querySelector('[name="holder"]'), "gm");
    dialog.element.querySelector('button[data-action="gift"]').click();
    const [event, payload] = await pending;
    assert.equal(event, "action.gift");
    assert.deepEqual(payload, { action_id: card.action_id, aspect_id: "sit2", holder: "gm" });
    check(validators.client["action.gift"], { request_id: "r-gift-1", ...payload }, "action.gift");
  });

  test("the scene panel offers 'give free invokes' to the holder's owner and the GM only", async () => {
    const view = await import(path.join(MODULE_DIR, "scripts/scene/view.mjs"));
    const state = {
      ruleset: "unwritten", scene: { number: 1, session: 1, scenario: 1 }, gm_fate_points: 0,
      aspects: [
        { id: "sit1", name: "Crowded Market", kind: "situation", attached_to: null, free_invokes: { actorAthlete0001: 2, gm: 1 } },
        { id: "sit2", name: "Smoke", kind: "situation", attached_to: null, free_invokes: { actorSomeoneElse: 1 } }
      ],
      contests: [], challenges: [], conflicts: [], compels: []
    };
    const gm = view.scenePanelContext(state);
    assert.deepEqual(gm.situation.map((a) => a.givers.map((g) => g.id)), [["actorAthlete0001"], ["actorSomeoneElse"]], "the GM: every character holder, never the GM's own");
    const player = await asUser(PLAYER.id, () => view.scenePanelContext(state));
    assert.deepEqual(player.situation.map((a) => a.givers.map((g) => [g.id, g.count])), [[["actorAthlete0001", 2]], []], "a player: its own actor's invokes only");
    assert.equal(player.situation[0].givers[0].label, "Give Zird the Arcane's free invokes");

    const picker = await import(path.join(MODULE_DIR, "scripts/cards/pickers.mjs"));
    const pending = picker.askGive(state.aspects[0], "actorAthlete0001", [{ id: "actorAthlete0001", name: "Zird the Arcane" }, { id: "actorOgre0000001", name: "Grumpy Ogre" }]);
    const dialog = await waitFor(() => foundry.openDialogs().at(-1), { what: "give dialog" });
    assert.deepEqual([...dialog.element.querySelectorAll('[name="to"] option')].map((o) => o.value), ["actorOgre0000001"], "not to the giver itself");
    assert.deepEqual([...dialog.element.querySelectorAll('[name="count"] option')].map((o) => o.value), ["1", "2"], "at most what it holds");
    setField(dialog.element.querySelector('[name="count"]'), "2");
    dialog.element.querySelector('button[data-action="give"]').click();
    const give = await pending;
    assert.deepEqual(give, { aspect_id: "sit1", from_id: "actorAthlete0001", to_id: "actorOgre0000001", count: 2 });
    check(validators.client["aspect.give"], { request_id: "r-give-1", ...give }, "aspect.give");
  });
});

describe("confirmation and hint controls: who sees them (R2.1, R9.1, R10.1, R5.5)", () => {
  const asUser = (userId, fn) => actAs(foundry, userId, fn);
  const ACTOR_OWNER = "otherPlayer0001";
  const zirdRef = { id: "actorAthlete0001", name: "Zird the Arcane" };
  const margotRef = { id: "actorMargot00001", name: "Margot" };
  /** A player's overcome against a proposed -10, dangerous for the actor, with Margot invited. */
  const confirming = (overrides = {}) => workedCard({
    state: "confirming", outcome: null, shifts: null, succeeded: null, effects: [],
    actor: cardSide({ leader: zirdRef, controllers: [ACTOR_OWNER], skill: "Athletics", skill_rating: { value: 3 }, dangerous: true, fate_points: 3 }),
    opposition: cardSide({ passive: true, total: { value: -10 }, passed: true }),
    proposal: { passive_rating: { value: -10 }, dangerous_actor: true, dangerous_opposition: false },
    participants: [
      { character: zirdRef, skill: "Athletics", status: "joined", controllers: [ACTOR_OWNER] },
      { character: margotRef, skill: "Athletics", status: "invited", controllers: [PLAYER.id] }
    ],
    prompt: { kind: "confirm", users: [PLAYER.id], gm: true, options: ["confirm", "help"] },
    ...overrides
  });
  const cardEmit = (card) => ({ seq: 90, world: "w", writer: GM.id, op: "create", card_id: "w.confirm", card });
  /** The controls as this user's client renders them: the real template in a holder. */
  const rendered = async (ctx) => {
    const { renderTemplate } = await import(path.join(MODULE_DIR, "scripts/foundry/compat.mjs"));
    const holder = document.createElement("div");
    holder.innerHTML = await renderTemplate(controls.CONTROLS_TEMPLATE, ctx);
    return holder;
  };

  test("the GM's confirm form starts from the proposal; one click sends it as a valid action.confirm", async () => {
    const card = confirming();
    check(validators.server.card, cardEmit(card), "confirming card");
    const ctx = controls.controlsContext(bridge, card);
    assert.equal(ctx.kind, "confirm");
    assert.deepEqual(ctx.confirm.rating.filter((o) => o.selected).map((o) => o.value), [-10], "the proposal is pre-selected, even beyond the ladder");
    assert.equal(ctx.confirm.dangerActor, true);
    assert.equal(ctx.confirm.dangerOpposition, false);
    assert.deepEqual(ctx.invited.map((i) => i.id), [margotRef.id], "the GM may answer for any helper");
    assert.equal(ctx.rollWithout, undefined, "no rolling past the GM's confirmation");
    const holder = await rendered(ctx);
    assert.equal(holder.querySelector('[name="rating"]').value, "-10");
    assert.ok(holder.querySelector('[name="dangerActor"]').hasAttribute("checked"), "pre-checked as proposed");
    assert.ok(!holder.querySelector('[name="dangerOpposition"]').hasAttribute("checked"));
    // linkedom does not derive a checkbox's state from its attribute as a browser does (the
    // browser test presses the real pre-filled form): set it as the page would show it.
    setField(holder.querySelector('[name="dangerActor"]'), true);
    setField(holder.querySelector('[name="dangerOpposition"]'), false);
    const [event, payload] = await controls.intentFor(bridge, card, holder.querySelector('[data-fb="confirm"]'), holder);
    assert.equal(event, "action.confirm");
    assert.deepEqual(payload, { action_id: card.action_id, dangerous: { actor: true, opposition: false }, passive_rating: -10 });
    check(validators.client["action.confirm"], { request_id: "r-confirm-1", ...payload }, "action.confirm");
    // The GM changes it: Great (+4), not dangerous.
    setField(holder.querySelector('[name="rating"]'), "4");
    setField(holder.querySelector('[name="dangerActor"]'), false);
    const [, changed] = await controls.intentFor(bridge, card, holder.querySelector('[data-fb="confirm"]'), holder);
    assert.deepEqual(changed, { action_id: card.action_id, dangerous: { actor: false, opposition: false }, passive_rating: 4 });
    check(validators.client["action.confirm"], { request_id: "r-confirm-2", ...changed }, "action.confirm");
  });

  test("the helper's owner sees join/decline and never the GM's form; the actor's owner sees nothing yet", async () => {
    const card = confirming();
    const helper = await asUser(PLAYER.id, () => controls.controlsContext(bridge, card));
    assert.equal(helper.confirm, undefined, "a player never confirms the GM's numbers");
    assert.deepEqual(helper.invited.map((i) => i.label), ["Margot is asked to help with Athletics"]);
    const holder = await rendered(helper);
    const [event, payload] = await controls.intentFor(bridge, card, holder.querySelector('[data-fb="help"][data-accept="true"]'), holder);
    assert.equal(event, "action.help");
    assert.deepEqual(payload, { action_id: card.action_id, character_id: margotRef.id, accept: true });
    check(validators.client["action.help"], { request_id: "r-help-1", ...payload }, "action.help");
    const [, declined] = await controls.intentFor(bridge, card, holder.querySelector('[data-fb="help"][data-accept="false"]'), holder);
    assert.equal(declined.accept, false);
    // The actor's owner, while the GM has not confirmed: nothing to press.
    const actorsCard = confirming({
      actor: { ...card.actor, controllers: [PLAYER.id] },
      participants: [card.participants[0], { ...card.participants[1], controllers: ["someoneElse0001"] }],
      prompt: { kind: "confirm", users: ["someoneElse0001"], gm: true, options: ["confirm", "help"] }
    });
    assert.equal(await asUser(PLAYER.id, () => controls.controlsContext(bridge, actorsCard)), null);
    // Once confirmed, only helpers are left: the actor's owner may roll without them.
    const confirmed = confirming({
      proposal: null,
      actor: { ...card.actor, controllers: [PLAYER.id] },
      participants: actorsCard.participants,
      prompt: { kind: "confirm", users: ["someoneElse0001", PLAYER.id], gm: true, options: ["roll", "help"] }
    });
    check(validators.server.card, cardEmit(confirmed), "confirmed card");
    const actor = await asUser(PLAYER.id, () => controls.controlsContext(bridge, confirmed));
    assert.ok(actor.rollWithout);
    assert.deepEqual(actor.invited, [], "not the other player's helper");
    const actorHolder = await rendered(actor);
    const [rollEvent, rollPayload] = await controls.intentFor(bridge, confirmed, actorHolder.querySelector('[data-fb="roll"]'), actorHolder);
    assert.equal(rollEvent, "action.roll");
    check(validators.client["action.roll"], { request_id: "r-roll-1", ...rollPayload }, "action.roll");
  });

  test("the card says what waits: the proposal and the invited helper", async () => {
    const message = await cards.handleCardEmit(bridge, cardEmit(confirming()));
    const text = (sel) => [...message.element.querySelectorAll(sel)].map((e) => e.textContent.replace(/\s+/g, " ").trim());
    assert.deepEqual(text(".fate-bridge-card__proposal"), ["Proposed by the player: opposition \u221210, dangerous for the actor. The GM confirms or changes it."]);
    assert.deepEqual(text(".fate-bridge-card__participant"), ["Margot (Athletics) is asked to help — waiting for an answer"]);
    assert.deepEqual(text(".fate-bridge-card__state"), ["Awaiting confirmation"]);
  });

  test("R5.5: the actor takes the hint, the GM answers it; each sends a valid intent", async () => {
    const hintEffect = (detail, text = "") => ({ kind: "hint", text, count: 0, character: zirdRef, aspect_id: null, detail, cause: null });
    const offered = workedCard({
      action_type: "discover", outcome: "excel", shifts: 3,
      effects: [hintEffect("offered")], hint: { status: "offered", text: null },
      prompt: { kind: "hint", users: [PLAYER.id], gm: true, options: ["take"] }
    });
    check(validators.server.card, cardEmit(offered), "hint offered");
    const player = await asUser(PLAYER.id, () => controls.controlsContext(bridge, offered));
    assert.equal(player.takeHint, "Take the hint");
    const holder = await rendered(player);
    const [event, payload] = await controls.intentFor(bridge, offered, holder.querySelector('[data-fb="hint"]'), holder);
    assert.equal(event, "action.hint");
    check(validators.client["action.hint"], { request_id: "r-hint-1", ...payload }, "action.hint");
    const asked = { ...offered, effects: [hintEffect("asked")], hint: { status: "asked", text: null }, prompt: { kind: "hint", users: [], gm: true, options: ["give"] } };
    check(validators.server.card, cardEmit(asked), "hint asked");
    assert.equal(await asUser(PLAYER.id, () => controls.controlsContext(bridge, asked)), null, "only the GM answers");
    const gm = controls.controlsContext(bridge, asked);
    assert.equal(gm.giveHint, "Give the hint");
    const gmHolder = await rendered(gm);
    setField(gmHolder.querySelector('[name="hintText"]'), "The cellar door is new.");
    const [giveEvent, givePayload] = await controls.intentFor(bridge, asked, gmHolder.querySelector('[data-fb="hint-give"]'), gmHolder);
    assert.equal(giveEvent, "action.hint_give");
    assert.deepEqual(givePayload, { action_id: asked.action_id, text: "The cellar door is new." });
    check(validators.client["action.hint_give"], { request_id: "r-hint-2", ...givePayload }, "action.hint_give");
    const given = { ...asked, effects: [hintEffect("given", "The cellar door is new.")], hint: { status: "given", text: "The cellar door is new." }, prompt: { kind: "none", users: [], gm: false, options: [] } };
    const message = await cards.handleCardEmit(bridge, { ...cardEmit(given), card_id: "w.hint" });
    assert.match(message.element.textContent, /The GM's hint for Zird the Arcane: The cellar door is new\./);
  });

  test("the scene panel shows the GM the trust setting as the bridge holds it; players never", async () => {
    const view = await import(path.join(MODULE_DIR, "scripts/scene/view.mjs"));
    const state = {
      ruleset: "unwritten", scene: { number: 1, session: 1, scenario: 1 }, settings: { trust_player_ratings: true },
      gm_fate_points: 0, aspects: [], contests: [], challenges: [], conflicts: [], compels: [],
      // R13: the world's rules ride along with every scene state.
      rules: { id: "unwritten", title: "Unwritten", conflicts: false, ratings: "skills", turn_order: null, full_defense: false, stress_rule: null, stunts_chosen: false }
    };
    check(validators.server["scene.state"], { seq: 3, world: "w", writer: "gm", state }, "scene.state");
    assert.equal(view.scenePanelContext(state).trustRatings, true);
    assert.equal(view.scenePanelContext({ ...state, settings: { trust_player_ratings: false } }).trustRatings, false);
    check(validators.client["world.settings"], { request_id: "r-set-1", trust_player_ratings: false }, "world.settings");
  });
});

describe("consent to harm: who sees accept and decline (DESIGN Reach and trust)", () => {
  const ACTOR_OWNER = "otherPlayer0001";
  const THIRD = { id: "thirdPlayer0001", name: "Carl", isGM: false };
  const zirdRef = { id: "actorAthlete0001", name: "Zird the Arcane" };
  const pierreRef = { id: "actorPierre00001", name: "Pierre" };
  const margotRef = { id: "actorMargot00001", name: "Margot" };
  const ogreRef = { id: "actorOgre0000001", name: "Grumpy Ogre" };
  const asUser = (userId, fn) => actAs(foundry, userId, fn);
  /** Another player's advantage on Margot (this client's player's), opposed by his own Pierre. */
  const asking = (overrides = {}) => workedCard({
    action_type: "create_advantage", aspect_name: "Pinned Down",
    state: "confirming", outcome: null, shifts: null, succeeded: null, effects: [],
    actor: cardSide({ leader: zirdRef, controllers: [ACTOR_OWNER], skill: "Athletics", skill_rating: { value: 3 }, fate_points: 3 }),
    opposition: cardSide({ leader: pierreRef, controllers: [ACTOR_OWNER] }),
    opposition_kind: "active", opposition_action: "oppose", target: margotRef,
    consents: [{ character: margotRef, parts: ["target"], status: "asked", controllers: [PLAYER.id] }],
    prompt: { kind: "confirm", users: [PLAYER.id], gm: true, options: ["consent"] },
    ...overrides
  });
  const cardEmit = (card, seq = 120) => ({ seq, world: "w", writer: GM.id, op: "create", card_id: `w.consent.${seq}`, card });
  const rendered = async (ctx) => {
    const { renderTemplate } = await import(path.join(MODULE_DIR, "scripts/foundry/compat.mjs"));
    const holder = document.createElement("div");
    holder.innerHTML = await renderTemplate(controls.CONTROLS_TEMPLATE, ctx);
    return holder;
  };

  test("the owner and the GM see Accept/Decline; the acting player and a third player see nothing; each press is a valid action.help", async () => {
    const card = asking();
    check(validators.server.card, cardEmit(card), "consent card");
    const owner = await asUser(PLAYER.id, () => controls.controlsContext(bridge, card));
    assert.equal(owner.kind, "confirm");
    assert.deepEqual(owner.consents.map((c) => [c.id, c.label, c.accept, c.decline]), [
      [margotRef.id, "Allow Zird the Arcane's action on Margot (targeted)?", "Accept", "Decline"]
    ]);
    assert.equal(owner.confirm, undefined, "no GM form: nothing here is the GM's numbers");
    assert.equal(owner.rollWithout, undefined, "nobody rolls past a consent");
    const holder = await rendered(owner);
    assert.equal(holder.querySelectorAll('[data-fb="consent"]').length, 2);
    const [event, payload] = await controls.intentFor(bridge, card, holder.querySelector('[data-fb="consent"][data-accept="true"]'), holder);
    assert.equal(event, "action.help");
    assert.deepEqual(payload, { action_id: card.action_id, character_id: margotRef.id, accept: true });
    check(validators.client["action.help"], { request_id: "r-consent-1", ...payload }, "action.help");
    const [, declined] = await controls.intentFor(bridge, card, holder.querySelector('[data-fb="consent"][data-accept="false"]'), holder);
    assert.deepEqual(declined, { action_id: card.action_id, character_id: margotRef.id, accept: false });
    check(validators.client["action.help"], { request_id: "r-consent-2", ...declined }, "action.help");
    // The GM may answer for any character.
    const gm = controls.controlsContext(bridge, card, GM);
    assert.deepEqual(gm.consents.map((c) => c.id), [margotRef.id]);
    assert.ok(gm.cancelLabel, "and may still call the action off");
    // The acting player and a third player: no accept, no decline.
    assert.equal(controls.controlsContext(bridge, card, { id: ACTOR_OWNER, isGM: false }), null);
    assert.equal(controls.controlsContext(bridge, card, THIRD), null);
    // Even a card whose prompt names the acting player (it waits for his helper too) shows him no
    // button for Margot: only her owners (controllers) and the GM answer for her.
    const helped = asking({
      participants: [
        { character: zirdRef, skill: "Athletics", status: "joined", controllers: [ACTOR_OWNER] },
        { character: pierreRef, skill: "Athletics", status: "invited", controllers: [ACTOR_OWNER] }
      ],
      prompt: { kind: "confirm", users: [PLAYER.id, ACTOR_OWNER], gm: true, options: ["help", "consent"] }
    });
    check(validators.server.card, cardEmit(helped), "consent and helper card");
    const actor = controls.controlsContext(bridge, helped, { id: ACTOR_OWNER, isGM: false });
    assert.deepEqual(actor.consents, []);
    assert.deepEqual(actor.invited.map((i) => i.id), [pierreRef.id]);
    const margots = await asUser(PLAYER.id, () => controls.controlsContext(bridge, helped));
    assert.deepEqual([margots.consents.map((c) => c.id), margots.invited], [[margotRef.id], []]);
  });

  test("an NPC's yes is the GM's alone; an answered consent offers nothing more", async () => {
    const npc = asking({
      target: ogreRef,
      consents: [{ character: ogreRef, parts: ["target", "opposer"], status: "asked", controllers: [] }],
      opposition: cardSide({ leader: ogreRef }),
      prompt: { kind: "confirm", users: [], gm: true, options: ["consent"] }
    });
    check(validators.server.card, cardEmit(npc), "NPC consent card");
    assert.equal(await asUser(PLAYER.id, () => controls.controlsContext(bridge, npc)), null);
    assert.equal(controls.controlsContext(bridge, npc, { id: ACTOR_OWNER, isGM: false }), null);
    const gm = controls.controlsContext(bridge, npc, GM);
    assert.deepEqual(gm.consents.map((c) => c.label), ["Allow Zird the Arcane's action on Grumpy Ogre (targeted, opposing)?"]);
    const accepted = asking({
      state: "awaiting_opposition",
      consents: [{ character: margotRef, parts: ["target"], status: "accepted", controllers: [PLAYER.id] }],
      prompt: { kind: "oppose", users: [ACTOR_OWNER], gm: true, options: [] }
    });
    assert.equal(await asUser(PLAYER.id, () => controls.controlsContext(bridge, accepted)), null);
  });

  test("the card says whose yes it waits for; a decline reads as called off, with nothing to press", async () => {
    const waiting = await cards.handleCardEmit(bridge, cardEmit(asking(), 121));
    const text = (message, sel) => [...message.element.querySelectorAll(sel)].map((e) => e.textContent.replace(/\s+/g, " ").trim());
    assert.deepEqual(text(waiting, ".fate-bridge-card__consent"), ["Margot (targeted) — waits for a yes from their owner or the GM"]);
    assert.deepEqual(text(waiting, ".fate-bridge-card__state"), ["Awaiting confirmation"]);
    assert.equal(waiting.element.querySelectorAll('[data-fb="consent"]').length, 2, "this client's user is the GM: Accept and Decline");
    const card = asking({
      state: "cancelled",
      consents: [{ character: margotRef, parts: ["target"], status: "declined", controllers: [PLAYER.id] }],
      effects: [{ kind: "declined", text: "Declined for Margot (target): the action is called off", count: 0, character: margotRef, aspect_id: null, detail: "target", cause: null }],
      prompt: { kind: "none", users: [], gm: false, options: [] }
    });
    check(validators.server.card, cardEmit(card, 122), "declined card");
    const declined = await cards.handleCardEmit(bridge, cardEmit(card, 122));
    assert.deepEqual(text(declined, ".fate-bridge-card__state"), ["Declined — called off"]);
    assert.deepEqual(text(declined, ".fate-bridge-card__consent"), ["Margot (targeted) — declined"]);
    assert.deepEqual(text(declined, ".fate-bridge-card__effect"), ["Declined for Margot: not to be targeted. The action is called off."]);
    assert.equal(declined.element.querySelectorAll("[data-fb]").length, 0, "a called-off action offers nothing");
    for (const user of [GM, PLAYER]) assert.equal(controls.controlsContext(bridge, card, user), null);
  });
});

describe("names a player can read (H18): the schemas the module checks against", () => {
  const aspect = (name) => ({ request_id: "r-h18", op: "add", name });
  const actor = (skills) => ({ request_id: "r-h18", actor: { id: "actorH18", name: "Eve", skills } });
  test("real scripts pass: Arabic, Hebrew, Persian with ZWNJ, emoji ZWJ, combining marks", () => {
    for (const name of ["ظل الذئب", "שומר הסף", "می\u200cخواهم", "👩\u200d👩\u200d👧", "Cafe\u0301", "\u200fשלום\u200f"]) {
      check(validators.client["scene.aspect"], aspect(name), `scene.aspect ${JSON.stringify(name)}`);
    }
    check(validators.client["actor.sync"], actor({ "می\u200cخواهم": 2 }), "actor.sync Persian skill");
  });
  test("overrides, isolates, controls, ANSI escapes and invisible-only names fail the schema", () => {
    const bad = ["\u202e", "\u202eKcatta", "Good\u202aname", "\u2066x\u2069", "Null\u0000", "\u001b[31mRed", "Next\u0085", "Two\nlines", "\u200b\u200b", " ", "\u3164", "\ufeff"];
    for (const name of bad) {
      assert.equal(validators.client["scene.aspect"](aspect(name)), false, `scene.aspect ${JSON.stringify(name)}`);
    }
    assert.equal(validators.client["actor.sync"](actor({ "\u202eNotice": 2 })), false, "a skill key with an override");
  });
  test("free text keeps its line breaks", () => {
    check(validators.client["fate.spend"], { request_id: "r-h18", character_id: "a", purpose: "detail", text: "one\ntwo" }, "fate.spend");
    assert.equal(validators.client["fate.spend"]({ request_id: "r-h18", character_id: "a", purpose: "detail", text: "\u001b[2J" }), false);
  });
});

describe("odds before rolling (issue 8.7): what the module asks and shows", () => {
  test("the dialog's odds request matches the action.odds schema; an unrolled opposer asks nothing", async () => {
    const { oddsPayload, oddsRows, percent } = await import(path.join(MODULE_DIR, "scripts/cards/odds.mjs"));
    const actor = { id: "actorAthlete0001" };
    const payload = oddsPayload({ type: "overcome", skill: "Athletics", opposition: 4, helpers: [{ character_id: "actorHelper00001" }] }, actor);
    check(validators.client["action.odds"], { request_id: "r-odds", ...payload }, "action.odds");
    assert.equal(oddsPayload({ type: "overcome", skill: "Athletics", opposerId: "actorOgre0000001" }, actor), null);
    // R1.1: 15/81 and 16/81 shown exactly and as a percentage.
    assert.equal(percent(15, 81), "18.5%");
    const shown = oddsRows({ out_of: 81, fumble: 50, tie: 16, succeed: 14, excel: 1 }, "unwritten");
    assert.equal(shown.rows.find((r) => r.id === "tie").fraction, "16/81");
    assert.match(shown.success, /18\.5% to succeed or better \(15\/81\)/);
  });
});

describe("roll history and undo", () => {
  let history;
  before(async () => {
    history = await import(path.join(MODULE_DIR, "scripts/history/history.mjs"));
  });

  /** A history entry as the bridge sends it (validated against results/history_read.json). */
  function entry(overrides = {}) {
    const card = finishedCard();
    return {
      seq: 21, hash: card.event_hash, at: "2026-01-02T20:15:00+00:00", scene: 2, action_id: card.action_id,
      card_id: "w.act-1", kind: "create_advantage", action_type: card.action_type,
      requested_by: PLAYER.id, actor: card.actor, opposition: card.opposition, opposition_kind: "active", target: card.target,
      rolls: [
        { character: card.actor.leader, side: "actor", dice: [1, 1, 0, 0], reroll: false },
        { character: card.actor.leader, side: "actor", dice: [-1, 0, 0, 1], reroll: true },
        { character: card.opposition.leader, side: "opposition", dice: [-1, -1, -1, 0], reroll: false }
      ],
      invokes: card.invokes, shifts: 5, outcome: "excel", succeeded: true,
      costs: [{ severity: "minor", kind: "wrinkle", text: "The bridge creaks" }],
      effects: card.effects, undone: false, ...overrides
    };
  }

  test("an undone card shows it, and nobody gets controls on it (the GM took it back)", async () => {
    const card = workedCard({ state: "invoking", provisional: true, succeeded: null, undone: true, prompt: { kind: "invoke", users: [PLAYER.id], gm: true, options: [] } });
    check(validators.server.card, { seq: 40, world: "w", writer: "gm", op: "update", card_id: "card-undone", card }, "undone card emit");
    assert.equal(controls.controlsContext(bridge, card), null);
    const message = await cards.handleCardEmit(bridge, { seq: 40, world: "w", writer: GM.id, op: "create", card_id: "card-undone", card });
    assert.ok(message.element.querySelector(".fate-bridge-card--undone"));
    assert.match(message.element.querySelector(".fate-bridge-card__undone").textContent, /took this back/);
    assert.equal(message.element.querySelector(".fate-bridge-tag--undone").textContent, "undone");
  });

  test("history entries read as the table saw them: dice, rerolls, who paid, costs, event and hash", () => {
    const page = { entries: [entry(), entry({ seq: 15, undone: true })], next_before: 15, last_seq: 30 };
    check(validators.results["history.read"], page, "history.read answer");
    const gm = history.historyContext({ page, stats: null, filters: {}, statsFor: "", error: null, newer: false, loading: false }, { isGM: true, characters: [] });
    const [view, undone] = gm.entries;
    assert.equal(view.title, "Zird the Arcane: Create an Advantage (Athletics)");
    assert.equal(view.versus, "Epic +7 vs Grumpy Ogre Fair +2");
    assert.deepEqual(view.rolls.map((r) => [r.who, r.reroll, r.dice.map((d) => d.face)]), [
      ["Zird the Arcane", false, [1, 1, 0, 0]], ["Zird the Arcane", true, [-1, 0, 0, 1]], ["Grumpy Ogre", false, [-1, -1, -1, 0]]
    ]);
    assert.equal(view.invokes[0], "Zird the Arcane invoked Wizard of the Old School for +2 (fate point)");
    assert.deepEqual(view.costs, ["Minor cost: The bridge creaks"]);
    assert.equal(view.eventLabel, "Event #21");
    assert.equal(view.hashShort, entry().hash.slice(0, 10));
    assert.equal(view.scene, "scene 2");
    assert.equal(view.canUndo, true);
    assert.equal(undone.canUndo, false, "what is undone is not undone twice");
    assert.equal(gm.older, true);
    const player = history.historyContext({ page, stats: null, filters: {}, statsFor: "", error: null, newer: false, loading: false }, { isGM: false, characters: [] });
    assert.equal(player.entries.some((e) => e.canUndo), false, "only the GM undoes");
  });

  test("a roll the GM cancelled reads as cancelled: its dice, invokes, refunds and reason stay, no outcome, tagged by the window's template", async () => {
    // R1.1: the roll stays on the record; R4.2 the refund of its fate-point invoke is listed.
    const zirdRef = entry().actor.leader;
    const called = entry({
      seq: 30, cancelled: true, outcome: null, succeeded: null, shifts: null, costs: [],
      effects: [
        { kind: "refund", text: "Wizard of the Old School", count: 1, character: zirdRef, aspect_id: "asp1", detail: "fate_point", cause: null },
        { kind: "cancelled", text: "Wrong skill", count: 0, character: null, aspect_id: null, detail: "", cause: null }
      ]
    });
    // An older bridge's entry has no `cancelled` field: it is a resolution.
    const older = entry({ seq: 12 });
    delete older.cancelled;
    const page = { entries: [called, entry(), older], next_before: null, last_seq: 31 };
    check(validators.results["history.read"], page, "history.read answer with a cancelled roll");
    const ctx = history.historyContext({ page, stats: null, filters: { rolls: "cancelled" }, statsFor: "", error: null, newer: false, loading: false }, { isGM: false, characters: [] });
    const [view, resolved, old] = ctx.entries;
    assert.equal(view.cancelled, true);
    assert.equal(view.outcome, "cancelled");
    assert.equal(view.outcomeLabel, "");
    assert.equal(view.shifts, "");
    assert.deepEqual(view.rolls.map((r) => r.dice.map((d) => d.face)), [[1, 1, 0, 0], [-1, 0, 0, 1], [-1, -1, -1, 0]]);
    assert.equal(view.invokes[0], "Zird the Arcane invoked Wizard of the Old School for +2 (fate point)");
    assert.deepEqual(view.effects, ["Zird the Arcane gets back what the invoke on Wizard of the Old School cost", "The GM cancelled this action: Wrong skill"]);
    assert.equal(resolved.cancelled, false);
    assert.equal(old.cancelled, false);
    assert.equal(old.outcome, "excel");
    assert.deepEqual(ctx.rollStates.map((r) => [r.id, r.selected]), [["cancelled", true], ["resolved", false]]);

    const { renderTemplate } = await import(path.join(MODULE_DIR, "scripts/foundry/compat.mjs"));
    const { HISTORY_TEMPLATE } = await import(path.join(MODULE_DIR, "scripts/history/window.mjs"));
    const holder = document.createElement("div");
    holder.innerHTML = await renderTemplate(HISTORY_TEMPLATE, ctx);
    const items = [...holder.querySelectorAll(".fate-bridge-entry")];
    assert.equal(items.length, 3);
    assert.ok(items[0].classList.contains("fate-bridge-entry--cancelled"));
    assert.equal(items[0].querySelector(".fate-bridge-tag--cancelled").textContent, "cancelled");
    assert.equal(items[0].querySelectorAll(".fate-bridge-die").length, 12, "all three rolls' dice");
    assert.match(items[0].querySelector(".fate-bridge-entry__effects").textContent, /cancelled this action: Wrong skill/);
    assert.equal(items[1].querySelector(".fate-bridge-tag--cancelled"), null);
    assert.ok(!items[1].classList.contains("fate-bridge-entry--cancelled"));
    assert.equal(holder.querySelector('select[name="rolls"] option[selected]').value, "cancelled");
  });

  test("the window's rolls filter asks the bridge for cancelled rolls, resolutions, or both, as valid history.read intents", async () => {
    const saved = bridge.connection;
    const sent = [];
    bridge.connection = { connected: true, call: async (event, payload) => { sent.push(payload); return { ok: true, data: { entries: [], next_before: null, last_seq: 0 } }; } };
    try {
      await history.readHistory(bridge, { rolls: "cancelled", kind: "overcome" });
      await history.readHistory(bridge, { rolls: "resolved" });
      await history.readHistory(bridge, { rolls: "" });
      await history.readHistory(bridge, { rolls: "juggle" });
      await history.readHistory(bridge, { cancelled: true });
    } finally {
      bridge.connection = saved;
    }
    assert.deepEqual(sent, [{ kind: "overcome", cancelled: true }, { cancelled: false }, {}, {}, { cancelled: true }]);
    for (const payload of sent) check(validators.client["history.read"], { request_id: "r-h", ...payload }, "history.read");
  });

  test("the 4dF chart: each sum's share of the rolls beside its expected share (R1.1)", () => {
    const expected = [1, 4, 10, 16, 19, 16, 10, 4, 1].map((w) => w / 81);
    const chart = history.chartView({ rolls: 4, counts: [0, 0, 1, 0, 2, 0, 0, 1, 0], expected, mean: 0.25 });
    assert.equal(chart.bars.length, 9);
    assert.deepEqual(chart.bars.map((b) => b.sum), ["\u22124", "\u22123", "\u22122", "\u22121", "0", "+1", "+2", "+3", "+4"]);
    assert.equal(chart.bars[4].rolled, 60, "the tallest share fills the chart");
    assert.equal(chart.bars[2].rolled, 30);
    assert.ok(chart.bars[4].expected > chart.bars[3].expected && chart.bars[3].expected > chart.bars[0].expected);
    assert.match(chart.summary, /4 rolls, mean 0\.25/);
    assert.match(chart.bars[4].title, /2 rolls, 50% \(expected 23%\)/);
    // The dice of cancelled rolls are among the rolls; the summary says how many.
    const withCancelled = history.chartView({ rolls: 4, counts: [0, 0, 1, 0, 2, 0, 0, 1, 0], expected, mean: 0.25, cancelled: 1 });
    assert.match(withCancelled.summary, /4 rolls \(1 cancelled by the GM\), mean 0\.25/);
    assert.deepEqual(withCancelled.bars.map((b) => b.count), chart.bars.map((b) => b.count));
    const empty = history.chartView({ rolls: 0, counts: Array(9).fill(0), expected, mean: null });
    assert.equal(empty.bars.every((b) => b.rolled === 0), true);
    assert.match(empty.summary, /0 rolls, mean \u2014/);
  });

  test("a refused history call rejects with the bridge's error; offline rejects too", async () => {
    await assert.rejects(history.readHistory(bridge, { limit: 5 }), (err) => err.name === "BridgeError" && err.code === "offline");
    const saved = bridge.connection;
    bridge.connection = { connected: true, call: async () => ({ ok: false, error: { code: "scene_ended", message: "The scene ended at event 9.", field: "back_to" } }) };
    try {
      // Said from the code and field in the user's language, not the bridge's English message.
      await assert.rejects(history.undo(bridge, { backTo: 3 }), (err) => err.code === "scene_ended" && err.field === "back_to" && err.message === "That scene has ended. (back_to)");
    } finally {
      bridge.connection = saved;
    }
  });
});

describe("the scene read and the frames beside it", () => {
  test("a scene.read answer does not overwrite a scene.state that came while the read was under way", async () => {
    const saved = bridge.connection;
    const base = bridge.scene.current ?? { gm_fate_points: 0, aspects: [] };
    const seq = 1_000_000;
    try {
      // No frame meanwhile: the answer is the scene.
      bridge.connection = { connected: true, call: async () => ({ ok: true, data: { ...base, gm_fate_points: 1 } }) };
      assert.equal((await bridge.readScene()).gm_fate_points, 1);
      assert.equal(bridge.scene.current.gm_fate_points, 1);
      // A frame (the budget set to 3) lands before the read's answer, which was made earlier.
      bridge.connection = {
        connected: true,
        call: async () => {
          await bridge.scene.handle({ seq, writer: "gm", state: { ...base, gm_fate_points: 3 } }, { activeGM: false });
          return { ok: true, data: { ...base, gm_fate_points: 0 } };
        }
      };
      assert.equal((await bridge.readScene()).gm_fate_points, 3);
      assert.equal(bridge.scene.current.gm_fate_points, 3);
      // An older frame after it changes nothing either.
      await bridge.scene.handle({ seq: seq - 1, writer: "gm", state: { ...base, gm_fate_points: 0 } }, { activeGM: false });
      assert.equal(bridge.scene.current.gm_fate_points, 3);
    } finally {
      bridge.connection = saved;
    }
  });
});
