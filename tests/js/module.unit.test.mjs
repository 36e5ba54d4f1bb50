// Unit tests of the module's real code against the fake Foundry (no bridge process).
import assert from "node:assert/strict";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { before, describe, test } from "node:test";
import { MODULE_DIR, bootNodeFoundry, readJson, setField, waitFor } from "./support/node-foundry.mjs";
import { check, loadValidators } from "./support/schemas.mjs";

const GM = { id: "gmUser000000001", name: "Gamemaster", isGM: true };
const PLAYER = { id: "playerUser00001", name: "Player", isGM: false };

/** The worked example as the bridge sends it (validated against schemas/server/card.json below). */
function workedCard(overrides = {}) {
  return {
    kind: "action",
    action_id: "act-1",
    ruleset: "unwritten",
    action_type: "overcome",
    action_label: "Overcome",
    state: "resolved",
    actor: { id: "actorAthlete0001", name: "Zird the Arcane" },
    skill: "Athletics",
    skill_rating: { value: 3, label: "Good" },
    dice: [1, 1, 0, 0],
    dice_total: 2,
    total: { value: 5, label: "Superb" },
    opposition: { value: 4, label: "Great" },
    opposition_kind: "passive",
    shifts: 1,
    outcome: "succeed",
    outcome_label: "Succeed",
    description: null,
    boost: null,
    event_seq: 7,
    event_hash: "9f2c4e11aa0b7d3e5f60718293a4b5c6d7e8f90112233445566778899aabbccd",
    ...overrides
  };
}

let foundry;
let validators;
let cards;
let sheet;
let adapters;

before(async () => {
  validators = await loadValidators();
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
  }, { io: () => { throw new Error("no connection in unit tests"); } });
  // Foundry's start sequence without connecting: ready would connect, so fire init only.
  foundry.Hooks.callAll("init");
  cards = await import(path.join(MODULE_DIR, "scripts/cards.mjs"));
  sheet = await import(path.join(MODULE_DIR, "scripts/sheet.mjs"));
  adapters = await import(path.join(MODULE_DIR, "scripts/adapters/index.mjs"));
});

describe("manifest and assets", () => {
  test("module.json declares what Foundry needs and no system restriction", async () => {
    const manifest = await readJson("foundry-module/module.json");
    assert.equal(manifest.id, "fate-bridge");
    assert.equal(manifest.title, "Fate Bridge");
    assert.equal(manifest.version, "0.1.0");
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
    for (const dir of ["scripts", "scripts/adapters", "templates"]) {
      for (const f of await readdir(path.join(MODULE_DIR, dir))) if (/\.(mjs|hbs)$/.test(f)) files.push(path.join(MODULE_DIR, dir, f));
    }
    const used = new Set();
    for (const f of files) for (const m of (await readFile(f, "utf8")).matchAll(/FATEBRIDGE(?:\.[A-Za-z0-9_-]+)+/g)) used.add(m[0]);
    // keys built from a variable part
    for (const s of ["connected", "connecting", "offline", "refused"]) used.add(`FATEBRIDGE.Status.${s}`);
    for (const r of ["bad_key", "unknown_world", "protocol_mismatch", "invalid_auth", "role"]) used.add(`FATEBRIDGE.Status.Reason.${r}`);
    for (const s of ["rolled", "invoking", "choosing", "resolved"]) used.add(`FATEBRIDGE.Card.State.${s}`);
    for (let v = -2; v <= 8; v++) used.add(`FATEBRIDGE.Ladder.${v}`);
    const missing = [...used].filter((k) => typeof k.split(".").reduce((o, p) => o?.[p], lang) !== "string");
    // prefixes of keys built at run time are not keys themselves
    const realMissing = missing.filter((k) => !["FATEBRIDGE.Status", "FATEBRIDGE.Card.State", "FATEBRIDGE.Ladder", "FATEBRIDGE.Status.Reason"].includes(k));
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

  test("the api is published on the module", () => {
    const api = foundry.game.modules.get("fate-bridge").api;
    assert.equal(typeof api.roll, "function");
    assert.equal(api.PROTOCOL_VERSION, 1);
    assert.equal(api.status.state, "offline");
  });
});

describe("adapters", () => {
  test("fate-core-official maps system.skills ranks; unusable ranks are left out", () => {
    const actor = foundry.game.actors.get("actorAthlete0001");
    const data = adapters.adapterFor("fate-core-official").toActorData(actor);
    assert.deepEqual(data, {
      id: "actorAthlete0001",
      name: "Zird the Arcane",
      owners: [GM.id, PLAYER.id].sort(),
      skills: { Athletics: 3, Lore: 4 }
    });
    check(validators.client["actor.sync"], { request_id: "r-1", actor: data }, "actor.sync");
  });

  test("generic reads flags['fate-bridge'].skills", () => {
    const actor = new Actor({ _id: "genericActor0001", name: "Ann", flags: { "fate-bridge": { skills: { Fight: 2, Bad: 99, Notice: "1" } } } });
    const data = adapters.adapterFor("dnd5e").toActorData(actor);
    assert.deepEqual(data.skills, { Fight: 2, Notice: 1 });
    check(validators.client["actor.sync"], { request_id: "r-2", actor: data }, "actor.sync");
  });
});

describe("chat cards", () => {
  test("the fixture card matches the bridge's card schema", () => {
    check(validators.server.card, { seq: 7, world: "w", writer: GM.id, op: "create", card_id: "card-1", card: workedCard() }, "card emit");
  });

  test("the writer creates one message with the bridge's dice as a pre-evaluated 4dF roll", async () => {
    const before = foundry.log.created.length;
    const emit = { seq: 7, world: "w", writer: GM.id, op: "create", card_id: "card-1", card: workedCard() };
    const message = await cards.handleCardEmit(emit);
    assert.equal(foundry.log.created.length, before + 1);
    assert.deepEqual(message.flags["fate-bridge"], { cardId: "card-1", seq: 7, card: emit.card });
    assert.equal(message.speaker.actor, "actorAthlete0001");
    const [roll] = message.rolls;
    assert.equal(roll.total, 5);
    assert.equal(roll.formula, "4dF + 3");
    assert.deepEqual(roll.dice[0].results.map((r) => r.result), [1, 1, 0, 0]);
    assert.equal(roll.terms[2].number, 3);
    const html = message.element;
    assert.equal(html.querySelector(".fate-bridge-card__actor").textContent, "Zird the Arcane");
    assert.match(html.querySelector(".fate-bridge-card__skill").textContent, /Athletics\s+Good \(\+3\)/);
    assert.deepEqual([...html.querySelectorAll(".fate-bridge-die")].map((d) => d.dataset.face), ["1", "1", "0", "0"]);
    assert.match(html.querySelector(".fate-bridge-card__cell--total").textContent, /Superb\s+\+5/);
    assert.match(html.querySelector(".fate-bridge-card__cell--opposition").textContent, /Great\s+\+4/);
    assert.equal(html.querySelector(".fate-bridge-card__cell--shifts dd").textContent.trim(), "+1");
    assert.equal(html.querySelector(".fate-bridge-card__outcome").textContent, "Succeed");
    assert.ok(html.querySelector(".fate-bridge-card--succeed"));
    assert.ok(html.classList.contains("fate-bridge-message"), "renderChatMessageHTML hook decorates the message");
    assert.match(html.querySelector(".fate-bridge-card__footer").textContent, /Event #7/);
  });

  test("a replayed emit changes nothing; a newer update edits the same message", async () => {
    const before = foundry.log.created.length;
    const again = await cards.handleCardEmit({ seq: 7, world: "w", writer: GM.id, op: "create", card_id: "card-1", card: workedCard() });
    assert.equal(again, null);
    const updated = await cards.handleCardEmit({
      seq: 9, world: "w", writer: GM.id, op: "update", card_id: "card-1",
      card: workedCard({ state: "choosing", dice: [-1, -1, 0, 0], dice_total: -2, total: { value: 1, label: "Average" }, shifts: -3, outcome: "fumble", outcome_label: "Fumble", event_seq: 9 })
    });
    assert.equal(foundry.log.created.length, before);
    assert.equal(updated.flags["fate-bridge"].seq, 9);
    assert.deepEqual(updated.rolls[0].dice[0].results.map((r) => r.result), [-1, -1, 0, 0]);
    assert.equal(updated.element.querySelector(".fate-bridge-card__state").textContent, "Awaiting choice");
    assert.ok(updated.element.querySelector(".fate-bridge-card--fumble"));
    assert.equal(foundry.game.messages.filter((m) => m.flags["fate-bridge"]?.cardId === "card-1").length, 1);
  });

  test("concurrent live and replayed emits of one card create one message", async () => {
    const emit = { seq: 11, world: "w", writer: GM.id, op: "create", card_id: "card-2", card: workedCard({ event_seq: 11 }) };
    await Promise.all([cards.handleCardEmit(emit), cards.handleCardEmit(structuredClone(emit))]);
    assert.equal(foundry.game.messages.filter((m) => m.flags["fate-bridge"]?.cardId === "card-2").length, 1);
  });

  test("other clients do not write", async () => {
    const before = foundry.log.created.length;
    const result = await cards.handleCardEmit({ seq: 12, world: "w", writer: PLAYER.id, op: "create", card_id: "card-3", card: workedCard() });
    assert.equal(result, null);
    assert.equal(foundry.log.created.length, before);
  });

  test("excel shows the boost; a negative rating becomes 4dF - n", async () => {
    const message = await cards.handleCardEmit({
      seq: 13, world: "w", writer: GM.id, op: "create", card_id: "card-4",
      card: workedCard({ skill_rating: { value: -1, label: "Poor" }, dice: [1, 1, 1, 1], dice_total: 4, total: { value: 3, label: "Good" }, opposition: { value: 0, label: "Mediocre" }, shifts: 3, outcome: "excel", outcome_label: "Excel", boost: { id: "b1", name: "Momentum", holder_id: "actorAthlete0001" } })
    });
    assert.equal(message.rolls[0].formula, "4dF - 1");
    assert.equal(message.rolls[0].total, 3);
    assert.match(message.element.querySelector(".fate-bridge-card__boost").textContent, /Momentum/);
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

  test("the roll dialog offers the ladder -2..+8 with Fair (+2) selected and always passes rejectClose", async () => {
    // Not connected: rolling from the API warns instead of opening a dialog.
    const api = foundry.game.modules.get("fate-bridge").api;
    const result = await api.roll("actorAthlete0001", "Athletics", { opposition: 4 });
    assert.equal(result, null);
    assert.match(foundry.log.notifications.at(-1).message, /not connected/);
    // The dialog itself.
    const { askOpposition } = await import(path.join(MODULE_DIR, "scripts/roll-dialog.mjs"));
    const answer = askOpposition({ actorName: "Zird", skill: "Athletics", rating: 3 });
    const dialog = await waitFor(() => foundry.openDialogs()[0], { what: "dialog" });
    assert.equal(dialog.config.rejectClose, false);
    assert.equal(dialog.title, "Overcome with Athletics (+3)");
    const options = [...dialog.element.querySelectorAll("select[name=opposition] option")];
    assert.deepEqual(options.map((o) => Number(o.value)), [8, 7, 6, 5, 4, 3, 2, 1, 0, -1, -2]);
    assert.equal(options.find((o) => o.value === "4").textContent, "Great (+4)");
    assert.equal(options.find((o) => o.value === "-2").textContent, "Terrible (\u22122)");
    assert.equal(dialog.element.querySelector("select[name=opposition]").value, "2");
    setField(dialog.element.querySelector("select[name=opposition]"), "4");
    setField(dialog.element.querySelector("input[name=description]"), "  vault the wall ");
    dialog.element.querySelector('button[data-action="roll"]').click();
    assert.deepEqual(await answer, { opposition: 4, description: "vault the wall" });
  });

  test("cancelling the roll dialog resolves to null", async () => {
    const { askOpposition } = await import(path.join(MODULE_DIR, "scripts/roll-dialog.mjs"));
    const answer = askOpposition({ actorName: "Zird", skill: "Lore", rating: 4 });
    const dialog = await waitFor(() => foundry.openDialogs()[0], { what: "dialog" });
    dialog.element.querySelector('button[data-action="cancel"]').click();
    assert.equal(await answer, null);
  });

  test("the generic panel lists flag skills and lets an owner add one", async () => {
    const actor = new Actor({ _id: "genericActor0002", name: "Bea", flags: { "fate-bridge": { skills: { Notice: 1, Fight: 3 } } }, ownership: { default: 0 } });
    foundry.game.actors.set(actor.id, actor);
    const root = document.createElement("div");
    root.innerHTML = '<section class="window-content"><p>sheet</p></section>';
    await sheet.injectPanel(root, actor);
    const rows = [...root.querySelectorAll(".fate-bridge-panel__skill")];
    assert.deepEqual(rows.map((r) => r.dataset.skill), ["Fight", "Notice"]);
    assert.match(rows[0].textContent, /\+3\s+Fight\s+Good \(\+3\)/);
    assert.equal(root.querySelectorAll(".fate-bridge-panel .fate-bridge-roll").length, 2);
    await sheet.injectPanel(root, actor);
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
    const { ConnectionManager } = await import(path.join(MODULE_DIR, "scripts/connection.mjs"));
    const c = new ConnectionManager({ url: "http://x", world: "w", role: "gm", user: "u", baseDelay: 100, maxDelay: 1000 });
    const delays = Array.from({ length: 8 }, () => c.nextDelay());
    const steps = [100, 200, 400, 800, 1000, 1000, 1000, 1000];
    delays.forEach((d, i) => assert.ok(d >= steps[i] / 2 && d <= steps[i], `delay ${i} = ${d} outside [${steps[i] / 2}, ${steps[i]}]`));
  });
});
