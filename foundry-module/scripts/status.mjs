/**
 * A small status badge: at the top of the players list when there is one, else floating.
 * Shows the reason in words when the bridge refused the connection.
 * @module status
 */
import { PLAYERS_ELEMENT_ID } from "./compat.mjs";
import { connectionSettings } from "./settings.mjs";

export const STATUS_ELEMENT_ID = "fate-bridge-status";

/** @type {import("./connection.mjs").ConnectionStatus} */
let current = { state: "offline", reason: null, message: null };

/**
 * Text shown for a status: a refusal or a failed connection says why in words (naming the
 * bridge URL it tried), anything else shows the transport's or the relay's own message.
 * @param {import("./connection.mjs").ConnectionStatus} status
 */
export function statusText(status) {
  const i18n = game.i18n;
  const label = i18n.localize(`FATEBRIDGE.Status.${status.state}`);
  const key = `FATEBRIDGE.Status.Reason.${status.reason}`;
  const known = status.reason ? i18n.format(key, { url: connectionSettings().url }) : key;
  if (known !== key) return { label, detail: known };
  if (status.state !== "refused") return { label, detail: status.message ?? "" };
  return { label, detail: status.message ?? status.reason ?? "" };
}

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
  const { label, detail } = statusText(status);
  el.className = `fate-bridge-status fate-bridge-status--${status.state}`;
  el.dataset.state = status.state;
  el.dataset.reason = status.reason ?? "";
  el.querySelector(".fate-bridge-status__label").textContent = `${game.i18n.localize("FATEBRIDGE.Title")}: ${label}`;
  const detailEl = el.querySelector(".fate-bridge-status__detail");
  detailEl.textContent = status.state === "connected" ? "" : detail;
  el.title = detail;
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
