// Installs the fake Foundry in this page, then loads the module's real scripts and starts it.
// Query: ?bridge=URL&world=ID&key=KEY&user=ID&system=ID&actors=fco (FCO 4.7 default characters:
// the Core and Condensed fixtures instead of Zird and the ogre); &foundry=URL joins a fake Foundry
// server (tests/js/support/foundry-server.mjs), so pages of one table hear each other on the
// module's socket, and Foundry says who is active; &mode=direct|relay (default: direct without
// a Foundry server, as a lone GM page is tested; relay with one); &generation=14 runs the page as
// Foundry 14 (default 13); &npcs=goblin adds a goblin NPC beside Zird and the ogre;
// &user=pageAssistant001 is the table's assistant GM (Foundry role 3).
import { install } from "/tests/js/support/fake-foundry.mjs";
import { goblin, ogre, zird } from "/tests/js/fixtures/actors.mjs";
import { fcoActorClass, installFcoStandIn } from "/tests/js/support/fco-stand-in.mjs";

const q = new URLSearchParams(location.search);
// ?noio=1: a page without a global `io`, so the module must load its packed fallback.
if (q.get("noio") === "1") delete window.io;
const ANN = { id: "pagePlayerAnn001", name: "Ann", isGM: false, active: false };
const GM = { id: q.get("gm") ?? "pageGmUser000001", name: "Gamemaster", isGM: true };
// Foundry's assistant role (3): a GM of the table too.
const ASSISTANT = { id: "pageAssistant001", name: "Assistant", isGM: true, role: 3, active: false };
if (!q.get("gm") && q.get("user") && ![ANN.id, ASSISTANT.id].includes(q.get("user"))) GM.id = q.get("user");
const userId = q.get("user") ?? GM.id;
const foundryServer = q.get("foundry");
const mode = q.get("mode") ?? (foundryServer ? "relay" : "direct");
const loadText = async (p) => {
  const res = await fetch(`/foundry-module/${p.replace(/^\/?modules\/fate-bridge\//, "")}`);
  if (!res.ok) throw new Error(`${p}: ${res.status}`);
  return res.text();
};
// &lang=de|es|pt-BR: the client's language (its file, English the fallback, as Foundry reads).
const language = q.get("lang") ?? "en";
const english = await (await fetch("/foundry-module/lang/en.json")).json();
const lang = language === "en" ? english : await (await fetch(`/foundry-module/lang/${language}.json`)).json();
// Foundry knows an installed module's version from its module.json.
const { version } = await (await fetch("/foundry-module/module.json")).json();
const fixture = async (name) => (await fetch(`/tests/js/fixtures/fco-${name}.json`)).json();
const actors = q.get("actors") === "fco"
  ? [await fixture("fate-core"), await fixture("fate-condensed")]
  : [zird("pagePlayerAnn001"), ogre(), ...(q.get("npcs") === "goblin" ? [goblin()] : [])];

const foundry = install({
  Handlebars: window.Handlebars,
  loadText,
  lang,
  language,
  fallbackLang: english,
  users: [GM, ANN, ASSISTANT],
  userId,
  module: { version },
  // Without a Foundry server nobody tells the page who is active: the GM is.
  activeGM: foundryServer ? undefined : GM.id,
  foundryServer,
  foundryIo: window.io,
  systemId: q.get("system") ?? "fate-core-official",
  generation: Number(q.get("generation") ?? 13),
  // fate-core-official's Actor class (on Foundry 14 it leaves `statuses` empty).
  actorClass: (q.get("system") ?? "fate-core-official") === "fate-core-official" ? fcoActorClass : undefined,
  actors,
  settings: {
    "fate-bridge.bridgeUrl": q.get("bridge") ?? "http://127.0.0.1:8765",
    "fate-bridge.worldId": q.get("world") ?? "default",
    "fate-bridge.gmKey": q.get("key") ?? "",
    "fate-bridge.connectionMode": mode
  }
});
// fate-core-official's own chat hooks and skill listener, as its code behaves (issue 8).
if ((q.get("system") ?? "fate-core-official") === "fate-core-official") installFcoStandIn(foundry);
await import("/foundry-module/scripts/main.mjs");
await foundry.foundryConnected;
foundry.start();
foundry.renderActorSheet(actors[0]._id);
window.fakeFoundry = foundry;
// For the tests' page.evaluate calls into the module: the promise they await, kept reachable
// until it settles. The inspector holds an awaited promise weakly, and Chromium may collect a
// pending one that only the module's own chain of awaits reaches ("Resulting promise was
// garbage collected").
const kept = new Set();
window.settled = (value) => {
  const promise = Promise.resolve(value).finally(() => kept.delete(promise));
  kept.add(promise);
  return promise;
};
document.body.dataset.booted = "true";
