/**
 * A small status badge: at the top of the players list when there is one, else floating.
 * Shows the reason in words when the bridge refused the connection.
 * @module status
 */
import { PLAYERS_ELEMENT_ID } from "../foundry/compat.mjs";
import { connectionSettings } from "./settings.mjs";

const STATUS_ELEMENT_ID = "fate-bridge-status";

/** @type {import("./connection.mjs").ConnectionStatus} */
let current = { state: "offline", reason: null, message: null };

/** socket.io's reasons for a dropped connection, and the module's own, by lang key. */
const DROP_REASONS = Object.freeze({
  "io server disconnect": "server_disconnect",
  "io client disconnect": "closed",
  "ping timeout": "ping_timeout",
  "transport close": "transport_close",
  "transport error": "transport_error",
  "parse error": "transport_error",
  closed: "closed"
});

/**
 * Text shown for a status, in words a player understands: a refusal or a failed or dropped
 * connection says why (naming the bridge URL it tried); a cause the module has no words for
 * says the bridge is not reachable and that it tries again. `raw`: the transport's or the
 * bridge's own words, for the tooltip only.
 * @param {import("./connection.mjs").ConnectionStatus} status
 * @returns {{label: string, detail: string, raw: string}}
 */
export function statusText(status) {
  const i18n = game.i18n;
  const label = i18n.localize(`FATEBRIDGE.Status.${status.state}`);
  const url = connectionSettings().url;
  const raw = status.message ?? "";
  const said = (reason) => {
    const key = `FATEBRIDGE.Status.Reason.${reason}`;
    const text = reason ? i18n.format(key, { url }) : key;
    return text === key ? null : text;
  };
  const known = said(status.reason) ?? said(DROP_REASONS[status.reason]);
  if (known) return { label, detail: known, raw };
  // The relay's and the connection's own messages are already in words (lang files).
  if (status.state === "connected" || status.state === "connecting" || LOCALISED.has(status.reason)) {
    return { label, detail: raw, raw };
  }
  if (status.state === "refused") return { label, detail: raw || status.reason || "", raw };
  return { label, detail: i18n.format("FATEBRIDGE.Status.Reason.other", { url }), raw };
}

/**
 * Reasons whose message the module wrote itself from its lang files: the relay's (relay.mjs) and
 * the way from the page to the bridge (reach.mjs, through connection.mjs).
 */
const LOCALISED = new Set(["no_gm", "waiting_gm", "gm_offline", "protocol_mismatch", "path_blocked", "bad_url"]);

/**
 * Show a status (and remember it for re-placement after the players list re-renders).
 * @param {import("./connection.mjs").ConnectionStatus} [status]
 */
export function showStatus(status = current) {
  current = status;
  if (typeof document === "undefined") return;
  let el = document.getElementById(STATUS_ELEMENT_ID);
  if (!el) {
    el = document.createElement("div");
    el.id = STATUS_ELEMENT_ID;
    el.setAttribute("role", "status");
    el.innerHTML = '<span class="fate-bridge-status__dot" aria-hidden="true"></span>'
      + '<span class="fate-bridge-status__label"></span><span class="fate-bridge-status__detail"></span>';
  }
  place(el);
  const { label, detail, raw } = statusText(status);
  el.className = `fate-bridge-status fate-bridge-status--${status.state}`;
  el.dataset.state = status.state;
  el.dataset.reason = status.reason ?? "";
  el.querySelector(".fate-bridge-status__label").textContent = `${game.i18n.localize("FATEBRIDGE.Title")}: ${label}`;
  const detailEl = el.querySelector(".fate-bridge-status__detail");
  detailEl.textContent = status.state === "connected" ? "" : detail;
  el.title = raw && raw !== detail ? `${detail} (${raw})` : detail;
}

/** @param {HTMLElement} el */
function place(el) {
  const players = document.getElementById(PLAYERS_ELEMENT_ID);
  if (players) {
    if (el.parentElement !== players) players.prepend(el);
    el.classList.remove("fate-bridge-status--floating");
  } else if (!el.isConnected) {
    document.body.append(el);
  }
  if (!players) el.classList.add("fate-bridge-status--floating");
}
