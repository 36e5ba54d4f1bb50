/**
 * A small test double of the Foundry VTT globals the Fate Bridge module touches. It runs in Node
 * (with linkedom as the DOM) and in a browser page; the module under test is always the real code.
 *
 * install(options) sets globalThis.{game, Hooks, ui, ChatMessage, Roll, Actor, CONFIG, CONST,
 * foundry} and returns a handle the tests drive (render a sheet, answer a dialog, read chat).
 */

export class Collection extends Map {
  find(fn) {
    for (const v of this.values()) if (fn(v)) return v;
    return undefined;
  }
  filter(fn) {
    return [...this.values()].filter(fn);
  }
  getName(name) {
    return this.find((v) => v.name === name);
  }
  get contents() {
    return [...this.values()];
  }
}

let idCounter = 0;
/** A Foundry-like 16-character id. */
export function randomID() {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  let id = "";
  for (let i = 0; i < 12; i++) id += alphabet[Math.floor(Math.random() * alphabet.length)];
  return id + String(++idCounter).padStart(4, "0");
}

/**
 * v14's deletion operator (`_del`, a ForcedDeletion). structuredClone turns class instances into
 * plain objects, so a clone of it is recognised by this marker.
 */
class ForcedDeletion {
  constructor() {
    this.fakeForcedDeletion = true;
  }
}
const isForcedDeletion = (v) => v instanceof ForcedDeletion || (v && typeof v === "object" && v.fakeForcedDeletion === true);
/**
 * v14's replacement operator: `_replace(value)` (a ForcedReplacement) puts `value` in place of
 * the whole object it is merged into, where a plain object would merge (fate-core-official
 * 4.7.14 writes `{"system.tracks": _replace(tracks)}` when it re-keys or rebuilds a block).
 */
class ForcedReplacement {
  constructor(replacement) {
    this.fakeForcedReplacement = true;
    this.replacement = replacement;
  }
}
const isForcedReplacement = (v) => v instanceof ForcedReplacement || (v && typeof v === "object" && v.fakeForcedReplacement === true);
/** Uses of the `-=key` form under v14, where it is deprecated. */
const deprecatedDeletions = [];
let currentGeneration = 13;

const isPlainObject = (v) => Boolean(v) && typeof v === "object" && !Array.isArray(v) && !isForcedDeletion(v) && !isForcedReplacement(v);

function deepEqual(a, b) {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k]));
}

/**
 * Foundry's update diff (`diff: true`, the default): of the changes asked, only those that
 * differ from the document's current data, in the shape they were asked (flat dotted keys
 * stay flat). Deletions and replacements always count. An update whose diff is empty is not
 * made at all: no request, no hook.
 */
function diffUpdate(target, changes) {
  const out = {};
  for (const [key, value] of Object.entries(changes)) {
    if (isForcedDeletion(value) || isForcedReplacement(value) || key.startsWith("-=") || key.startsWith("==")) {
      out[key] = value;
      continue;
    }
    const current = key.includes(".") ? lookup(target, key) : target?.[key];
    if (isPlainObject(value) && isPlainObject(current)) {
      const inner = diffUpdate(current, value);
      if (Object.keys(inner).length) out[key] = inner;
    } else if (!deepEqual(current, value)) {
      out[key] = value;
    }
  }
  return out;
}

/** Foundry's update merge: nested objects merge, `-=key` (v13) and `_del` (v14) delete, `_replace` (v14) replaces. */
function mergeUpdate(target, changes) {
  for (const [key, value] of Object.entries(changes)) {
    if (isForcedDeletion(value)) {
      if (currentGeneration < 14) throw new Error("fake Foundry: _del is a v14 operator");
      delete target[key];
    } else if (isForcedReplacement(value)) {
      if (currentGeneration < 14) throw new Error("fake Foundry: _replace is a v14 operator");
      if (key.includes(".")) {
        const [head, ...rest] = key.split(".");
        target[head] ??= {};
        mergeUpdate(target[head], { [rest.join(".")]: value });
      } else {
        target[key] = structuredClone(value.replacement);
      }
    } else if (key.startsWith("-=")) {
      if (currentGeneration >= 14) deprecatedDeletions.push(key);
      delete target[key.slice(2)];
    } else if (key.startsWith("==")) {
      // v13's forced replacement key (fate-core-official 4.7.13 re-keys with `{"==tracks": ...}`).
      target[key.slice(2)] = structuredClone(value);
    } else if (key.includes(".")) {
      const [head, ...rest] = key.split(".");
      target[head] ??= {};
      mergeUpdate(target[head], { [rest.join(".")]: value });
    } else if (value && typeof value === "object" && !Array.isArray(value) && target[key] && typeof target[key] === "object") {
      mergeUpdate(target[key], value);
    } else {
      target[key] = value && typeof value === "object" ? structuredClone(value) : value;
    }
  }
  return target;
}

function lookup(obj, path) {
  return path.split(".").reduce((o, k) => (o && typeof o === "object" ? o[k] : undefined), obj);
}

/** Text for HTML (element content and attribute values). */
function esc(text) {
  return String(text ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}

/**
 * The parts of fate-core-official 4.7.14's character sheet (templates/fate-core-officialSheet.html)
 * the module and FCO's listeners key on, with FCO's names and classes:
 *  - the fate point fields (`system.details.fatePoints.current|refresh|boosts`: form fields, so
 *    submitted with the whole form);
 *  - the skill list: hidden skills are not rendered; a skill name is a
 *    `div.mf_draggable[name=skill][data-skillname]` (double click: FCO shares it to chat), with
 *    FCO's die icon for owners only;
 *  - enabled tracks: the name (`i.mf_draggable`), FCO's roll icon `i[name=roll_track]` for owners
 *    when the track is rollable ("full"/"empty"), the boxes (`input.fco-box`, not form fields:
 *    FCO writes them from a click listener), and for a consequence named when marked its name
 *    field `system.tracks.<key>.aspect.name`;
 *  - aspects: `system.aspects.<key>.value` text areas;
 *  - stunts: the name, and for owners FCO's stunt roll button `button[name=stunt_name]` with
 *    `data-linkedskill="<name>_<linked skill>_<bonus>"` unless the stunt has no linked skill.
 * Prose, extras and the other panels are left out.
 */
function fcoSheetBody(actor) {
  const sys = actor.system ?? {};
  const owner = actor.isOwner;
  const fp = sys.details?.fatePoints ?? {};
  const num = (label, name, value) => `<label class="mfate-sheet__meta-label">${label} <input class="mfate-sheet__meta-value" type="number" name="${name}" value="${value ?? ""}"></label>`;
  let body = `<div class="mfate-sheet"><div class="mfate-sheet__meta">${num("Fate points", "system.details.fatePoints.current", fp.current)}`
    + `${num("Refresh", "system.details.fatePoints.refresh", fp.refresh)}${num("Boosts", "system.details.fatePoints.boosts", fp.boosts)}</div>`;
  const drag = (type, name) => `class="mf_draggable" data-mfdtype="${type}" data-mfname="${esc(name)}" data-mfactorid="${esc(actor.id)}"`;
  body += `<ul class="mfate-skills-list">`;
  for (const [key, skill] of Object.entries(sys.skills ?? {})) {
    if (skill.hidden) continue;
    const name = esc(skill.name ?? key);
    const die = owner ? `<i data-skillname="${name}" class="fas fa-dice fu_button"></i>` : "";
    body += `<li class="mfate-skills-list__item"><div class="mfate-skills-list__number">${esc(skill.rank)}</div>`
      + `<div class="mfate-skills-list__skill-name mf_draggable" name="skill" data-skillname="${name}" data-mfdtype="skill" data-mfname="${name}" data-mfactorid="${esc(actor.id)}">${name}`
      + `${die}</div></li>`;
  }
  body += `</ul><div class="tracks_body">`;
  for (const [key, track] of Object.entries(sys.tracks ?? {})) {
    if (!track?.enabled) continue;
    const roll = owner && ["full", "empty"].includes(track.rollable) ? `<i data-trackname="${esc(track.name)}" name="roll_track" class="fas fa-dice fu_button"></i>` : "";
    const boxes = (track.box_values ?? []).map((v, i) => `<input type="checkbox" class="fco-box" data-boxinfo="${esc(track.name)}_${i}_${!v}"${v ? " checked" : ""}>`).join("");
    const named = track.aspect?.when_marked ? `<input type="text" class="aspect_box" name="system.tracks.${esc(key)}.aspect.name" value="${esc(track.aspect.name)}">` : "";
    body += `<div class="mfate-tracks__list" data-track="${esc(track.name)}"><i ${drag("track", track.name)}>${esc(track.name)}</i>${roll}`
      + `<div class="mfate-tracks__boxes">${boxes}${named}</div></div>`;
  }
  body += `</div><ul class="mfate-aspects-list">`;
  for (const [key, aspect] of Object.entries(sys.aspects ?? {})) {
    body += `<li name="aspect" class="mfate-aspects-list__item"><i ${drag("aspect", aspect.name)}>${esc(aspect.name)}</i>`
      + `<textarea class="mfate-aspects-list__input" name="system.aspects.${esc(key)}.value">${esc(aspect.value)}</textarea></li>`;
  }
  body += `</ul><div class="mfate-stunts__table">`;
  for (const stunt of Object.values(sys.stunts ?? {})) {
    const button = owner && stunt.linked_skill !== "None"
      ? `<button type="button" name="stunt_name" data-linkedskill="${esc(stunt.name)}_${esc(stunt.linked_skill)}_${esc(stunt.bonus)}" class="fas fa-dice mfate-stunts__row-header-icon fu_button"></button>`
      : "";
    body += `<div class="mfate-stunts__row"><i ${drag("stunt", stunt.name)}>${esc(stunt.name)} (${esc(stunt.linked_skill)})</i>${button}</div>`;
  }
  return body + `</div></div>`;
}

/**
 * @param {object} options
 * @param {object} options.Handlebars      the handlebars library
 * @param {(path: string) => Promise<string>} options.loadText  reads "modules/fate-bridge/..." files
 * @param {object} options.lang            the module's language file for `options.language` (lang/en.json)
 * @param {string} [options.language]      the client's language, `game.i18n.lang` (default "en")
 * @param {object} [options.fallbackLang]  lang/en.json when `lang` is another language's: Foundry
 *   reads a key the language lacks from English, and shows the key itself when neither has it
 * @param {object} [options.systemLang]    the system's own translations for the language
 *   (fate-core-official keeps them as `game.system.lang`, fco.js: `game.i18n.translations
 *   ["fate-core-official"]`, e.g. its `FateCoreDefaultSkills`)
 * @param {{id: string, name: string, isGM: boolean}[]} options.users
 * @param {string} options.userId          who this client is
 * @param {string} [options.activeGM]      id of the active GM
 * @param {string} [options.systemId]
 * @param {object[]} [options.actors]      {_id, name, type, system, flags, ownership}
 * @param {Record<string, unknown>} [options.settings]  "fate-bridge.key" -> value
 * @param {{skills?: object, tracks?: object, aspects?: object, stunts?: object, defaults?: object}} [options.fcoWorldData]
 *   fate-core-official's world data item (FCO 4.7 fco.js `prepareWorldItem`): an Item of type
 *   "Extra" holding the world's skill, track, aspect, stunt and character-default lists, whose
 *   UUID the world setting `fate-core-official.wid` holds
 * @param {object} [options.module]        {id, version}
 */
export function install(options) {
  const { Handlebars, loadText, lang } = options;
  const hooks = new Map();
  /** A write Foundry's server would refuse: recorded, then thrown as the server's error. */
  function refuse(what) {
    log.refused.push(what);
    throw new Error(`fake Foundry: ${what}`);
  }
  const log = { notifications: [], created: [], updated: [], dialogs: [], hooks: [], hookErrors: [], userUpdates: [], statusToggles: [], actorUpdates: [], apps: [], combatWrites: [], refused: [], savedFiles: [], sceneUpdates: [] };

  const Hooks = {
    on(name, fn) {
      if (!hooks.has(name)) hooks.set(name, []);
      hooks.get(name).push({ fn, once: false });
      return fn;
    },
    once(name, fn) {
      if (!hooks.has(name)) hooks.set(name, []);
      hooks.get(name).push({ fn, once: true });
      return fn;
    },
    off(name, fn) {
      hooks.set(name, (hooks.get(name) ?? []).filter((h) => h.fn !== fn));
    },
    /**
     * Like Foundry's: every handler runs; one that throws is reported (Hooks.onError) and the
     * others still run. Errors are kept in `log.hookErrors` so tests can assert there were none.
     */
    callAll(name, ...args) {
      log.hooks.push(name);
      const list = hooks.get(name) ?? [];
      hooks.set(name, list.filter((h) => !h.once));
      for (const h of list) {
        try {
          const result = h.fn(...args);
          if (result && typeof result.catch === "function") result.catch((error) => log.hookErrors.push({ hook: name, error }));
        } catch (error) {
          log.hookErrors.push({ hook: name, error });
        }
      }
      return true;
    },
    call(name, ...args) {
      return Hooks.callAll(name, ...args);
    }
  };

  // ---- i18n --------------------------------------------------------------
  // Foundry's I18n: the language's string, else English's (`_fallback`), else the key;
  // format fills {name} placeholders it has data for and leaves the others as written.
  const fallback = options.fallbackLang ?? lang;
  const i18n = {
    lang: options.language ?? "en",
    translations: options.systemLang ? { ...lang, "fate-core-official": options.systemLang } : lang,
    _fallback: fallback,
    localize(key) {
      const v = lookup(lang, key) ?? lookup(fallback, key);
      return typeof v === "string" ? v : key;
    },
    format(key, data = {}) {
      return i18n.localize(key).replace(/{([^}]+)}/g, (m, k) => (k in data ? String(data[k]) : m));
    },
    has(key) {
      return typeof (lookup(lang, key) ?? lookup(fallback, key)) === "string";
    }
  };

  // ---- users -------------------------------------------------------------
  class User {
    constructor(data) {
      Object.assign(this, { active: true, flags: {}, targets: new Set(), ...structuredClone(data) });
      // Foundry's roles (CONST.USER_ROLES): PLAYER 1, TRUSTED 2, ASSISTANT 3, GAMEMASTER 4;
      // isGM is ASSISTANT or above.
      this.role ??= this.isGM ? 4 : 1;
      this.isGM = this.role >= 3;
      this.documentName = "User";
    }
    get isActiveGM() {
      return this.isGM && game.users.activeGM?.id === this.id;
    }
    getFlag(scope, key) {
      return this.flags?.[scope]?.[key];
    }
    /** Foundry lets a user update only itself (or a GM anyone). */
    async update(changes, opts = {}) {
      if (game.user.id !== this.id && !game.user.isGM) refuse(`${game.user.name} may not update user ${this.name}`);
      const diff = structuredClone(changes);
      mergeUpdate(this, diff);
      log.userUpdates.push({ id: this.id, changes: diff });
      Hooks.callAll("updateUser", this, diff, opts, game.user.id);
      return this;
    }
    async setFlag(scope, key, value) {
      return this.update({ flags: { [scope]: { [key]: value } } });
    }
  }
  const users = new Collection(options.users.map((u) => [u.id, new User(u)]));
  // Foundry's Users#activeGM: the active GMs by role, highest first, then by id. A test may
  // pin it (options.activeGM) when no Foundry server tells the client who is active.
  Object.defineProperty(users, "activeGM", {
    get: () => {
      const pinned = users.get(options.activeGM);
      if (pinned) return pinned;
      const role = (u) => u.role ?? (u.isGM ? 4 : 1);
      const gms = users.filter((u) => u.isGM && u.active).sort((a, b) => role(b) - role(a) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      return gms[0] ?? null;
    }
  });

  // ---- settings ----------------------------------------------------------
  const settingConfigs = new Map();
  const settingValues = new Map(Object.entries(options.settings ?? {}));
  const settings = {
    register(namespace, key, config) {
      if (config.scope === "world" && /key|secret|token/i.test(key)) {
        throw new Error(`fake Foundry: secret-looking setting ${key} registered in world scope`);
      }
      settingConfigs.set(`${namespace}.${key}`, config);
    },
    get(namespace, key) {
      const id = `${namespace}.${key}`;
      const config = settingConfigs.get(id);
      if (!config) throw new Error(`fake Foundry: setting ${id} is not registered`);
      return settingValues.has(id) ? structuredClone(settingValues.get(id)) : structuredClone(config.default);
    },
    async set(namespace, key, value) {
      const id = `${namespace}.${key}`;
      if (!settingConfigs.has(id)) throw new Error(`fake Foundry: setting ${id} is not registered`);
      settingValues.set(id, structuredClone(value));
      settingConfigs.get(id).onChange?.(value);
      return value;
    },
    configs: settingConfigs,
    /** Foundry's settings menus: a button in the module's settings opening `type` (an application class). */
    registerMenu(namespace, key, config) {
      if (typeof config?.type !== "function") throw new Error(`fake Foundry: menu ${namespace}.${key} has no application class`);
      settingMenus.set(`${namespace}.${key}`, config);
    },
    menus: null
  };
  const settingMenus = new Map();
  settings.menus = settingMenus;

  // ---- dice --------------------------------------------------------------
  class RollTerm {
    constructor(data) {
      Object.assign(this, structuredClone(data));
    }
    toJSON() {
      return { ...this, class: this.constructor.name };
    }
  }
  class DiceTerm extends RollTerm {
    get total() {
      return this.results.filter((r) => r.active).reduce((s, r) => s + r.result, 0);
    }
  }
  class FateDie extends DiceTerm {
    static DENOMINATION = "f";
    constructor(data) {
      super(data);
      if (this.faces !== 3) throw new Error("FateDie has 3 faces");
      for (const r of this.results ?? []) {
        if (![-1, 0, 1].includes(r.result)) throw new Error(`FateDie result ${r.result}`);
      }
    }
  }
  class OperatorTerm extends RollTerm {}
  class NumericTerm extends RollTerm {
    get total() {
      return this.number;
    }
  }
  const TERMS = { FateDie, OperatorTerm, NumericTerm };
  class Roll {
    static fromData(data) {
      if (data.class !== "Roll") throw new Error(`fake Foundry: unknown roll class ${data.class}`);
      const roll = new Roll(data.formula, data.data ?? {}, data.options ?? {});
      roll.terms = data.terms.map((t) => {
        const cls = TERMS[t.class];
        if (!cls) throw new Error(`fake Foundry: unknown term class ${t.class}`);
        return new cls(t);
      });
      roll._evaluated = Boolean(data.evaluated);
      roll._total = data.total;
      return roll;
    }
    constructor(formula, data = {}, opts = {}) {
      this.formula = formula;
      this.data = data;
      this.options = opts;
      this.terms = [];
      this._evaluated = false;
    }
    get total() {
      return this._evaluated ? this._total : undefined;
    }
    get dice() {
      return this.terms.filter((t) => t instanceof DiceTerm);
    }
    toJSON() {
      return { class: "Roll", options: structuredClone(this.options), formula: this.formula, terms: this.terms.map((t) => t.toJSON()), total: this._total, evaluated: this._evaluated };
    }
  }

  // ---- documents ---------------------------------------------------------
  /**
   * An Active Effect embedded in an actor: a status effect is one whose `statuses` holds the
   * status id (Foundry's `ActiveEffect.fromStatusEffect`); its token shows the effect's icon.
   */
  class ActiveEffect {
    constructor(data, parent) {
      this._id = data._id ?? randomID();
      this.name = data.name ?? "";
      this.img = data.img ?? null;
      this.statuses = new Set(data.statuses ?? []);
      this.disabled = Boolean(data.disabled);
      this.flags = structuredClone(data.flags ?? {});
      this.parent = parent;
      this.documentName = "ActiveEffect";
    }
    get id() {
      return this._id;
    }
    get active() {
      return !this.disabled;
    }
  }
  class Actor {
    constructor(data) {
      this._id = data._id ?? randomID();
      this.name = data.name;
      this.type = data.type ?? "character";
      this.system = structuredClone(data.system ?? {});
      this.flags = structuredClone(data.flags ?? {});
      this.ownership = structuredClone(data.ownership ?? { default: 0 });
      this.documentName = "Actor";
      this.updates = [];
      // A synthetic actor's parent is its unlinked TokenDocument; a world actor has none.
      this.parent = data.parent ?? null;
      // Status effects are embedded Active Effects; `statuses` is derived from them.
      this.effects = new Collection();
      for (const e of data.effects ?? []) {
        const effect = new ActiveEffect(e, this);
        this.effects.set(effect.id, effect);
      }
      for (const statusId of data.statuses ?? []) {
        const effect = new ActiveEffect({ name: statusId, statuses: [statusId] }, this);
        this.effects.set(effect.id, effect);
      }
      this.statuses = new Set();
      this.prepareData();
    }
    /** Foundry's data preparation; derived data (here `statuses`) comes from applyActiveEffects. */
    prepareData() {
      this.applyActiveEffects();
    }
    /**
     * Foundry's Actor#applyActiveEffects: clears `statuses` and adds every status of every
     * active effect. A system may override it (fate-core-official 4.7.14 makes it do nothing,
     * so there `statuses` stays empty: see tests/js/support/fco-stand-in.mjs).
     */
    applyActiveEffects() {
      this.statuses.clear();
      for (const effect of this.effects.values()) {
        if (!effect.active) continue;
        for (const statusId of effect.statuses) this.statuses.add(statusId);
      }
    }
    /** Effects a token shows as icons: those with a status (Foundry's temporary effects). */
    get temporaryEffects() {
      return this.effects.filter((e) => e.active && e.statuses.size > 0);
    }
    get id() {
      return this._id;
    }
    /** Foundry: a synthetic (unlinked token) actor; its id is the base actor's id. */
    get isToken() {
      return this.parent?.documentName === "Token";
    }
    get token() {
      return this.isToken ? this.parent : null;
    }
    get uuid() {
      return this.isToken ? `${this.parent.uuid}.Actor.${this.id}` : `Actor.${this.id}`;
    }
    get isOwner() {
      return this.testUserPermission(game.user, "OWNER");
    }
    /** Foundry: at least limited permission (the actor is listed and its token's name shown). */
    get visible() {
      return this.testUserPermission(game.user, "LIMITED");
    }
    /** Foundry's document permission test, for the levels the module asks about. */
    testUserPermission(user, level) {
      const need = CONST.DOCUMENT_OWNERSHIP_LEVELS[level] ?? level;
      return Boolean(user?.isGM) || (this.ownership[user?.id] ?? this.ownership.default ?? 0) >= need;
    }
    getFlag(scope, key) {
      return this.flags?.[scope]?.[key];
    }
    /**
     * Like Foundry's: the changes are diffed against the actor's data (`diff: false` skips it);
     * an update that changes nothing is not made and fires no hook. `updateActor` gets the diff.
     */
    async update(changes, opts = {}) {
      if (!this.isOwner) refuse(`${game.user.name} may not update ${this.name}`);
      const asked = structuredClone(changes);
      const diff = opts.diff === false ? asked : diffUpdate(this, asked);
      if (Object.keys(diff).length === 0) return this;
      mergeUpdate(this, structuredClone(diff));
      this.prepareData();
      this.updates.push({ changes: diff, options: opts });
      // A synthetic actor's changes land in its token's ActorDelta, not on the base actor.
      log.actorUpdates.push({ id: this.id, token: this.token?.id ?? null, changes: diff, options: structuredClone(opts) });
      Hooks.callAll("updateActor", this, diff, opts, game.user.id);
      return this;
    }
    /**
     * Foundry's Actor#toggleStatusEffect (v12-v14): it looks for the status among the actor's
     * effects (never at `statuses`): with `active: true` an existing effect stays, `false`
     * deletes it (or does nothing when there is none), no `active` toggles; a new effect is
     * created from the status's config.
     */
    async toggleStatusEffect(statusId, { active, overlay = false } = {}) {
      if (!this.isOwner) refuse(`${game.user.name} may not change statuses of ${this.name}`);
      const status = Array.isArray(CONFIG.statusEffects) ? CONFIG.statusEffects.find((e) => e.id === statusId) : CONFIG.statusEffects[statusId];
      if (!status) throw new Error(`fake Foundry: unknown status effect ${statusId}`);
      const existing = this.effects.filter((e) => e.statuses.size === 1 && e.statuses.has(statusId));
      const record = (on) => log.statusToggles.push({ actor: this.id, token: this.token?.id ?? null, status: statusId, active: on, overlay });
      if (existing.length) {
        if (active) return true;
        for (const e of existing) this.effects.delete(e.id);
        this.prepareData();
        record(false);
        return false;
      }
      if (active === false) return undefined;
      const effect = new ActiveEffect({ name: status.name, img: status.img, statuses: [statusId], flags: overlay ? { core: { overlay: true } } : {} }, this);
      this.effects.set(effect.id, effect);
      this.prepareData();
      record(true);
      return effect;
    }
    async setFlag(scope, key, value) {
      return this.update({ flags: { [scope]: { [key]: value } } });
    }
  }
  // The system's Actor document class (a system may register its own subclass; the fake takes
  // it as `options.actorClass(Actor, generation)`).
  const ActorClass = options.actorClass ? options.actorClass(Actor, options.generation ?? 13) : Actor;
  const actors = new Collection((options.actors ?? []).map((a) => {
    const actor = new ActorClass(a);
    return [actor.id, actor];
  }));

  const messages = new Collection();
  class ChatMessage {
    static getSpeaker({ actor, token, alias } = {}) {
      const a = actor ?? token?.actor ?? null;
      return { scene: token?.parent?.id ?? null, actor: a?.id ?? null, token: token?.id ?? a?.token?.id ?? null, alias: alias ?? token?.name ?? a?.name ?? game.user.name };
    }
    static async create(data) {
      if (data.rolls?.some((r) => !(r instanceof Roll) && typeof r !== "string")) throw new Error("fake Foundry: rolls must be Roll instances");
      // Foundry's server stores rolls as JSON and every client rebuilds them with Roll.fromData.
      const rolls = (data.rolls ?? []).map((r) => (typeof r === "string" ? r : JSON.stringify(r.toJSON())));
      const message = new ChatMessage({ ...data, rolls, _id: randomID(), author: game.user.id, timestamp: Date.now() });
      messages.set(message.id, message);
      log.created.push(message.id);
      Hooks.callAll("createChatMessage", message, {}, game.user.id);
      await message.render();
      return message;
    }
    constructor(data) {
      this._id = data._id;
      // The author field holds a user id; `message.author` is the User (Foundry v12+).
      this._source = { author: typeof data.author === "object" ? data.author?.id : data.author };
      this.speaker = data.speaker;
      this.content = data.content ?? "";
      this.flavor = data.flavor ?? "";
      this.whisper = [...(data.whisper ?? [])];
      this.blind = Boolean(data.blind);
      this.flags = structuredClone(data.flags ?? {});
      this.sound = data.sound ?? null;
      this.rolls = (data.rolls ?? []).map((r) => (typeof r === "string" ? Roll.fromData(JSON.parse(r)) : r));
      this.documentName = "ChatMessage";
    }
    get id() {
      return this._id;
    }
    get author() {
      return users.get(this._source.author) ?? null;
    }
    get isAuthor() {
      return this._source.author === game.user.id;
    }
    get isRoll() {
      return this.rolls.length > 0;
    }
    get isContentVisible() {
      return !this.blind && (this.whisper.length === 0 || this.whisper.includes(game.user.id) || this.isAuthor || game.user.isGM);
    }
    getFlag(scope, key) {
      return this.flags?.[scope]?.[key];
    }
    /** Foundry: a message's author is its owner; a GM may modify any message. */
    testUserPermission(user, level) {
      const need = CONST.DOCUMENT_OWNERSHIP_LEVELS[level] ?? level;
      const has = user?.isGM || user?.id === this._source.author ? CONST.DOCUMENT_OWNERSHIP_LEVELS.OWNER : CONST.DOCUMENT_OWNERSHIP_LEVELS.NONE;
      return has >= need;
    }
    canUserModify(user, action) {
      return action === "create" || this.testUserPermission(user, "OWNER");
    }
    async update(changes) {
      if (!this.canUserModify(game.user, "update")) refuse(`${game.user.name} may not update message ${this.id} of ${this.author?.name ?? this._source.author}`);
      const { rolls, ...rest } = changes;
      mergeUpdate(this, structuredClone(rest));
      if (rolls) this.rolls = rolls.map((r) => Roll.fromData(typeof r === "string" ? JSON.parse(r) : r.toJSON()));
      log.updated.push(this.id);
      Hooks.callAll("updateChatMessage", this, changes, {}, game.user.id);
      await this.render();
      return this;
    }
    /** Render into the page's chat log (when there is one) and fire renderChatMessageHTML. */
    async render() {
      if (typeof document === "undefined") return null;
      const li = document.createElement("li");
      li.className = "chat-message message";
      li.dataset.messageId = this.id;
      li.innerHTML = `<header class="message-header"><h4 class="message-sender"></h4></header><div class="message-content"></div>`;
      li.querySelector(".message-sender").textContent = this.speaker?.alias ?? "";
      li.querySelector(".message-content").innerHTML = this.content;
      Hooks.callAll("renderChatMessageHTML", this, li, { message: this });
      const logEl = document.getElementById("chat-log");
      if (logEl) {
        const old = logEl.querySelector(`[data-message-id="${this.id}"]`);
        if (old) old.replaceWith(li);
        else logEl.append(li);
      }
      this.element = li;
      return li;
    }
  }

  // ---- templates ---------------------------------------------------------
  const hb = Handlebars.create();
  hb.registerHelper("localize", (key, opts) => {
    const data = opts?.hash ?? {};
    return Object.keys(data).length ? i18n.format(key, data) : i18n.localize(key);
  });
  const compiled = new Map();
  async function getTemplate(path) {
    if (!compiled.has(path)) compiled.set(path, hb.compile(await loadText(path)));
    return compiled.get(path);
  }
  async function renderTemplate(path, data) {
    const tpl = await getTemplate(path);
    return tpl(data, { allowProtoPropertiesByDefault: true });
  }
  async function loadTemplates(paths) {
    const list = Array.isArray(paths) ? paths : Object.values(paths);
    await Promise.all(list.map(getTemplate));
  }

  // ---- DialogV2 ----------------------------------------------------------
  /** Renders into the page: a <dialog> holding a form and one button per option. */
  class DialogV2 {
    static wait(config) {
      if (!("rejectClose" in config)) throw new Error("fake Foundry: DialogV2.wait without rejectClose");
      return new Promise((resolve, reject) => {
        const el = document.createElement("dialog");
        el.className = ["application", "dialog", "fake-dialog-v2", ...(config.classes ?? [])].join(" ");
        el.setAttribute("open", "");
        const title = i18n.localize(config.window?.title ?? "");
        el.innerHTML = `<header class="window-header"><h1 class="window-title"></h1><button type="button" class="header-control" data-action="close" aria-label="Close">×</button></header>`
          + `<form class="window-content dialog-form"><div class="dialog-content"></div><footer class="form-footer"></footer></form>`;
        el.querySelector(".window-title").textContent = title;
        el.querySelector(".dialog-content").innerHTML = config.content ?? "";
        const form = el.querySelector("form");
        const footer = el.querySelector("footer");
        const entry = { title, config, element: el, closed: false };
        log.dialogs.push(entry);
        const finish = (value, error) => {
          entry.closed = true;
          entry.result = value;
          el.remove();
          if (error) reject(error);
          else resolve(value);
        };
        for (const b of config.buttons ?? []) {
          const button = document.createElement("button");
          button.type = "button";
          button.dataset.action = b.action;
          if (b.default) button.classList.add("default");
          button.textContent = i18n.localize(b.label ?? b.action);
          if (!("form" in button) || button.form !== form) Object.defineProperty(button, "form", { value: form });
          button.addEventListener("click", async (event) => {
            try {
              const value = b.callback ? await b.callback(event, button, { element: el }) : b.action;
              finish(value === undefined ? b.action : value);
            } catch (err) {
              finish(null, err);
            }
          });
          footer.append(button);
        }
        el.querySelector('[data-action="close"]').addEventListener("click", () => {
          if (config.rejectClose) finish(null, new Error("Dialog was dismissed without a choice"));
          else finish(null);
        });
        form.addEventListener("submit", (e) => e.preventDefault());
        document.body.append(el);
        const app = { element: el, window: { title } };
        entry.app = app;
        config.render?.(new Event("render"), app);
      });
    }
  }

  // ---- ApplicationV2 ------------------------------------------------------
  /**
   * The part of ApplicationV2 the module uses: DEFAULT_OPTIONS merged down the class chain,
   * render() -> _prepareContext -> _renderHTML -> _replaceHTML into `.window-content`, click
   * delegation of `[data-action]` to `options.actions` (called with the app as `this`), close().
   */
  class ApplicationV2 {
    static DEFAULT_OPTIONS = { id: "", classes: [], window: { title: "" }, position: {}, actions: {} };
    constructor(options = {}) {
      const chain = [];
      for (let c = this.constructor; c && c !== Object; c = Object.getPrototypeOf(c)) if (Object.hasOwn(c, "DEFAULT_OPTIONS")) chain.unshift(c.DEFAULT_OPTIONS);
      this.options = chain.reduce((acc, o) => ({ ...acc, ...o, window: { ...acc.window, ...o.window }, actions: { ...acc.actions, ...o.actions }, classes: [...(acc.classes ?? []), ...(o.classes ?? [])] }), {});
      Object.assign(this.options, options);
      this.element = null;
      this.renderCount = 0;
    }
    get id() {
      return this.options.id;
    }
    get title() {
      return i18n.localize(this.options.window?.title ?? "");
    }
    get rendered() {
      return Boolean(this.element?.isConnected ?? this.element);
    }
    async render(options = {}) {
      const opts = typeof options === "boolean" ? { force: options } : options;
      if (!this.element && !opts.force) return this;
      const context = await this._prepareContext(opts);
      const result = await this._renderHTML(context, opts);
      if (!this.element) {
        const el = document.createElement("section");
        el.id = this.options.id;
        el.className = ["application", ...this.options.classes].join(" ");
        el.innerHTML = `<header class="window-header"><h1 class="window-title"></h1><button type="button" class="header-control" data-action="close" aria-label="Close">×</button></header><section class="window-content"></section>`;
        el.querySelector(".window-title").textContent = this.title;
        el.addEventListener("click", (event) => {
          const target = event.target.closest?.("[data-action]");
          if (!target || !el.contains(target)) return;
          const name = target.dataset.action;
          if (name === "close") return void this.close();
          const handler = this.options.actions[name];
          if (!handler) return;
          (handler.handler ?? handler).call(this, event, target);
        });
        (document.getElementById("apps") ?? document.body).append(el);
        this.element = el;
        log.apps.push({ id: this.id, opened: true });
      }
      this._replaceHTML(result, this.element.querySelector(".window-content"), opts);
      this.renderCount += 1;
      Hooks.callAll(`render${this.constructor.name}`, this, this.element, context, opts);
      Hooks.callAll("renderApplicationV2", this, this.element, context, opts);
      return this;
    }
    async _prepareContext() {
      return {};
    }
    async _renderHTML() {
      return "";
    }
    _replaceHTML(result, content) {
      content.innerHTML = typeof result === "string" ? result : "";
    }
    async close() {
      this.element?.remove();
      this.element = null;
      log.apps.push({ id: this.id, closed: true });
      return this;
    }
  }

  // ---- Combat (the combat tracker's documents) ---------------------------
  const combats = new Collection();
  class Combatant {
    constructor(data, combat) {
      this._id = data._id ?? randomID();
      Object.assign(this, structuredClone({ initiative: null, hidden: false, flags: {}, ...data }));
      this.combat = combat;
      this.documentName = "Combatant";
    }
    get id() {
      return this._id;
    }
    get actor() {
      return actors.get(this.actorId) ?? null;
    }
    get name() {
      return this.actor?.name ?? "";
    }
  }
  class Combat {
    static async create(data = {}) {
      if (!game.user.isGM) refuse(`${game.user.name} may not create a Combat`);
      const combat = new Combat(data);
      combats.set(combat.id, combat);
      log.combatWrites.push({ op: "create", id: combat.id, user: game.user.id });
      return combat;
    }
    constructor(data) {
      this._id = data._id ?? randomID();
      this.round = data.round ?? 0;
      this.turn = data.turn ?? 0;
      this.active = data.active ?? true;
      this.flags = structuredClone(data.flags ?? {});
      this.combatants = new Collection();
      this.documentName = "Combat";
    }
    get id() {
      return this._id;
    }
    getFlag(scope, key) {
      return this.flags?.[scope]?.[key];
    }
    /** Combatants by initiative, highest first (Foundry's default order); ties by name. */
    get turns() {
      return this.combatants.contents.sort((a, b) => (b.initiative ?? -Infinity) - (a.initiative ?? -Infinity) || a.name.localeCompare(b.name));
    }
    get combatant() {
      return this.turns[this.turn] ?? null;
    }
    #gm(op) {
      if (!game.user.isGM) refuse(`${game.user.name} may not ${op} a Combat`);
      log.combatWrites.push({ op, id: this.id, user: game.user.id });
    }
    async createEmbeddedDocuments(type, list) {
      this.#gm(`create ${type}`);
      return list.map((d) => {
        const c = new Combatant(d, this);
        this.combatants.set(c.id, c);
        return c;
      });
    }
    async updateEmbeddedDocuments(type, list) {
      this.#gm(`update ${type}`);
      return list.map((d) => {
        const c = this.combatants.get(d._id);
        mergeUpdate(c, structuredClone({ ...d, _id: undefined }));
        c._id = d._id;
        return c;
      });
    }
    async deleteEmbeddedDocuments(type, ids) {
      this.#gm(`delete ${type}`);
      for (const id of ids) this.combatants.delete(id);
      return ids;
    }
    async update(changes) {
      this.#gm("update");
      mergeUpdate(this, structuredClone(changes));
      return this;
    }
    async delete() {
      this.#gm("delete");
      combats.delete(this.id);
      return this;
    }
  }

  // ---- the viewed scene: flags only (tokens come with viewScene) -----------
  class Scene {
    constructor(data) {
      this._id = data._id ?? "sceneViewed00001";
      this.flags = structuredClone(data.flags ?? {});
      // The scene the table plays (Foundry: one at most; `game.scenes.active`).
      this.active = Boolean(data.active);
      this.tokens = new Collection();
      this.documentName = "Scene";
    }
    get uuid() {
      return `Scene.${this.id}`;
    }
    get id() {
      return this._id;
    }
    getFlag(scope, key) {
      return this.flags?.[scope]?.[key];
    }
    /**
     * Scenes belong to the GM: only a GM may update one. Diffed like an actor's update; fires
     * `updateScene(scene, changed, options, userId)`.
     */
    async update(changes, opts = {}) {
      if (!game.user.isGM) refuse(`${game.user.name} may not update scene ${this.id}`);
      const asked = structuredClone(changes);
      const diff = opts.diff === false ? asked : diffUpdate(this, asked);
      if (Object.keys(diff).length === 0) return this;
      mergeUpdate(this, structuredClone(diff));
      log.sceneUpdates.push({ id: this.id, changes: diff, options: structuredClone(opts) });
      Hooks.callAll("updateScene", this, diff, opts, game.user.id);
      return this;
    }
    async setFlag(scope, key, value) {
      return this.update({ flags: { [scope]: { [key]: value } } });
    }
    async unsetFlag(scope, key) {
      const del = currentGeneration >= 14 ? { [key]: globalThis._del } : { [`-=${key}`]: null };
      return this.update({ flags: { [scope]: del } });
    }
  }

  /**
   * A token on a scene. Linked (the default): its actor is the world actor. Unlinked: its
   * actor is a synthetic actor of its own, built from the base actor and the token's delta, with
   * the base actor's id (as in Foundry); its writes stay on this token.
   */
  class TokenDocument {
    constructor(data, scene) {
      this._id = data._id ?? data.id ?? randomID();
      this.name = data.name ?? actors.get(data.actorId)?.name ?? "";
      this.actorId = data.actorId;
      this.actorLink = data.actorLink ?? true;
      this.delta = structuredClone(data.delta ?? {});
      // A hidden token is drawn for GMs only.
      this.hidden = Boolean(data.hidden);
      this.parent = scene;
      this.documentName = "Token";
      this._synthetic = null;
    }
    get id() {
      return this._id;
    }
    get uuid() {
      return `${this.parent.uuid}.Token.${this.id}`;
    }
    get isLinked() {
      return this.actorLink;
    }
    get baseActor() {
      return actors.get(this.actorId) ?? null;
    }
    get actor() {
      const base = this.baseActor;
      if (!base || this.actorLink) return base;
      if (!this._synthetic) {
        const system = mergeUpdate(structuredClone(base.system), structuredClone(this.delta.system ?? {}));
        this._synthetic = new ActorClass({ _id: base.id, name: this.delta.name ?? base.name, type: base.type, system, flags: structuredClone(base.flags), ownership: structuredClone(base.ownership), parent: this });
      }
      return this._synthetic;
    }
  }
  const scenes = new Collection();
  // fate-core-official's world data item and its `wid` setting (registered as fco.js does).
  const items = new Collection();
  if (options.fcoWorldData) {
    const data = options.fcoWorldData;
    const item = {
      _id: "fcoWorldData0001", id: "fcoWorldData0001", uuid: "Item.fcoWorldData0001", documentName: "Item",
      name: `${options.worldId ?? "test-world"}_worldData_extra`, type: "Extra",
      system: { skills: data.skills ?? {}, tracks: data.tracks ?? {}, aspects: data.aspects ?? {}, stunts: data.stunts ?? {}, defaults: data.defaults ?? {} }
    };
    items.set(item.id, item);
    settings.register("fate-core-official", "wid", { name: "world data extra uuid", scope: "world", config: false, type: String, default: undefined });
    settingValues.set("fate-core-official.wid", item.uuid);
  }
  /** Foundry's synchronous UUID lookup, for the documents the fake has. */
  globalThis.fromUuidSync = (uuid) => {
    const parts = String(uuid).split(".");
    if (parts[0] === "Actor") return actors.get(parts[1]) ?? null;
    if (parts[0] === "Item") return items.get(parts[1]) ?? null;
    if (parts[0] !== "Scene") return null;
    const scene = scenes.get(parts[1]);
    if (parts.length === 2) return scene ?? null;
    const token = parts[2] === "Token" ? scene?.tokens.get(parts[3]) : null;
    if (parts.length === 4) return token ?? null;
    return parts[4] === "Actor" ? token?.actor ?? null : null;
  };

  // ---- Foundry's socket ----------------------------------------------------
  /**
   * `game.socket`: with a Foundry server (tests/js/support/foundry-server.mjs) a real
   * Socket.IO connection to it as this user, whose module channel reaches every other client
   * and whose presence drives `user.active` and the `userConnected` hook; without one, a lone
   * client's socket whose messages reach nobody.
   */
  function foundrySocket() {
    if (!options.foundryServer) {
      const sent = [];
      log.foundrySocketSent = sent;
      return { on() {}, off() {}, emit: (...args) => sent.push(args), connected: false };
    }
    for (const u of users.values()) u.active = u.id === options.userId;
    const socket = options.foundryIo(options.foundryServer, { transports: ["websocket"], auth: { userId: options.userId } });
    const setActive = (user, active) => {
      if (!user || user.id === options.userId || user.active === active) return;
      user.active = active;
      Hooks.callAll("userConnected", user, active);
    };
    handle.foundryConnected = new Promise((resolve) => {
      socket.on("activeUsers", (ids) => {
        for (const user of users.values()) setActive(user, ids.includes(user.id));
        resolve();
      });
    });
    socket.on("userActivity", (userId, activity) => setActive(users.get(userId), Boolean(activity?.active)));
    return socket;
  }

  // ---- globals -----------------------------------------------------------
  const moduleData = { id: "fate-bridge", version: "0.1.0", active: true, ...(options.module ?? {}) };
  const game = {
    ready: false,
    version: "13.351",
    release: { generation: 13, version: "13.351" },
    world: { id: options.worldId ?? "test-world" },
    system: { id: options.systemId ?? "worldbuilding", ...(options.systemLang ? { lang: options.systemLang } : {}) },
    user: users.get(options.userId),
    users,
    actors,
    items,
    messages,
    combats,
    scenes,
    i18n,
    settings,
    socket: null,
    modules: new Map([["fate-bridge", moduleData]])
  };
  const startScene = new Scene({ active: true, ...(options.scene ?? {}) });
  scenes.set(startScene.id, startScene);
  scenes.viewed = startScene;
  // Foundry's Scenes#active: the scene marked active, whatever scene a user views.
  Object.defineProperty(scenes, "active", { get: () => scenes.find((scene) => scene.active) ?? null });
  const notify = (type) => (message) => {
    log.notifications.push({ type, message: String(message) });
  };
  globalThis.game = game;
  globalThis.Hooks = Hooks;
  globalThis.ui = { notifications: { info: notify("info"), warn: notify("warn"), error: notify("error") } };
  const generation = options.generation ?? 13;
  currentGeneration = generation;
  deprecatedDeletions.length = 0;
  log.deprecatedDeletions = deprecatedDeletions;
  if (generation >= 14) {
    globalThis._del = Object.freeze(new ForcedDeletion());
    globalThis._replace = (value) => new ForcedReplacement(value);
  } else {
    delete globalThis._del;
    delete globalThis._replace;
  }
  game.version = `${generation}.351`;
  game.release = { generation, version: game.version };
  // v13: an array of {id, name, img}; v14: an object keyed by id.
  globalThis.CONFIG = { sounds: { dice: "sounds/dice.wav" }, statusEffects: generation >= 14 ? {} : [] };
  globalThis.CONST = { DOCUMENT_OWNERSHIP_LEVELS: { NONE: 0, LIMITED: 1, OBSERVER: 2, OWNER: 3 }, USER_ROLES: { NONE: 0, PLAYER: 1, TRUSTED: 2, ASSISTANT: 3, GAMEMASTER: 4 } };
  globalThis.ChatMessage = ChatMessage;
  globalThis.Roll = Roll;
  globalThis.Actor = ActorClass;
  globalThis.ActiveEffect = ActiveEffect;
  globalThis.Combat = Combat;
  globalThis.foundry = {
    applications: {
      api: { DialogV2, ApplicationV2 },
      handlebars: { renderTemplate, loadTemplates }
    },
    dice: { Roll, terms: { FateDie, OperatorTerm, NumericTerm, DiceTerm } },
    // v13+: foundry.utils.saveDataToFile(data, type, filename) downloads a file.
    utils: { saveDataToFile: (data, type, filename) => { log.savedFiles.push({ data: String(data), type, filename }); } }
  };

  // ---- handle for tests --------------------------------------------------
  let sheetCount = 0;
  const handle = {
    /** Resolves once Foundry's server said who is active (when there is a server). */
    foundryConnected: Promise.resolve(),
    /** Functions a stand-in system registers to attach its own sheet listeners: (root, actor). */
    sheetRenderers: [],
    log,
    game,
    Hooks,
    /** Fire init, mark ready, fire ready: Foundry's start sequence. */
    start() {
      Hooks.callAll("init");
      Hooks.callAll("setup");
      game.ready = true;
      Hooks.callAll("ready");
    },
    /**
     * Render an actor sheet into the page and fire the render hooks an ApplicationV2 sheet fires.
     * fate-core-official gets the markup of its `fcoCharacter` sheet (a form: fate points, skill
     * list, tracks, aspects, stunts; see fcoSheetBody); other systems a plain sheet. Given the
     * element of a rendered sheet, renders it again in place, as an ApplicationV2 re-render
     * keeps its root element and replaces its content.
     * @param {string|Actor} actorId
     * @param {{element?: HTMLElement}} [options]
     * @returns {HTMLElement}
     */
    renderActorSheet(actorId, { element } = {}) {
      const actor = typeof actorId === "object" ? actorId : actors.get(actorId) ?? globalThis.fromUuidSync(actorId)?.actor;
      const isFco = game.system.id === "fate-core-official";
      let el = element;
      if (!el) {
        // fcoCharacter's DEFAULT_OPTIONS: tag "form", submitted on change and on close.
        el = document.createElement(isFco ? "form" : "div");
        el.id = `ActorSheet-${++sheetCount}-${actor.id}`;
        el.className = "application sheet actor";
        (document.getElementById("sheets") ?? document.body).append(el);
      }
      let body = `<section class="window-content"><h2 class="sheet-name">${esc(actor.name)}</h2>`;
      if (isFco) {
        el.classList.add("fcoSheet");
        body += fcoSheetBody(actor);
      } else {
        body += `<p class="system-notes">A character of ${game.system.id}.</p>`;
      }
      el.innerHTML = body + "</section>";
      // The sheet's own listeners (its _onRender) are attached before the render hooks fire.
      for (const fn of handle.sheetRenderers) fn(el, actor);
      const app = { id: el.id, actor, document: actor, element: el, rendered: true };
      app.constructor = { name: isFco ? "fcoCharacter" : "ActorSheetV2" };
      if (isFco) Hooks.callAll("renderfcoCharacter", app, el, {}, {});
      Hooks.callAll("renderActorSheetV2", app, el, {}, {});
      Hooks.callAll("renderApplicationV2", app, el, {}, {});
      return el;
    },
    /**
     * What Foundry's server does for other clients: a message another user created or updated
     * arrives and renders here (it is not this client's own create).
     */
    async receiveMessage(data) {
      let message = messages.get(data._id);
      if (message) {
        mergeUpdate(message, structuredClone({ content: data.content, flags: data.flags }));
        if (data.rolls) message.rolls = data.rolls.map((r) => Roll.fromData(typeof r === "string" ? JSON.parse(r) : r));
      } else {
        message = new ChatMessage(structuredClone(data));
        messages.set(message.id, message);
      }
      await message.render();
      return message;
    },
    /**
     * Another client updated a user: apply and fire updateUser here, with the update's options
     * as Foundry's server passes them on, and the id of the user who made it.
     */
    receiveUserUpdate(userId, changes, opts = {}, byUserId = userId) {
      const user = users.get(userId);
      mergeUpdate(user, structuredClone(changes));
      Hooks.callAll("updateUser", user, changes, opts, byUserId);
    },
    /**
     * Show a scene on the canvas with tokens: sets `canvas.scene` (the viewed scene) and fires
     * `canvasReady`, as Foundry does when a scene is viewed. A token is an actor id (a linked
     * token) or `{id, actorId, actorLink: false, name, delta}` (give the id when several clients
     * must agree on an unlinked token's UUID).
     * @param {(string|object)[]} tokens
     */
    viewScene(tokens, sceneId = "sceneMain0000001", { activate = true } = {}) {
      const scene = scenes.get(sceneId) ?? new Scene({ _id: sceneId });
      scenes.set(scene.id, scene);
      // The GM activates the scene it shows (the table plays it), unless told it only looks.
      if (activate) for (const other of scenes.values()) other.active = other === scene;
      for (const spec of tokens) {
        const token = new TokenDocument(typeof spec === "string" ? { actorId: spec } : spec, scene);
        scene.tokens.set(token.id, token);
      }
      scenes.viewed = scene;
      // The canvas's Token placeables: `isVisible` is false for a hidden token unless the user
      // is a GM (Foundry also hides tokens outside a player's vision; the fake has no vision).
      const placeables = () => scene.tokens.contents.map((doc) => ({
        id: doc.id, document: doc, get actor() { return doc.actor; }, get isVisible() { return !doc.hidden || Boolean(game.user.isGM); }
      }));
      globalThis.canvas = { ready: true, scene, tokens: { get placeables() { return placeables(); } } };
      Hooks.callAll("canvasReady", globalThis.canvas);
      return scene;
    },
    /** A token created on the viewed scene (on every client, as Foundry's server relays it). */
    createToken(spec, options = {}) {
      const scene = globalThis.canvas?.scene;
      const token = new TokenDocument(typeof spec === "string" ? { actorId: spec } : spec, scene);
      scene?.tokens.set(token.id, token);
      Hooks.callAll("createToken", token, options, game.user.id);
      return token;
    },
    /** Target tokens (game.user.targets holds Token placeables; `document` is the TokenDocument). */
    target(tokenDocs) {
      game.user.targets = new Set(tokenDocs.map((doc) => ({ id: doc.id, document: doc, actor: doc.actor })));
    },
    /** Press a settings menu's button, as Foundry's settings window does: a new app, rendered. */
    async openMenu(id) {
      const config = settingMenus.get(id);
      if (!config) throw new Error(`fake Foundry: no settings menu ${id}`);
      return new config.type().render({ force: true });
    },
    /** Open dialogs, oldest first. */
    openDialogs() {
      return log.dialogs.filter((d) => !d.closed);
    }
  };
  game.socket = foundrySocket();
  return handle;
}
