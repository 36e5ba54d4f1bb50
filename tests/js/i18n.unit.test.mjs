// Every language fate-core-official ships (issue 34): the module's whole text in each, the
// refusals said from their codes, and the ruleset proposal in the world's language. The
// module's real files against the fake Foundry; no bridge process.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { readJson } from "./support/node-foundry.mjs";
import { bootOfflineFoundry } from "./support/offline-foundry.mjs";

const GM = { id: "i18nGmUser00001", name: "Gamemaster", isGM: true };

/** Every leaf of a language file by its dotted key. */
function flatten(tree, prefix = "") {
  const out = {};
  for (const [key, value] of Object.entries(tree)) {
    if (value && typeof value === "object") Object.assign(out, flatten(value, `${prefix}${key}.`));
    else out[`${prefix}${key}`] = value;
  }
  return out;
}

const placeholders = (text) => [...String(text).matchAll(/\{([^}]+)\}/g)].map((m) => m[1]).sort();

/**
 * What a language file gets wrong against English: keys it lacks, keys English lacks, a
 * sentence that is not a string or is blank, and placeholders it changed.
 * @returns {string[]}
 */
export function languageProblems(english, other) {
  const en = flatten(english);
  const it = flatten(other);
  const problems = [];
  for (const key of Object.keys(en)) if (!(key in it)) problems.push(`missing ${key}`);
  for (const key of Object.keys(it)) if (!(key in en)) problems.push(`extra ${key}`);
  for (const [key, text] of Object.entries(it)) {
    if (!(key in en)) continue;
    if (typeof text !== "string" || !text.trim()) problems.push(`empty ${key}`);
    else if (placeholders(text).join() !== placeholders(en[key]).join()) problems.push(`placeholders ${key}: {${placeholders(text).join("},{")}} for {${placeholders(en[key]).join("},{")}}`);
  }
  return problems;
}

describe("every language fate-core-official ships", () => {
  test("the manifest lists fate-core-official 4.7's languages, each file has every key of en.json, no other, and the same placeholders", async () => {
    const manifest = await readJson("foundry-module/module.json");
    // fate-core-official 4.7.14's system.json `languages`: en, de, es, pt-BR.
    assert.deepEqual(manifest.languages.map((l) => l.lang).sort(), ["de", "en", "es", "pt-BR"]);
    const english = await readJson("foundry-module/lang/en.json");
    for (const { lang, path: file, name } of manifest.languages) {
      assert.ok(name, lang);
      const other = await readJson(`foundry-module/${file}`);
      assert.deepEqual(languageProblems(english, other), [], lang);
    }
  });

  test("a language file with a missing placeholder, a missing key or an extra key is caught", async () => {
    const english = await readJson("foundry-module/lang/en.json");
    const german = await readJson("foundry-module/lang/de.json");
    const broken = structuredClone(german);
    broken.FATEBRIDGE.Card.Effect.boost = "{who} erhält einen Schub";
    delete broken.FATEBRIDGE.Card.Against;
    broken.FATEBRIDGE.Card.Extra = "nur auf Deutsch";
    assert.deepEqual(languageProblems(english, broken).sort(), [
      "extra FATEBRIDGE.Card.Extra",
      "missing FATEBRIDGE.Card.Against",
      "placeholders FATEBRIDGE.Card.Effect.boost: {who} for {text},{who}"
    ]);
  });
});

describe("refusals and words from ids, in the user's language", () => {
  test("German: refusals from code and field, never the bridge's English; an unknown code shows its code and field; ladder, actions, outcomes", async () => {
    const { foundry, modules } = await bootOfflineFoundry({ users: [GM], language: "de" }, ["foundry/format"]);
    const { refusalText, ratedText, actionName, outcomeName, whoName } = modules["foundry/format"];
    assert.equal(foundry.game.i18n.lang, "de");
    const english = "Borin is not taking part in this action.";
    assert.equal(refusalText({ code: "no_fate_points", message: english }), "Nicht genug Schicksalspunkte.");
    assert.equal(refusalText({ code: "forbidden", field: "character_id", message: english }), "Das darfst du nicht. (character_id)");
    // A code this module does not know (a newer bridge's): the code and the field, not nothing.
    assert.equal(refusalText({ code: "ally_not_in_scene", field: "invoker", message: english }), "Die Bridge hat abgelehnt: ally_not_in_scene (invoker)");
    assert.equal(refusalText({ code: "ally_not_in_scene", message: english }), "Die Bridge hat abgelehnt: ally_not_in_scene");
    // A refusal with a sentence of its own (its reason) is said in full, its parameters filled.
    assert.equal(refusalText({ code: "invalid", field: "consequences", params: { reason: "absorb_short", hit: 2, absorbed: 1 }, message: "The hit is 2 shifts; that absorbs only 1." }), "Der Treffer hat 2 Erfolgsstufen; das fängt nur 1 ab.");
    assert.equal(refusalText({ code: "forbidden", params: { reason: "act_for", name: "Borin" } }), "Du darfst nicht für Borin handeln.");
    // An action's state in the card's words.
    assert.equal(refusalText({ code: "wrong_state", field: "action_id", params: { reason: "action_state", state: "resolved" } }), "Das geht jetzt nicht (die Aktion: Abgeschlossen).");
    // A reason this module does not know falls back to its code's sentence.
    assert.equal(refusalText({ code: "forbidden", params: { reason: "ally_elsewhere" } }), "Das darfst du nicht.");
    assert.equal(refusalText(null), "Die Bridge ist an dieser Anfrage gescheitert; nichts wurde geändert.");
    assert.equal(ratedText({ value: 4 }), "Großartig +4");
    assert.equal(ratedText({ value: -3 }), "\u22123");
    assert.equal(actionName("create_advantage"), "Vorteil erschaffen");
    assert.equal(outcomeName("excel", "fate-core"), "Erfolg mit Stil");
    assert.equal(outcomeName("excel", "unwritten"), "Glanzleistung");
    // The bridge names the GM "GM" where it is a character (an invoke's payer): the reader's word.
    assert.equal(whoName({ id: "gm", name: "GM" }), "SL");
    assert.equal(whoName({ id: "actorZird0000001", name: "Zird the Arcane" }), "Zird the Arcane");
    // Foundry's i18n: {name} filled, a placeholder without data left as written, a missing key
    // read as itself.
    assert.equal(foundry.game.i18n.format("FATEBRIDGE.Card.Against", { name: "Zird" }), "gegen Zird");
    assert.equal(foundry.game.i18n.format("FATEBRIDGE.Card.Against", {}), "gegen {name}");
    assert.equal(foundry.game.i18n.localize("FATEBRIDGE.No.Such.Key"), "FATEBRIDGE.No.Such.Key");
  });
});

describe("the ruleset proposal in the world's language (R13.9)", () => {
  const FRAMEWORKS = { "fate-core": "FateCore", "fate-condensed": "FateCondensed", "fate-accelerated": "FateAccelerated", "dresden-files-accelerated": "DresdenFilesAccelerated" };

  for (const language of ["de", "es"]) {
    test(`fate-core-official's ${language} default lists are recognised as their framework; in English alone they are not`, async () => {
      // FCO fills a world's lists from game.system.lang (its lang/<language>.json).
      const systemLang = await readJson(`tests/js/fixtures/fco-lang-${language}.json`);
      const { foundry, modules } = await bootOfflineFoundry({ users: [GM], language, systemLang }, ["adapters/fco-frameworks"]);
      const { fcoFramework, fcoProposal } = modules["adapters/fco-frameworks"];
      const { game } = foundry;
      for (const [framework, prefix] of Object.entries(FRAMEWORKS)) {
        const lists = { skills: systemLang[`${prefix}DefaultSkills`], tracks: systemLang[`${prefix}DefaultTracks`] };
        assert.equal(fcoFramework(lists), framework, `${language} ${framework}`);
        // The same lists compared in English only: (almost) nothing matches, no proposal.
        assert.equal(fcoFramework(lists, null), null, `${language} ${framework} in English`);
      }
      // As the module proposes it at connect: FCO's world data item holds the Fate Condensed
      // lists in this language (its "Replace skills/tracks with…"), the proposal is Condensed.
      game.settings.register("fate-core-official", "wid", { scope: "world", config: false, type: String, default: "" });
      const item = { uuid: "Item.i18nWorldData01", system: { skills: systemLang.FateCondensedDefaultSkills, tracks: systemLang.FateCondensedDefaultTracks, defaults: {} } };
      const lookup = globalThis.fromUuidSync;
      globalThis.fromUuidSync = (uuid) => (uuid === item.uuid ? item : lookup?.(uuid));
      try {
        await game.settings.set("fate-core-official", "wid", item.uuid);
        assert.equal(fcoProposal(), "fate-condensed");
      } finally {
        globalThis.fromUuidSync = lookup;
      }
      // English lists still match in a German or Spanish client.
      assert.equal(fcoFramework({ skills: ["Athletics", "Burglary", "Contacts", "Crafts", "Deceive", "Drive", "Empathy", "Fight", "Investigate", "Lore", "Notice", "Physique", "Provoke", "Rapport", "Resources", "Shoot", "Stealth", "Will"] }), "fate-core");
    });
  }
});
