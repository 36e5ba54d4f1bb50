/**
 * Fate Bridge's entry (module.json `esmodules`): this client's Bridge (net/bridge.mjs), made
 * once and handed to every hook (hooks.mjs).
 * @module main
 */
import { connectHooks } from "./hooks.mjs";
import { Bridge } from "./net/bridge.mjs";

connectHooks(new Bridge());
