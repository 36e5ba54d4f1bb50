// R13.1 in the world's language: fate-core-official names a Fate Accelerated character's
// approaches from its own translation (game.system.lang `FateAcceleratedDefaultSkills`: de.json
// "Sorgfältig"…, es.json "Cauto"…). The module's FCO adapter knows them as the approaches the
// bridge rolls (Careful…Sneaky) and shows them from the module's language files. The module's
// real code against the fake Foundry with FCO's real German and Spanish lists; no bridge process.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { readJson } from "./support/node-foundry.mjs";
import { bootOfflineFoundry } from "./support/offline-foundry.mjs";
import { check } from "./support/schemas.mjs";

const GM = { id: "r13aGmUser00001", name: "Gamemaster", isGM: true };
const APPROACHES = ["Careful", "Clever", "Flashy", "Forceful", "Quick", "Sneaky"];
const ACCELERATED = { ruleset: "fate-accelerated", actions: [{ id: "overcome" }], rules: { id: "fate-accelerated", approaches: APPROACHES } };

/** FCO's names of the six approaches in its translation, in the English order. */
const localNames = (systemLang) => Object.values(systemLang.FateAcceleratedDefaultSkills).map((s) => s.name);

/** A character as FCO stores one set up in `systemLang`: the approaches keyed and named by its
 * translation, one skill that is not an approach, and a stunt linked to an approach. */
function character(id, name, systemLang, ranks, extra) {
  const skills = {};
  localNames(systemLang).forEach((n, i) => { skills[n] = { name: n, rank: ranks[i] }; });
  skills[extra] = { name: extra, rank: 4 };
  const quick = localNames(systemLang)[4];
  return {
    _id: id,
    name,
    type: "fate-core-official",
    ownership: { default: 0 },
    system: {
      details: { fatePoints: { current: 3, refresh: 3, boosts: 0 } },
      skills,
      aspects: {},
      stunts: { Windhund: { name: "Windhund", linked_skill: quick, bonus: 2, overcome: true, caa: false, attack: false, defend: false } },
      tracks: {}
    }
  };
}

for (const [language, extra] of [["de", "Athletik"], ["es", "Atletismo"]]) {
  describe(`R13.1: fate-core-official's ${language} approaches are the bridge's approaches`, () => {
    test(`FCO's ${language} approach names map to Careful…Sneaky; other skills keep their names; English alone maps only English`, async () => {
      const systemLang = await readJson(`tests/js/fixtures/fco-lang-${language}.json`);
      const { modules } = await bootOfflineFoundry({ users: [GM], language, systemLang }, ["adapters/fco-frameworks"]);
      const { approachAliases, canonicalSkill } = modules["adapters/fco-frameworks"];
      const names = localNames(systemLang);
      assert.equal(names.length, 6);
      assert.deepEqual(names.map((n) => canonicalSkill(n)), APPROACHES);
      assert.deepEqual(APPROACHES.map((n) => canonicalSkill(n)), APPROACHES, "English names stay themselves");
      assert.equal(canonicalSkill(extra), extra);
      assert.equal(canonicalSkill(names[0], null), names[0], "without FCO's translation nothing but English maps");
      assert.deepEqual(new Set(approachAliases().values()), new Set(APPROACHES));
    });

    test(`a ${language} Fate Accelerated character syncs its approaches by the bridge's names, and the roll dialog offers them in ${language}`, async () => {
      const systemLang = await readJson(`tests/js/fixtures/fco-lang-${language}.json`);
      const hero = character("r13aHero0000001", "Heldin", systemLang, [3, 2, 1, 1, 2, 0], extra);
      const rival = character("r13aRival000001", "Rivale", systemLang, [1, 1, 2, 3, 0, 2], extra);
      const { foundry, validators, modules } = await bootOfflineFoundry({ users: [GM], language, systemLang, actors: [hero, rival] }, ["adapters/fate-core-official", "actions/roll-dialog", "net/bridge", "foundry/format"]);
      const { game } = foundry;
      const fco = modules["adapters/fate-core-official"];
      const data = fco.toActorData(game.actors.get(hero._id));
      check(validators.client["actor.sync"], { request_id: "r13a-sync", actor: data }, "actor.sync");
      assert.deepEqual(data.skills, { Careful: 3, Clever: 2, Flashy: 1, Forceful: 1, Quick: 2, Sneaky: 0, [extra]: 4 });
      assert.deepEqual(data.stunts.map((s) => [s.name, s.skill]), [["Windhund", "Quick"]], "a stunt's linked approach is the approach");
      assert.equal(fco.sheetSkill(localNames(systemLang)[1]), "Clever");

      const bridge = new modules["net/bridge"].Bridge();
      bridge.hello = ACCELERATED;
      const ctx = modules["actions/roll-dialog"].dialogContext(bridge, { actor: game.actors.get(hero._id), skill: "Flashy" });
      assert.deepEqual(ctx.skills.map((s) => s.name).sort(), APPROACHES, "the six approaches, no other skill");
      const label = Object.fromEntries(ctx.skills.map((s) => [s.name, s.label]));
      localNames(systemLang).forEach((local, i) => {
        // The module's lang file names each approach as FCO's sheet in this language does.
        assert.equal(modules["foundry/format"].skillName(APPROACHES[i]), local);
        assert.ok(label[APPROACHES[i]].startsWith(`${local} `), `${label[APPROACHES[i]]} names ${local}`);
      });
      assert.ok(!ctx.skills.some((s) => s.name === extra || s.label.includes(extra)));
      assert.equal(ctx.skills.find((s) => s.selected)?.name, "Flashy");
      const helper = ctx.helpers.find((h) => h.id === rival._id);
      assert.deepEqual(helper.skills.map((s) => s.name).sort(), APPROACHES, "a helper's list: the approaches");
      assert.ok(helper.skills.every((s) => localNames(systemLang).some((n) => s.label.startsWith(`${n} `))));
      // The scene panel's contest names the approach in this language, and so does the bridge's
      // refusal of another skill (its parameters: the approaches by the bridge's names).
      const quick = localNames(systemLang)[4];
      const { contestFacts } = await import("../../foundry-module/scripts/scene/cards.mjs");
      assert.ok(contestFacts({ mode: "direct", skill: "Quick", target: 3 }).includes(quick));
      const why = modules["foundry/format"].refusalText({ code: "not_an_approach", field: "skill", params: { reason: "not_an_approach", ruleset: "Fate Accelerated", approaches: APPROACHES.join(", "), rating: extra } });
      assert.ok(why.includes(localNames(systemLang).join(", ")), why);
      assert.ok(why.includes(extra), why);
      // Under a ruleset of skills the sheet's skills are offered as they are.
      assert.ok(extra in modules["actions/roll-dialog"].rollableRatings(game.actors.get(hero._id), null));
    });
  });
}

describe("R13.1 in an English world", () => {
  test("the approaches keep their English names on the wire and in the dialog", async () => {
    const systemLang = { FateAcceleratedDefaultSkills: Object.fromEntries(APPROACHES.map((n) => [n, { name: n }])) };
    const hero = character("r13aHeroEn00001", "Heroine", systemLang, [3, 2, 1, 1, 2, 0], "Athletics");
    const { foundry, modules } = await bootOfflineFoundry({ users: [GM], systemLang, actors: [hero] }, ["adapters/fate-core-official", "actions/roll-dialog", "net/bridge"]);
    const data = modules["adapters/fate-core-official"].toActorData(foundry.game.actors.get(hero._id));
    assert.deepEqual(data.skills, { Careful: 3, Clever: 2, Flashy: 1, Forceful: 1, Quick: 2, Sneaky: 0, Athletics: 4 });
    const bridge = new modules["net/bridge"].Bridge();
    bridge.hello = ACCELERATED;
    const ctx = modules["actions/roll-dialog"].dialogContext(bridge, { actor: foundry.game.actors.get(hero._id) });
    assert.deepEqual(ctx.skills.map((s) => s.label.split(" ")[0]).sort(), APPROACHES);
  });
});
