// The way from the Foundry page to the bridge (issue 33 item 2): the pure classifier in
// foundry-module/scripts/net/reach.mjs, the permission query, and the one line the module shows
// (lang/en.json through game.i18n.format on the fake Foundry).
import assert from "node:assert/strict";
import path from "node:path";
import { before, describe, test } from "node:test";
import { MODULE_DIR, bootNodeFoundry } from "./support/node-foundry.mjs";

let reach;
let game;
let connection;
const line = (page, url) => {
  const p = reach.classifyPath(page, url);
  return { kind: p.kind, ok: p.ok, text: game.i18n.format(`FATEBRIDGE.Reach.${p.key}`, p.data) };
};

before(async () => {
  const foundry = await bootNodeFoundry({ users: [{ id: "gmUser000000001", name: "GM", isGM: true, role: 4 }], userId: "gmUser000000001" });
  foundry.Hooks.callAll("init");
  game = foundry.game;
  reach = await import(path.join(MODULE_DIR, "scripts/net/reach.mjs"));
  connection = await import(path.join(MODULE_DIR, "scripts/net/connection.mjs"));
});

describe("the page and the bridge", () => {
  test("a Foundry on this computer reaches a bridge on this computer: nothing in the way", () => {
    for (const page of ["http://localhost:30000/game", "http://127.0.0.1:30000/game", "http://[::1]:30000/game"]) {
      const { kind, ok, text } = line(page, "http://127.0.0.1:8765");
      assert.deepEqual([kind, ok], ["same_machine", true], page);
      assert.match(text, /both on this computer/);
    }
  });

  test("an https Foundry reaches the GM's own bridge after one Local Network Access prompt", () => {
    const { kind, ok, text } = line("https://table.forge-vtt.com/game", "http://127.0.0.1:8765");
    assert.deepEqual([kind, ok], ["prompt", true]);
    assert.match(text, /Chrome and Edge 147\+ ask once for "Local network access"/);
    assert.match(text, /Safari does not allow it/);
    assert.doesNotMatch(text, /Firefox allows/);
  });

  test("an http Foundry on the LAN or the internet cannot reach a loopback bridge: the line names the page, the cause and the fix", () => {
    const lan = line("http://192.168.1.20:30000/game", "http://127.0.0.1:8765");
    assert.deepEqual([lan.kind, lan.ok], ["blocked_insecure", false]);
    assert.equal(lan.text, "This Foundry page is http://192.168.1.20:30000; Chrome 147+ blocks it from reaching your computer's bridge (http://127.0.0.1:8765). Run the bridge on the Foundry server (192.168.1.20) and set the Bridge URL to it, or serve Foundry over https.");
    const vps = line("http://my-vps.example.org:30000/game", "http://localhost:8765");
    assert.equal(vps.kind, "blocked_insecure");
    assert.match(vps.text, /Run the bridge on the Foundry server \(my-vps\.example\.org\)/);
    // A public http page cannot reach the LAN either.
    assert.equal(line("http://my-vps.example.org:30000/game", "http://192.168.1.5:8765").kind, "blocked_insecure");
  });

  test("an http Foundry reaches a bridge at its own host or at a less private address", () => {
    assert.equal(line("http://192.168.1.20:30000/game", "http://192.168.1.20:8765").kind, "direct");
    assert.equal(line("http://192.168.1.20:30000/game", "http://10.0.0.4:8765").kind, "direct");
    assert.equal(line("http://my-vps.example.org:30000/game", "http://my-vps.example.org:8765").kind, "direct");
    assert.equal(line("http://my-vps.example.org:30000/game", "https://bridge.example.net").kind, "direct");
  });

  test("an https page may not open plain ws:// to another machine (mixed content); wss:// is fine", () => {
    const mixed = line("https://foundry.example.org/game", "http://foundry.example.org:8765");
    assert.deepEqual([mixed.kind, mixed.ok], ["mixed_content", false]);
    assert.match(mixed.text, /may not open plain ws:\/\/ to http:\/\/foundry\.example\.org:8765/);
    assert.equal(line("https://foundry.example.org/game", "ws://192.168.1.5:8765").kind, "mixed_content");
    assert.equal(line("https://foundry.example.org/game", "wss://foundry.example.org").kind, "direct");
    assert.equal(line("https://foundry.example.org/game", "https://bridge.example.org").kind, "direct");
  });

  test("a Bridge URL with a path or a typo gets one clear line naming what is wrong", () => {
    const cases = {
      "http://127.0.0.1:8765/fate": /has a path or query after the port/,
      "http://127.0.0.1:8765/?x=1": /has a path or query/,
      "127.0.0.1:8765": /must start with http:\/\//,
      "localhost:8765": /must start with http:\/\//,
      "htp://127.0.0.1:8765": /must start with http:\/\//,
      "ftp://127.0.0.1:8765": /must start with http:\/\//,
      "http://": /names no host/,
      "http://:8765": /names no host/,
      "": /names no host/,
      "http://127.0.0.1:87650": /port that is not a number from 1 to 65535/,
      "http://127.0.0.1:0": /port that is not a number/,
      "http://127.0.0.1:80a": /port that is not a number/,
      "http://gm:secret@127.0.0.1:8765": /user name or password/,
      "http://exa mple.org:8765": /is not an address/
    };
    for (const [url, pattern] of Object.entries(cases)) {
      const { kind, ok, text } = line("http://localhost:30000/game", url);
      assert.deepEqual([kind, ok], ["bad_url", false], url);
      assert.match(text, pattern, url);
      assert.ok(!text.includes("\n") && !/FATEBRIDGE/.test(text), `one rendered line for ${url}`);
    }
    // A trailing slash, ws:// and IPv6 are addresses.
    for (const url of ["http://127.0.0.1:8765/", "ws://127.0.0.1:8765", "http://[::1]:8765", "https://bridge.example.org"]) {
      assert.equal(reach.parseBridgeUrl(url).ok, true, url);
    }
  });

  test("address spaces: loopback, the local network, public", () => {
    const { addressSpace, SPACE } = reach;
    for (const h of ["localhost", "app.localhost", "127.0.0.1", "127.8.9.1", "[::1]"]) assert.equal(addressSpace(h), SPACE.loopback, h);
    for (const h of ["10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.20", "169.254.1.1", "[fd00::2]", "[fe80::1]", "nas.local", "gaming-pc"]) assert.equal(addressSpace(h), SPACE.local, h);
    for (const h of ["172.32.0.1", "8.8.8.8", "example.org", "table.forge-vtt.com", "[2001:db8::1]"]) assert.equal(addressSpace(h), SPACE.public, h);
  });
});

describe("the browser's Local Network Access permission", () => {
  const permissions = (states) => ({
    queried: [],
    async query({ name }) {
      this.queried.push(name);
      if (!(name in states)) throw new TypeError(`'${name}' is not a valid permission name`);
      return { state: states[name] };
    }
  });

  test("both names are asked: loopback-network (Chrome's now) and local-network-access (its alias)", async () => {
    const p = permissions({ "loopback-network": "denied", "local-network-access": "granted" });
    assert.equal(await reach.localNetworkPermission(p), "denied", "a denial under either name counts");
    assert.deepEqual(p.queried, ["loopback-network", "local-network-access"]);
    assert.equal(await reach.localNetworkPermission(permissions({ "local-network-access": "granted" })), "granted", "older Chrome knows only the alias");
    assert.equal(await reach.localNetworkPermission(permissions({ "loopback-network": "prompt" })), "prompt");
    assert.equal(await reach.localNetworkPermission(permissions({})), null, "a browser with neither (Firefox, Safari)");
    assert.equal(await reach.localNetworkPermission(undefined), null, "no Permissions API");
  });
});

describe("the connection says so", () => {
  test("a Bridge URL that is no address is refused before dialing, with its line", async () => {
    let dialed = 0;
    const manager = new connection.ConnectionManager({ url: "http://127.0.0.1:8765/fate", world: "w", role: "player", user: "u", ioFactory: () => { dialed += 1; return () => ({}); } });
    await manager.connect();
    assert.equal(manager.status.state, "refused");
    assert.equal(manager.status.reason, "bad_url");
    assert.match(manager.status.message, /has a path or query after the port/);
    assert.equal(dialed, 0);
  });

  test("a GM with no key in this browser is told it plays through Foundry while another GM relays", async () => {
    const manager = new connection.ConnectionManager({ url: "http://127.0.0.1:8765", world: "w", role: "gm", user: "gmUser000000001", key: "", ioFactory: () => { throw new Error("no dial"); } });
    await manager.connect();
    assert.deepEqual([manager.status.state, manager.status.reason], ["refused", "no_key"]);
    const { statusText } = await import(path.join(MODULE_DIR, "scripts/net/status.mjs"));
    assert.match(statusText(manager.status).detail, /No GM key in this browser: this GM plays through Foundry while another GM's browser relays/);
  });

  test("an http LAN page whose bridge URL is loopback: the failed connection names the cause and the fix", async () => {
    globalThis.location = new URL("http://192.168.1.20:30000/game");
    try {
      const problem = connection.pathProblem("http://127.0.0.1:8765");
      assert.equal(problem.reason, "path_blocked");
      assert.match(problem.message, /^This Foundry page is http:\/\/192\.168\.1\.20:30000; Chrome 147\+ blocks it from reaching your computer's bridge/);
      assert.equal(connection.pathProblem("http://192.168.1.20:8765"), null);
    } finally {
      delete globalThis.location;
    }
  });
});
