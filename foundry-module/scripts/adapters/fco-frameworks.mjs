/**
 * Which of its four games a fate-core-official world plays, and the ruleset that plays it
 * (R13.9); the bridge's names of FCO's approaches in the world's language (R13.1).
 *
 * fate-core-official (4.7) records no single "framework" value. Its world setup writes the
 * character defaults of all four games (`lang/en.json` `baseDefaults`, keys "fate-core",
 * "fate-condensed", "fate-accelerated", "dresden-files-accelerated") into its world data item
 * (the Item whose UUID is the world setting `fate-core-official.wid`, fields `system.defaults`,
 * `system.skills`, `system.tracks`); the game the GM picked shows in the skill and track lists
 * loaded from the settings "Replace skills/tracks with…" (`defaultSkills`, `defaultTracks`, values
 * "fateCore", "fateCondensed", "accelerated", "dfa": one-shot, set back to "nothing" once the list
 * is written). So the framework is read from those lists: the world item's, else the legacy
 * world settings `fate-core-official.skills`/`.tracks` (before the world item), else what the
 * world's characters carry.
 * @module fco-frameworks
 */

const FCO = "fate-core-official";

/** FCO's four frameworks (its baseDefaults keys) with the skills and tracks each loads. */
const FCO_FRAMEWORKS = Object.freeze({
  "fate-core": {
    ruleset: "fate-core",
    skills: ["Athletics", "Burglary", "Contacts", "Crafts", "Deceive", "Drive", "Empathy", "Fight", "Investigate", "Lore", "Notice", "Physique", "Provoke", "Rapport", "Resources", "Shoot", "Stealth", "Will"],
    tracks: ["Physical Stress", "Mental Stress", "Mild Consequence", "Physical Mild Consequence", "Mental Mild Consequence", "Moderate Consequence", "Severe Consequence"]
  },
  "fate-condensed": {
    ruleset: "fate-condensed",
    skills: ["Academics", "Athletics", "Burglary", "Contacts", "Crafts", "Deceive", "Drive", "Empathy", "Fight", "Investigate", "Lore", "Notice", "Physique", "Provoke", "Rapport", "Resources", "Shoot", "Stealth", "Will"],
    tracks: ["Physical Stress", "Mental Stress", "Mild Consequence", "Mild Physical Consequence", "Mild Mental Consequence", "Moderate Consequence", "Severe Consequence"]
  },
  "fate-accelerated": {
    ruleset: "fate-accelerated",
    skills: ["Careful", "Clever", "Flashy", "Forceful", "Quick", "Sneaky"],
    tracks: ["Stress", "Mild Consequence", "Moderate Consequence", "Severe Consequence"]
  },
  // Dresden Files Accelerated (no SRD ruleset of its own, RULES.md R13): its approaches are
  // rolled like skills, and its one track of six one-shift boxes, any number marked for one
  // hit, is Fate Condensed's per-hit rule (Fate Accelerated's one box per hit would leave a DFA
  // character one shift of stress); so it plays Fate Condensed.
  "dresden-files-accelerated": {
    ruleset: "fate-condensed",
    skills: ["Flair", "Focus", "Force", "Guile", "Haste", "Intellect"],
    tracks: ["Stress", "In Peril", "Doomed", "Indebted"]
  }
});

/** FCO's translation keys of each framework's default lists (its fco.js, "Replace skills with…"). */
const FCO_LANG_PREFIX = Object.freeze({
  "fate-core": "FateCore",
  "fate-condensed": "FateCondensed",
  "fate-accelerated": "FateAccelerated",
  "dresden-files-accelerated": "DresdenFilesAccelerated"
});

/**
 * A framework's default skill and track names in the client's language: FCO fills its lists
 * from `game.system.lang` (its translations, e.g. de.json's `FateCoreDefaultSkills` has
 * "Athletik"), so a German world's lists are German.
 * @param {string} framework  an FCO_FRAMEWORKS key
 * @param {object} [systemLang]  fate-core-official's `game.system.lang`
 * @returns {{skills: Set<string>, tracks: Set<string>}}
 */
function localizedLists(framework, systemLang) {
  const prefix = FCO_LANG_PREFIX[framework];
  if (!prefix || !systemLang || typeof systemLang !== "object") return { skills: new Set(), tracks: new Set() };
  return { skills: names(systemLang[`${prefix}DefaultSkills`]), tracks: names(systemLang[`${prefix}DefaultTracks`]) };
}

/** R13.1: Fate Accelerated's approaches by the names the bridge knows them (its Ruleset.approaches). */
export const APPROACHES = FCO_FRAMEWORKS["fate-accelerated"].skills;

/**
 * FCO's names of the approaches -> the bridge's: the English names, and the names FCO's
 * translation gives them (`FateAcceleratedDefaultSkills`, which FCO copies onto a world's and
 * its characters' skills). es.json and pb.json key that list by the English name; de.json keys
 * it by the German name, in the English order, so an entry whose key is not an approach is
 * known by its place in a list of six.
 * @param {object} [systemLang]  fate-core-official's `game.system.lang`
 * @returns {Map<string, string>}
 */
export function approachAliases(systemLang = globalThis.game?.system?.lang) {
  const aliases = new Map(APPROACHES.map((name) => [name, name]));
  const block = systemLang && typeof systemLang === "object" ? systemLang.FateAcceleratedDefaultSkills : null;
  if (!block || typeof block !== "object" || Array.isArray(block)) return aliases;
  const entries = Object.entries(block);
  entries.forEach(([key, skill], place) => {
    const local = String(skill?.name ?? key).trim();
    const canonical = APPROACHES.includes(key) ? key : entries.length === APPROACHES.length ? APPROACHES[place] : null;
    if (local && canonical && !aliases.has(local)) aliases.set(local, canonical);
  });
  return aliases;
}

/**
 * The bridge's name of a skill: an approach named in the world's language (FCO's German
 * "Sorgfältig") is the approach ("Careful"); any other name is itself.
 * @param {string} name
 * @param {object} [systemLang]
 * @returns {string}
 */
export function canonicalSkill(name, systemLang) {
  return approachAliases(systemLang).get(String(name ?? "").trim()) ?? name;
}

/** How alike two name sets are: |A∩B| / |A∪B|. */
function jaccard(a, b) {
  if (!a.size && !b.size) return 0;
  let shared = 0;
  for (const x of a) if (b.has(x)) shared += 1;
  return shared / (a.size + b.size - shared);
}

/** The names of an FCO block (`{key: {name}}`), a list or set of names, or nothing. */
function names(block) {
  if (!block) return new Set();
  if (Array.isArray(block) || block instanceof Set) return new Set([...block].map((n) => String(n).trim()).filter(Boolean));
  if (typeof block !== "object") return new Set();
  return new Set(Object.entries(block).map(([key, v]) => String(v?.name ?? key).trim()).filter(Boolean));
}

/**
 * Which of FCO's frameworks a skill list (and track list) is: the one whose default skills it
 * is most alike (at least half alike), the tracks deciding between two equally near (Fate Core
 * and Fate Condensed differ by one skill). Null when nothing is near enough or it stays a tie.
 * @param {{skills?: object|string[], tracks?: object|string[]}} lists  FCO blocks or name arrays
 * @returns {string|null} an FCO_FRAMEWORKS key
 */
export function fcoFramework({ skills, tracks } = {}, systemLang = globalThis.game?.system?.lang) {
  const s = names(skills);
  const t = names(tracks);
  if (!s.size && !t.size) return null;
  // FCO wrote the lists in the language of the GM's client when the world was set up: each
  // framework's lists are compared in English and in the world's language, the nearer counts.
  const nearest = (mine, lists) => Math.max(...lists.map((list) => jaccard(mine, list)));
  const scored = Object.entries(FCO_FRAMEWORKS).map(([id, fw]) => {
    const local = localizedLists(id, systemLang);
    return {
      id,
      skills: nearest(s, [new Set(fw.skills), local.skills]),
      tracks: nearest(t, [new Set(fw.tracks), local.tracks])
    };
  });
  const primary = s.size ? "skills" : "tracks";
  const secondary = s.size ? "tracks" : "skills";
  scored.sort((a, b) => b[primary] - a[primary] || b[secondary] - a[secondary]);
  const [best, next] = scored;
  if (best[primary] < 0.5) return null;
  if (next && next[primary] === best[primary] && next[secondary] === best[secondary]) return null;
  return best.id;
}

/**
 * The ruleset that plays an FCO framework (R13.9); DFA plays Fate Accelerated.
 * @param {string|null} framework  an FCO_FRAMEWORKS key
 * @returns {string|null}
 */
export function rulesetForFramework(framework) {
  return Object.hasOwn(FCO_FRAMEWORKS, framework ?? "") ? FCO_FRAMEWORKS[framework].ruleset : null;
}

/** An FCO world setting, or undefined where FCO did not register it (another system, a test). */
function fcoSetting(key) {
  try {
    return game.settings.get(FCO, key);
  } catch {
    return undefined;
  }
}

/**
 * The skill and track lists of this world's FCO game: its world data item's, else the legacy
 * world settings, else the union of its characters'.
 * @returns {{skills: Set<string>, tracks: Set<string>}|null}
 */
function fcoWorldLists() {
  if (game.system?.id !== FCO) return null;
  const wid = fcoSetting("wid");
  const item = wid ? globalThis.fromUuidSync?.(wid) : null;
  const fromItem = { skills: names(item?.system?.skills), tracks: names(item?.system?.tracks) };
  if (fromItem.skills.size) return fromItem;
  const legacy = { skills: names(fcoSetting("skills")), tracks: names(fcoSetting("tracks")) };
  if (legacy.skills.size) return legacy;
  const skills = new Set();
  const tracks = new Set();
  for (const actor of game.actors?.contents ?? []) {
    if (actor.type !== FCO) continue;
    for (const n of names(actor.system?.skills)) skills.add(n);
    for (const n of names(actor.system?.tracks)) tracks.add(n);
  }
  return skills.size || tracks.size ? { skills, tracks } : null;
}

/** The ruleset matching this world's FCO framework, or null (another system, unknown lists). */
export function fcoProposal() {
  const lists = fcoWorldLists();
  return lists ? rulesetForFramework(fcoFramework(lists)) : null;
}
