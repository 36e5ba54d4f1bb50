/**
 * Whether the Foundry page may reach the bridge at all, from the page's address and the bridge
 * URL alone (no network): browsers rank addresses as public < local network < this computer
 * (loopback), and a page may not reach a more private address than its own freely:
 *  - Chrome 147+ puts WebSockets under Local Network Access: an https page asks once ("Local
 *    network access" / "loopback-network"); an insecure (http) page is denied outright, except
 *    a page that is itself on this computer.
 *  - An https page may not open ws:// (plain http) to another machine (mixed content); loopback
 *    counts as secure.
 * Pure: the same answer in a test, a settings window and the connection's status.
 * @module reach
 */

/** The ranks of address space, least private first. */
export const SPACE = Object.freeze({ public: 0, local: 1, loopback: 2 });

const SCHEMES = new Set(["http:", "https:", "ws:", "wss:"]);

/**
 * The address space of a host name as the URL parser gives it (IPv6 in brackets).
 * @param {string} host
 * @returns {0|1|2}
 */
export function addressSpace(host) {
  const h = String(host ?? "").toLowerCase().replace(/^\[|\]$/g, "");
  if (h === "localhost" || h.endsWith(".localhost") || h === "::1" || /^127\./.test(h)) return SPACE.loopback;
  if (/^10\./.test(h) || /^192\.168\./.test(h) || /^169\.254\./.test(h)) return SPACE.local;
  const m = /^172\.(\d+)\./.exec(h);
  if (m && Number(m[1]) >= 16 && Number(m[1]) <= 31) return SPACE.local;
  if (/^f[cd][0-9a-f]{2}:/.test(h) || /^fe[89ab][0-9a-f]:/.test(h)) return SPACE.local;
  // A single-label name (a LAN host name) or mDNS resolves to the local network.
  if (h.endsWith(".local") || (!h.includes(".") && !h.includes(":"))) return SPACE.local;
  return SPACE.public;
}

/**
 * @typedef {object} BridgeAddress
 * @property {boolean} ok
 * @property {string} [problem]  when not ok: "unparseable"|"bad_scheme"|"no_host"|"bad_port"|"has_path"|"has_credentials"
 * @property {URL} [url]        when ok
 * @property {boolean} [secure]  https:/wss:
 * @property {string} [http]    the bridge's http(s) base, e.g. for /healthz
 */

/**
 * Read a Bridge URL setting: a scheme (http, https, ws, wss), a host, an optional port, and
 * nothing after it (Socket.IO reads a path as its namespace, so a path never works).
 * @param {string} text
 * @returns {BridgeAddress}
 */
export function parseBridgeUrl(text) {
  const raw = String(text ?? "").trim();
  if (!raw) return { ok: false, problem: "no_host" };
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(raw);
  if (!scheme || !SCHEMES.has(`${scheme[1].toLowerCase()}:`)) return { ok: false, problem: "bad_scheme" };
  // A port the URL parser would refuse: out of range or not a number.
  const port = /^[a-z]+:\/\/(?:[^/?#@]*@)?(?:\[[^\]]*\]|[^/:?#]*):([^/?#]*)/i.exec(raw);
  if (port && !(/^\d{1,5}$/.test(port[1]) && Number(port[1]) >= 1 && Number(port[1]) <= 65535)) {
    return { ok: false, problem: "bad_port" };
  }
  let url;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, problem: /^[a-z]+:\/\/(?:[^/?#@]*@)?(?:[:/?#]|$)/i.test(raw) ? "no_host" : "unparseable" };
  }
  if (!SCHEMES.has(url.protocol)) return { ok: false, problem: "bad_scheme" };
  if (!url.hostname) return { ok: false, problem: "no_host" };
  if (url.username || url.password) return { ok: false, problem: "has_credentials" };
  if (url.pathname.replace(/\/+$/, "") !== "" || url.search || url.hash) return { ok: false, problem: "has_path" };
  const secure = url.protocol === "https:" || url.protocol === "wss:";
  return { ok: true, url, secure, http: `${secure ? "https" : "http"}://${url.host}` };
}

/**
 * @typedef {object} ReachPath
 * @property {"same_machine"|"prompt"|"direct"|"blocked_insecure"|"mixed_content"|"bad_url"} kind
 * @property {boolean} ok        false: this browser will not open it, whatever runs there
 * @property {string} key       the lang key under FATEBRIDGE.Reach of the one-line explanation
 * @property {Record<string, string>} data  the line's placeholders: page, url, host, detail
 */

/**
 * The way from this page to the bridge:
 *  - "bad_url": the setting cannot be a bridge address (which part, in `key`);
 *  - "mixed_content": an https page, a plain ws:// bridge on another machine;
 *  - "blocked_insecure": an http page, a bridge on a more private address (Chrome 147+);
 *  - "prompt": an https page, a more private bridge: fine once the browser's Local Network
 *    Access prompt is allowed;
 *  - "same_machine": page and bridge both on this computer;
 *  - "direct": the bridge is no more private than the page: nothing in the way.
 * @param {string} pageHref  the Foundry page's address (`location.href`)
 * @param {string} bridgeUrl the Bridge URL setting
 * @returns {ReachPath}
 */
export function classifyPath(pageHref, bridgeUrl) {
  const bridge = parseBridgeUrl(bridgeUrl);
  let page = null;
  try {
    page = new URL(String(pageHref ?? ""));
  } catch {
    page = null;
  }
  const pageText = page ? page.origin : String(pageHref ?? "");
  if (!bridge.ok) {
    return { kind: "bad_url", ok: false, key: `BadUrl.${bridge.problem}`, data: { url: String(bridgeUrl ?? "").trim(), page: pageText, host: "" } };
  }
  const url = bridge.http;
  const host = bridge.url.hostname;
  const data = { page: pageText, url, host, pageHost: page?.hostname ?? "" };
  if (!page || !/^https?:$/.test(page.protocol)) return { kind: "direct", ok: true, key: "Path.direct", data };
  const pageSpace = addressSpace(page.hostname);
  const bridgeSpace = addressSpace(host);
  const pageSecure = page.protocol === "https:";
  if (pageSecure && !bridge.secure && bridgeSpace !== SPACE.loopback) return { kind: "mixed_content", ok: false, key: "Path.mixed_content", data };
  if (pageSpace === SPACE.loopback && bridgeSpace === SPACE.loopback) return { kind: "same_machine", ok: true, key: "Path.same_machine", data };
  if (bridgeSpace <= pageSpace) return { kind: "direct", ok: true, key: "Path.direct", data };
  if (!pageSecure) {
    const key = bridgeSpace === SPACE.loopback ? "Path.blocked_loopback" : "Path.blocked_local";
    return { kind: "blocked_insecure", ok: false, key, data };
  }
  return { kind: "prompt", ok: true, key: "Path.prompt", data };
}

/**
 * The browser's Local Network Access permission: Chrome's `loopback-network` and its alias
 * `local-network-access` (older Chrome knows only the latter). "denied" if either is, else
 * "granted" if either is, else "prompt", else null where the browser has neither.
 * @param {{query: (d: {name: string}) => Promise<{state: string}>}} [permissions]
 * @returns {Promise<"granted"|"prompt"|"denied"|null>}
 */
export async function localNetworkPermission(permissions = globalThis.navigator?.permissions) {
  const states = [];
  for (const name of ["loopback-network", "local-network-access"]) {
    try {
      const status = await permissions?.query({ name });
      if (status?.state) states.push(status.state);
    } catch {
      // This browser has no permission of that name.
    }
  }
  for (const state of ["denied", "granted", "prompt"]) if (states.includes(state)) return state;
  return null;
}
