/**
 * The fake Foundry of the unit suites that need no bridge (the R13 suites): the module's real
 * code booted in a fate-core-official world whose bridge is never reached.
 */
import path from "node:path";
import { pathToFileURL } from "node:url";
import { MODULE_DIR, bootNodeFoundry } from "./node-foundry.mjs";
import { loadValidators } from "./schemas.mjs";

/**
 * Boot the fake Foundry with the module: a fate-core-official world of `users` and `actors`,
 * the first user (the GM) logged in and active, a bridge URL nothing listens on and an `io`
 * that throws (a unit test opens no connection), then Foundry's `init`. Resolves to the
 * Foundry, the schemas' validators, the Bridge the module's hooks were handed (its connection
 * stays null), and the module's `scripts` (paths under scripts/, without `.mjs`) by path, each
 * imported once the module has booted.
 * @param {{users: object[], actors?: object[], language?: string, systemLang?: object}} world
 *   `language`: the client's (its lang file, English the fallback); `systemLang`: FCO's own
 *   translations for it (`game.system.lang`)
 * @param {string[]} [scripts]
 */
export async function bootOfflineFoundry({ users, actors = [], language, systemLang }, scripts = []) {
  const validators = await loadValidators();
  const { Bridge } = await import(pathToFileURL(path.join(MODULE_DIR, "scripts/net/bridge.mjs")).href);
  const bridge = new Bridge();
  const [gm] = users;
  const foundry = await bootNodeFoundry({
    users,
    userId: gm.id,
    activeGM: gm.id,
    systemId: "fate-core-official",
    actors,
    language,
    systemLang,
    settings: { "fate-bridge.bridgeUrl": "http://127.0.0.1:9" }
  }, { io: () => { throw new Error("no connection in unit tests"); }, bridge });
  foundry.Hooks.callAll("init");
  const modules = {};
  for (const script of scripts) {
    modules[script] = await import(pathToFileURL(path.join(MODULE_DIR, "scripts", `${script}.mjs`)).href);
  }
  return { foundry, validators, bridge, modules };
}
