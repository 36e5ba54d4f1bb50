/**
 * The roll history anchored outside the bridge (DESIGN Trust): every bridge card keeps the
 * `{seq, hash}` of the last event behind it in its message's flags (`flags["fate-bridge"].anchor`).
 * The GM checks the bridge's log against them ("Verify history", intent `world.verify`) or
 * exports them for `python -m bridge world verify ID --chat-log FILE`.
 * @module anchors
 */
import { saveFile } from "../foundry/compat.mjs";
import { MODULE_ID } from "../protocol.mjs";

/** The bridge takes anchors in pages this size (`ANCHOR_PAGE` in the protocol). */
const ANCHOR_PAGE = 500;
/** The export file's format name and version (schemas/history_anchors.json). */
const ANCHORS_FORMAT = "fate-bridge.history-anchors";

const HASH = /^[0-9a-f]{64}$/;

/**
 * Every anchor Foundry's chat log holds, one per distinct event, oldest first.
 * @returns {{seq: number, hash: string}[]}
 */
export function chatLogAnchors() {
  const bySeq = new Map();
  for (const message of game.messages.contents) {
    const anchor = message.flags?.[MODULE_ID]?.anchor;
    if (!Number.isSafeInteger(anchor?.seq) || anchor.seq < 1 || !HASH.test(anchor?.hash ?? "")) continue;
    bySeq.set(`${anchor.seq}:${anchor.hash}`, { seq: anchor.seq, hash: anchor.hash });
  }
  return [...bySeq.values()].sort((a, b) => a.seq - b.seq);
}

/** The export document `world verify --chat-log` reads. */
function historyAnchorsExport() {
  return {
    format: ANCHORS_FORMAT,
    version: 1,
    world: game.settings.get(MODULE_ID, "worldId"),
    exported_at: new Date().toISOString(),
    anchors: chatLogAnchors()
  };
}

/** Save the export as a JSON file (GM only: the chat log the GM sees is the whole log). */
export function exportHistoryAnchors() {
  if (!game.user.isGM) return null;
  const doc = historyAnchorsExport();
  saveFile(JSON.stringify(doc, null, 2), "application/json", `fate-bridge-${doc.world}-anchors.json`);
  return doc;
}

/**
 * GM only: ask the bridge to verify its log, with the chat log's anchors page by page, and tell
 * the GM the result (kept as the Bridge's `lastVerify`, for the scene panel). Resolves to the
 * combined report, or null when refused or offline.
 * @param {import("../net/bridge.mjs").Bridge} bridge
 */
export async function verifyHistory(bridge) {
  if (!game.user.isGM) return null;
  const anchors = chatLogAnchors();
  const pages = [];
  for (let i = 0; i < anchors.length; i += ANCHOR_PAGE) pages.push(anchors.slice(i, i + ANCHOR_PAGE));
  if (!pages.length) pages.push([]);
  const reports = [];
  for (const page of pages) {
    const report = await bridge.send("world.verify", { anchors: page });
    if (!report) return null;
    reports.push(report);
  }
  const mismatched = reports.flatMap((r) => r.anchors_mismatched);
  const combined = {
    ...reports[0],
    ok: reports.every((r) => r.ok),
    anchors_checked: reports.reduce((n, r) => n + r.anchors_checked, 0),
    anchors_mismatched: mismatched,
    anchors_mismatched_count: reports.reduce((n, r) => n + r.anchors_mismatched_count, 0),
    problems: [...new Set(reports.flatMap((r) => r.problems))]
  };
  bridge.lastVerify = combined;
  if (combined.ok) {
    ui.notifications.info(game.i18n.format("FATEBRIDGE.Anchors.Verified", { events: combined.events, anchors: combined.anchors_checked }));
  } else if (combined.anchors_mismatched_count) {
    ui.notifications.error(game.i18n.format("FATEBRIDGE.Anchors.Rewritten", { count: combined.anchors_mismatched_count, seq: mismatched[0]?.seq ?? "?" }), { permanent: true });
  } else {
    ui.notifications.error(game.i18n.format("FATEBRIDGE.Anchors.Broken", { problem: combined.problems.join("; ") }), { permanent: true });
  }
  return combined;
}
