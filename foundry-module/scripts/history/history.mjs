/**
 * The roll history and the GM's undo: the bridge's intents as promises (for the window and for
 * macros), and the window's view model, computed here so the template stays logic-free.
 * @module history
 */
import { diceView, effectText, invokeText } from "../cards/view.mjs";
import { actionName, outcomeName, ratedText, refusalText, signed, skillName } from "../foundry/format.mjs";

/**
 * A refused intent as an Error: `code`, `field`, `params`, and as its message the refusal in
 * the user's language (the bridge's English `message` is not shown).
 */
export class BridgeError extends Error {
  /** @param {{code: string, message?: string, field?: string|null, params?: object}} error */
  constructor(error) {
    super(refusalText(error));
    this.name = "BridgeError";
    this.code = error?.code ?? "unknown";
    this.field = error?.field ?? null;
    this.params = error?.params ?? {};
  }
}

/**
 * Send one intent; resolves to the ack's data, rejects with a {@link BridgeError} when the bridge
 * refuses it or the connection is down. Nothing is shown to the user: the caller decides.
 * @param {import("../net/bridge.mjs").Bridge} bridge
 * @param {string} event
 * @param {object} payload
 */
async function request(bridge, event, payload = {}) {
  const connection = bridge.connection;
  if (!connection?.connected) {
    throw new BridgeError({ code: "offline", message: connection?.status?.message ?? game.i18n.localize("FATEBRIDGE.Status.offline") });
  }
  const ack = await connection.call(event, payload);
  if (!ack.ok) throw new BridgeError(ack.error);
  return ack.data;
}

/**
 * The window's "rolls" choice as `history.read`'s `cancelled` field: "cancelled" asks for the
 * rolls the GM called off, "resolved" for the others, anything else for both (no field).
 */
const CANCELLED_FILTER = Object.freeze({ cancelled: true, resolved: false });

/** The roll states the history filters by (the window's "rolls" choice). */
const HISTORY_ROLLS = Object.freeze(Object.keys(CANCELLED_FILTER));

/** Only the filters that are set, as the bridge's `history.read` fields. */
function filters({ before, limit, scene, character, kind, cancelled, rolls } = {}) {
  const payload = {};
  if (before) payload.before = Number(before);
  if (limit) payload.limit = Number(limit);
  if (scene) payload.scene = Number(scene);
  if (character) payload.character = String(character);
  if (kind) payload.kind = String(kind);
  if (typeof cancelled === "boolean") payload.cancelled = cancelled;
  else if (Object.hasOwn(CANCELLED_FILTER, rolls ?? "")) payload.cancelled = CANCELLED_FILTER[rolls];
  return payload;
}

/**
 * One page of the roll history, newest first (`history.read`): resolutions and the rolls the GM
 * cancelled after their dice were rolled (`cancelled: true` only those, `false` none of them).
 * @param {import("../net/bridge.mjs").Bridge} bridge
 * @param {{before?: number, limit?: number, scene?: number, character?: string, kind?: string, cancelled?: boolean, rolls?: "cancelled"|"resolved"}} [options]
 * @returns {Promise<{entries: object[], next_before: number|null, last_seq: number}>}
 */
export function readHistory(bridge, options) {
  return request(bridge, "history.read", filters(options));
}

/**
 * The 4dF sums rolled per character and for the world, against the expected share.
 * @param {import("../net/bridge.mjs").Bridge} bridge
 * @param {{scene?: number}} [options]
 */
export function historyStats(bridge, { scene } = {}) {
  return request(bridge, "history.stats", scene ? { scene: Number(scene) } : {});
}

/**
 * GM: undo. No argument: the last resolution. `{resolution: seq}`: that resolution and all after
 * it. `{backTo: seq}`: every change after event `seq`. Never across the end of a scene.
 * @param {import("../net/bridge.mjs").Bridge} bridge
 * @param {{resolution?: number, backTo?: number}} [target]
 * @returns {Promise<{back_to: number, seq: number, hash: string, resolutions: number[], action_ids: string[], card_ids: string[]}>}
 */
export function undo(bridge, { resolution, backTo } = {}) {
  const payload = {};
  if (resolution !== undefined && resolution !== null) payload.resolution = Number(resolution);
  if (backTo !== undefined && backTo !== null) payload.back_to = Number(backTo);
  return request(bridge, "history.undo", payload);
}

/** The kinds the history filters by. */
const HISTORY_KINDS = Object.freeze(["overcome", "create_advantage", "take_advantage", "discover", "attack", "contest", "challenge"]);

const CHART_HEIGHT = 60;

/**
 * Bars for the 4dF chart: the share of each sum −4..+4 rolled, beside the expected share.
 * @param {{rolls: number, counts: number[], expected: number[], mean: number|null}} distribution
 */
export function chartView(distribution) {
  const rolls = distribution?.rolls ?? 0;
  // The bridge counts the dice of cancelled rolls among the rolls (they were rolled); the
  // summary says how many, so a GM's calling rolls off shows on the chart.
  const cancelled = distribution?.cancelled ?? 0;
  const counts = distribution?.counts ?? Array(9).fill(0);
  const expected = distribution?.expected ?? Array(9).fill(0);
  const shares = counts.map((c) => (rolls ? c / rolls : 0));
  const top = Math.max(...shares, ...expected, 0.01);
  const height = (share) => Math.round((share / top) * CHART_HEIGHT);
  return {
    rolls,
    summary: game.i18n.format(cancelled ? "FATEBRIDGE.History.ChartSummaryCancelled" : "FATEBRIDGE.History.ChartSummary", {
      rolls,
      cancelled,
      mean: distribution?.mean === null || distribution?.mean === undefined ? "\u2014" : distribution.mean.toFixed(2)
    }),
    bars: counts.map((count, i) => ({
      sum: signed(i - 4),
      count,
      rolled: height(shares[i]),
      expected: height(expected[i]),
      title: game.i18n.format("FATEBRIDGE.History.BarTitle", {
        sum: signed(i - 4),
        count,
        share: (shares[i] * 100).toFixed(0),
        expected: (expected[i] * 100).toFixed(0)
      })
    }))
  };
}

/** "12:04:31", from the bridge's ISO time stamp, in the viewer's time zone. */
function clock(at) {
  const date = new Date(at);
  return Number.isNaN(date.getTime()) ? String(at) : date.toLocaleTimeString();
}

/**
 * One entry as the window shows it.
 * @param {object} entry  HistoryEntry
 * @param {{isGM: boolean, ruleset?: string|null}} reader  who reads it, and the world's ruleset (hello's)
 */
function entryView(entry, { isGM, ruleset = null }) {
  const i18n = game.i18n;
  const who = entry.actor.leader?.name ?? i18n.localize("FATEBRIDGE.Card.Nobody");
  const opposition = entry.opposition.leader?.name ?? i18n.localize("FATEBRIDGE.Card.PassiveOpposition");
  const total = (side) => ratedText(side.total) ?? "\u2014";
  // The GM called the action off after its dice were rolled: the roll stays, no outcome does.
  const cancelled = Boolean(entry.cancelled);
  return {
    seq: entry.seq,
    hashShort: entry.hash.slice(0, 10),
    hashTitle: i18n.format("FATEBRIDGE.Card.HashTitle", { hash: entry.hash }),
    eventLabel: i18n.format("FATEBRIDGE.Card.Event", { seq: entry.seq }),
    time: clock(entry.at),
    scene: i18n.format("FATEBRIDGE.History.SceneN", { n: entry.scene }),
    title: i18n.format("FATEBRIDGE.History.EntryTitle", { who, action: actionName(entry.action_type), skill: skillName(entry.actor.skill) }),
    versus: i18n.format("FATEBRIDGE.History.Versus", { actor: total(entry.actor), who: opposition, opposition: total(entry.opposition) }),
    rolls: entry.rolls.map((r) => ({
      who: r.character?.name ?? "",
      reroll: r.reroll,
      dice: diceView(r.dice)
    })),
    invokes: entry.invokes.map((i) => invokeText(i)),
    costs: entry.costs.map((c) => i18n.format("FATEBRIDGE.History.Cost", {
      severity: i18n.localize(`FATEBRIDGE.Controls.CostTitle.${c.severity}`),
      text: c.text || c.kind
    })),
    effects: entry.effects.filter((e) => e.kind !== "success" && e.kind !== "failure" && e.kind !== "cost").map((e) => effectText(e, { aspects: [] }).text),
    outcome: cancelled ? "cancelled" : entry.outcome ?? "pending",
    outcomeLabel: cancelled ? "" : outcomeName(entry.outcome, ruleset),
    shifts: cancelled || entry.shifts === null ? "" : signed(entry.shifts),
    cancelled,
    undone: entry.undone,
    canUndo: isGM && !entry.undone
  };
}

/**
 * Everything the history window's template shows.
 * @param {{page: object|null, stats: object|null, filters: object, statsFor: string, error: string|null, newer: boolean, loading: boolean}} view
 * @param {{isGM: boolean, characters: {id: string, name: string}[], ruleset?: string|null}} reader
 *   who reads it, the characters to filter by, and the world's ruleset (hello's)
 */
export function historyContext(view, { isGM, characters, ruleset = null }) {
  const i18n = game.i18n;
  const f = view.filters ?? {};
  const statsFor = view.statsFor || "";
  const distribution = statsFor ? view.stats?.characters?.[statsFor] : view.stats?.world;
  const names = view.stats?.names ?? {};
  return {
    isGM,
    loading: view.loading,
    error: view.error,
    filters: {
      scene: f.scene ?? "",
      character: f.character ?? "",
      kind: f.kind ?? "",
      rolls: f.rolls ?? ""
    },
    characters: characters.map((c) => ({ ...c, selected: c.id === f.character })),
    kinds: HISTORY_KINDS.map((k) => ({ id: k, label: i18n.localize(`FATEBRIDGE.History.Kind.${k}`), selected: k === f.kind })),
    rollStates: HISTORY_ROLLS.map((r) => ({ id: r, label: i18n.localize(`FATEBRIDGE.History.Rolls.${r}`), selected: r === f.rolls })),
    entries: (view.page?.entries ?? []).map((e) => entryView(e, { isGM, ruleset })),
    empty: Boolean(view.page) && !view.page.entries.length,
    older: Boolean(view.page?.next_before),
    newer: view.newer,
    statsOptions: [
      { id: "", label: i18n.localize("FATEBRIDGE.History.World"), selected: !statsFor },
      ...Object.keys(view.stats?.characters ?? {}).map((id) => ({ id, label: names[id] ?? id, selected: id === statsFor }))
    ],
    chart: chartView(distribution)
  };
}
