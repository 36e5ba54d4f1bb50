/**
 * "Check connection" (a settings menu, ApplicationV2): each check between this browser and the
 * bridge with its result, one line each: the Bridge URL, the way from this page
 * (reach.mjs), the browser's Local Network Access permission, /healthz answering, the live
 * WebSocket, protocol and version, the GM key, and which GM relays.
 * @module check-connection
 */
import { renderTemplate } from "../foundry/compat.mjs";
import { MODULE_ID, PROTOCOL_VERSION } from "../protocol.mjs";
import { classifyPath, localNetworkPermission, parseBridgeUrl } from "./reach.mjs";
import { CONNECTION_MODES, connectionSettings } from "./settings.mjs";
import { statusText } from "./status.mjs";

const CHECK_TEMPLATE = `modules/${MODULE_ID}/templates/check-connection.hbs`;
const CHECK_ID = "fate-bridge-check";
const HEALTH_TIMEOUT_MS = 5000;

/**
 * @typedef {object} CheckRow
 * @property {string} id
 * @property {string} label
 * @property {"ok"|"warn"|"fail"} result
 * @property {string} text  one line: what was found, and what to do when it is a problem
 */

/**
 * Run every check once.
 * @param {import("./bridge.mjs").Bridge} bridge
 * @param {{fetch?: typeof fetch, permissions?: object, pageHref?: string}} [env]  the browser's (tests may pass their own)
 * @returns {Promise<CheckRow[]>}
 */
async function connectionChecks(bridge, env = {}) {
  const i18n = game.i18n;
  const t = (key, data) => i18n.format(`FATEBRIDGE.${key}`, data ?? {});
  const row = (id, result, text) => ({ id, label: t(`Reach.Check.${id}`), result, text });
  const { url, mode } = connectionSettings();
  const relayed = mode === CONNECTION_MODES.relay && !game.user?.isGM;
  const rows = [];

  const address = parseBridgeUrl(url);
  const path = classifyPath(env.pageHref ?? globalThis.location?.href ?? "", url);
  const pathLine = t(`Reach.${path.key}`, path.data);
  const permission = await localNetworkPermission(env.permissions ?? globalThis.navigator?.permissions);
  rows.push(address.ok ? row("Url", "ok", t("Reach.Check.UrlOk", { url: address.http })) : row("Url", "fail", pathLine));
  if (address.ok) {
    // A player in relay mode never dials the bridge: its page's way there is the GMs' concern.
    const asks = path.kind === "prompt" && permission !== "granted";
    const result = path.ok ? (asks ? "warn" : "ok") : relayed ? "warn" : "fail";
    rows.push(row("Path", result, pathLine));
  }

  rows.push(permissionRow(path, permission, row, t));

  if (!address.ok) rows.push(row("Health", "warn", t("Reach.Check.HealthSkipped")));
  else rows.push(await healthRow(address.http, env.fetch ?? globalThis.fetch, row, t, relayed));

  const status = bridge.status;
  const hostId = bridge.roster?.electedHost() ?? null;
  const hostName = game.users.get(hostId)?.name ?? "";
  if (status.state === "connected") {
    rows.push(row("Socket", "ok", relayed ? t("Reach.Check.SocketRelayed", { gm: hostName }) : t("Reach.Check.SocketOk")));
  } else {
    // A GM without the key while another GM relays: no connection of its own, by choice.
    const result = status.reason === "no_key" && hostId ? "warn" : "fail";
    rows.push(row("Socket", result, t("Reach.Check.SocketFail", { detail: statusText(status).detail || statusText(status).label })));
  }

  const hello = bridge.hello;
  if (hello && Number.isInteger(hello.protocol)) {
    const same = hello.protocol === PROTOCOL_VERSION;
    rows.push(row("Protocol", same ? "ok" : "fail", same
      ? t("Reach.Check.ProtocolOk", { version: hello.bridge_version ?? "?", protocol: hello.protocol, ours: PROTOCOL_VERSION })
      : t("Reach.Check.ProtocolMismatch", { protocol: hello.protocol, ours: PROTOCOL_VERSION })));
  } else {
    rows.push(row("Protocol", "warn", t("Reach.Check.ProtocolUnknown")));
  }

  if (!game.user?.isGM) rows.push(row("Key", "ok", t("Reach.Check.KeyPlayer")));
  else if (status.reason === "no_key") rows.push(row("Key", "warn", t("Reach.Check.KeyMissing")));
  else if (status.reason === "bad_key") rows.push(row("Key", "fail", t("Reach.Check.KeyWrong")));
  else if (status.state === "connected" && hello?.role === "gm") rows.push(row("Key", "ok", t("Reach.Check.KeyOk")));
  else rows.push(row("Key", "warn", t("Reach.Check.KeyUnknown")));

  if (mode === CONNECTION_MODES.direct) rows.push(row("Relay", "ok", t("Reach.Check.RelayDirect")));
  else if (!hostId) rows.push(row("Relay", "fail", t("Reach.Check.RelayNone")));
  else if (hostId === game.user?.id) rows.push(row("Relay", "ok", t("Reach.Check.RelaySelf", { gm: hostName })));
  else rows.push(row("Relay", "ok", t("Reach.Check.RelayOther", { gm: hostName })));
  return rows;
}

/**
 * The Local Network Access permission as far as it matters for this way to the bridge: not at
 * all between two addresses of the same rank; never grantable to an http page; else its state.
 */
function permissionRow(path, permission, row, t) {
  if (path.kind === "blocked_insecure") return row("Permission", "fail", t("Reach.Permission.insecure"));
  if (path.kind !== "prompt") return row("Permission", "ok", t("Reach.Permission.notNeeded"));
  const result = permission === "denied" ? "fail" : permission === "prompt" ? "warn" : "ok";
  return row("Permission", result, t(`Reach.Permission.${permission ?? "none"}`));
}

/**
 * Ask the bridge's /healthz. The bridge sends no CORS headers, so the answer is opaque: that it
 * came is the check (the browser blocks this request where it would block the WebSocket).
 */
async function healthRow(base, fetchImpl, row, t, relayed) {
  if (typeof fetchImpl !== "function") return row("Health", "warn", t("Reach.Check.HealthSkipped"));
  try {
    const signal = globalThis.AbortSignal?.timeout?.(HEALTH_TIMEOUT_MS);
    await fetchImpl(`${base}/healthz`, { mode: "no-cors", cache: "no-store", signal });
    return row("Health", "ok", t("Reach.Check.HealthOk", { url: base }));
  } catch {
    return row("Health", relayed ? "warn" : "fail", t("Reach.Check.HealthFail", { url: base }));
  }
}

/**
 * The ApplicationV2 subclass the settings menu opens (made at `init`, once Foundry's classes
 * exist), checking this client's bridge.
 * @param {import("./bridge.mjs").Bridge} bridge
 */
export function checkWindowClass(bridge) {
  const { ApplicationV2 } = foundry.applications.api;
  return class FateBridgeCheckConnection extends ApplicationV2 {
    static DEFAULT_OPTIONS = {
      id: CHECK_ID,
      classes: ["fate-bridge-check"],
      tag: "section",
      window: { title: "FATEBRIDGE.Reach.Check.Title", icon: "fa-solid fa-plug-circle-check", resizable: true },
      position: { width: 620, height: "auto" },
      actions: {
        async again() {
          await this.render();
        }
      }
    };

    async _prepareContext() {
      const rows = await connectionChecks(bridge);
      const words = { ok: "Reach.Check.Ok", warn: "Reach.Check.Warn", fail: "Reach.Check.Fail" };
      return { rows: rows.map((r) => ({ ...r, word: game.i18n.localize(`FATEBRIDGE.${words[r.result]}`) })) };
    }

    async _renderHTML(context) {
      return renderTemplate(CHECK_TEMPLATE, context);
    }

    _replaceHTML(result, content) {
      content.innerHTML = result;
    }
  };
}
