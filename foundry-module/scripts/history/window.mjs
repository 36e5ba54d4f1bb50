/**
 * The roll history window (ApplicationV2): the bridge's record of every roll, resolved or cancelled
 * by the GM, paged from the bridge (never the whole log), filtered by scene, character, kind and
 * whether it was cancelled, with the 4dF
 * distribution against the expected one. The GM may undo from it.
 * @module history-window
 */
import { renderTemplate } from "../foundry/compat.mjs";
import { buttonActions, madeOnce } from "../foundry/windows.mjs";
import { historyContext, historyStats, readHistory, undo } from "./history.mjs";
import { MODULE_ID } from "../protocol.mjs";

export const HISTORY_TEMPLATE = `modules/${MODULE_ID}/templates/history-window.hbs`;
const HISTORY_ID = "fate-bridge-history";
const PAGE_SIZE = 10;

const field = (root, name) => String(root?.querySelector(`[name="${name}"]`)?.value ?? "").trim();

/** Characters to filter by: the world's actors (the bridge knows them by the same ids). */
function characterOptions() {
  return game.actors.contents.map((a) => ({ id: a.id, name: a.name })).sort((a, b) => a.name.localeCompare(b.name));
}

const ACTIONS = {
  async applyFilters() {
    const form = this.element.querySelector('form[data-form="history-filters"]');
    this.view.filters = { scene: field(form, "scene"), character: field(form, "character"), kind: field(form, "kind"), rolls: field(form, "rolls") };
    this.cursors = [];
    await this.load();
  },
  async older() {
    const next = this.view.page?.next_before;
    if (!next) return;
    this.cursors.push(this.before);
    await this.load(next);
  },
  async newer() {
    if (!this.cursors.length) return;
    await this.load(this.cursors.pop());
  },
  async refresh() {
    this.cursors = [];
    await this.load();
  },
  async undoLast() {
    await this.undoThen({});
  },
  async undoFrom(_event, target) {
    await this.undoThen({ resolution: Number(target.dataset.seq) });
  },
  async statsFor(_event, target) {
    this.view.statsFor = target.value;
    await this.render();
  }
};

let instance = null;

/** The ApplicationV2 subclass, made on first use. */
const historyWindowClass = madeOnce((ApplicationV2) => class FateBridgeHistory extends ApplicationV2 {
  static DEFAULT_OPTIONS = {
    id: HISTORY_ID,
    classes: ["fate-bridge-history"],
    tag: "section",
    window: { title: "FATEBRIDGE.History.Title", icon: "fa-solid fa-clock-rotate-left", resizable: true },
    position: { width: 560, height: 700 },
    actions: buttonActions(ACTIONS)
  };

  /** @param {import("../net/bridge.mjs").Bridge} bridge */
  constructor(bridge, options = {}) {
    super(options);
    this.bridge = bridge;
    this.view = { page: null, stats: null, filters: {}, statsFor: "", error: null, newer: false, loading: true };
    this.before = null;
    this.cursors = [];
  }

  /**
   * Read one page (older than `before`) and show it; the statistics only on the newest page
   * (they cover the whole record, so paging does not ask for them again).
   */
  async load(before = null) {
    this.before = before;
    const f = this.view.filters;
    try {
      const [page, stats] = await Promise.all([
        readHistory(this.bridge, { before, limit: PAGE_SIZE, scene: f.scene, character: f.character, kind: f.kind, rolls: f.rolls }),
        before === null ? historyStats(this.bridge, { scene: f.scene }) : this.view.stats
      ]);
      Object.assign(this.view, { page, stats, error: null });
    } catch (err) {
      this.view.error = err.message;
    }
    this.view.loading = false;
    this.view.newer = this.cursors.length > 0;
    await this.render();
  }

  /** GM: undo, tell how it went, and read the history again. */
  async undoThen(target) {
    try {
      const done = await undo(this.bridge, target);
      ui.notifications.info(game.i18n.format("FATEBRIDGE.History.Undone", { n: done.resolutions.length, seq: done.back_to }));
    } catch (err) {
      ui.notifications.warn(game.i18n.format("FATEBRIDGE.Notify.ActionFailed", { message: err.message }));
    }
    this.cursors = [];
    await this.load();
  }

  async _prepareContext() {
    return historyContext(this.view, { isGM: game.user.isGM, characters: characterOptions(), ruleset: this.bridge.hello?.ruleset ?? null });
  }

  async _renderHTML(context) {
    return renderTemplate(HISTORY_TEMPLATE, context);
  }

  _replaceHTML(result, content) {
    content.innerHTML = result;
    content.querySelector('select[name="statsFor"]')?.addEventListener("change", (event) => ACTIONS.statsFor.call(this, event, event.target));
  }

  async close(options) {
    if (instance === this) instance = null;
    return super.close(options);
  }
});

/**
 * Open (or bring back) the roll history and read its newest page.
 * @param {import("../net/bridge.mjs").Bridge} bridge
 */
export async function openHistory(bridge) {
  const History = historyWindowClass();
  const fresh = !instance;
  instance ??= new History(bridge);
  await instance.render({ force: true });
  if (fresh) await instance.load();
  return instance;
}

