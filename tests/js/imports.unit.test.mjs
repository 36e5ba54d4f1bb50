// The module's scripts as a graph of imports, read from their text (no Foundry needed): from the
// entry (module.json's esmodules) every file is reached, no import leads back to itself, named
// imports name real exports, and a folder is entered from another only through its surface.
import assert from "node:assert/strict";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { before, describe, test } from "node:test";
import { MODULE_DIR, readJson } from "./support/node-foundry.mjs";

const SCRIPTS = path.join(MODULE_DIR, "scripts");

/**
 * Each folder's files that other folders may import (the root's main.mjs, hooks.mjs and api.mjs
 * put the rooms together and may import any file). The rest of a folder is its own business.
 */
const SURFACE = {
  actions: ["roll-dialog.mjs", "start.mjs", "stunts.mjs"],
  adapters: ["index.mjs", "common.mjs", "fco-frameworks.mjs"],
  cards: ["chat.mjs", "odds.mjs", "pickers.mjs", "view.mjs"],
  foundry: ["characters.mjs", "compat.mjs", "format.mjs", "forms.mjs", "stale-guard.mjs", "windows.mjs", "world-writes.mjs"],
  history: ["anchors.mjs"],
  net: ["bridge.mjs", "status.mjs"],
  scene: ["actions.mjs", "cards.mjs", "state.mjs", "tokens.mjs"]
};
const ROOT_FILES = ["main.mjs", "hooks.mjs", "api.mjs", "protocol.mjs", "wire-types.mjs"];

/** @type {Map<string, {text: string, imports: {spec: string, target: string, names: string[], dynamic: boolean}[], types: string[]}>} */
const files = new Map();

/** The file an import specifier names, relative to scripts/ (posix). */
const resolve = (from, spec) => path.posix.normalize(path.posix.join(path.posix.dirname(from), spec));

before(async () => {
  for (const rel of await readdir(SCRIPTS, { recursive: true })) {
    const file = rel.split(path.sep).join("/");
    if (!file.endsWith(".mjs") || file.startsWith("vendor/")) continue;
    const text = await readFile(path.join(SCRIPTS, rel), "utf8");
    const imports = [];
    for (const m of text.matchAll(/^(?:import|export)\s+(?:\{([^}]*)\}\s+from\s+|\*\s+as\s+\w+\s+from\s+|\w+\s+from\s+)?["'](\.[^"']+)["'];?$/gm)) {
      const names = (m[1] ?? "").split(",").map((n) => n.trim().split(/\s+as\s+/)[0].trim()).filter(Boolean);
      imports.push({ spec: m[2], target: resolve(file, m[2]), names, dynamic: false });
    }
    for (const m of text.matchAll(/\bimport\(\s*["'](\.[^"']+)["']\s*\)(?!\.)/g)) {
      imports.push({ spec: m[1], target: resolve(file, m[1]), names: [], dynamic: true });
    }
    // JSDoc `import("./x.mjs").Name` types: a file read for its types only (wire-types.mjs).
    const types = [...text.matchAll(/import\(["'](\.[^"']+)["']\)\.\w+/g)].map((m) => resolve(file, m[1]));
    files.set(file, { text, imports, types });
  }
});

/** The files a file loads (static and dynamic imports; the browser's vendor file aside). */
const loads = (file) => files.get(file).imports.map((i) => i.target).filter((t) => !t.startsWith("vendor/"));

describe("the module's import graph", () => {
  test("module.json's entry is main.mjs, and nothing imports it or hooks.mjs but main.mjs", async () => {
    const manifest = await readJson("foundry-module/module.json");
    assert.deepEqual(manifest.esmodules, ["scripts/main.mjs"]);
    const importers = (target) => [...files.keys()].filter((f) => loads(f).includes(target));
    assert.deepEqual(importers("main.mjs"), []);
    assert.deepEqual(importers("hooks.mjs"), ["main.mjs"]);
  });

  test("every import names a file that exists, and every named import an export of it", () => {
    const missing = [];
    for (const [file, { imports }] of files) {
      for (const { target, names } of imports) {
        if (target.startsWith("vendor/")) continue;
        const into = files.get(target);
        if (!into) {
          missing.push(`${file}: ${target}`);
          continue;
        }
        for (const name of names) {
          const exported = new RegExp(`^export\\s+(?:async\\s+)?(?:function\\*?|class|const|let)\\s+${name}\\b|^export\\s*\\{[^}]*\\b${name}\\b`, "m");
          if (!exported.test(into.text)) missing.push(`${file}: ${name} from ${target}`);
        }
      }
    }
    assert.deepEqual(missing, []);
  });

  test("no import cycle: no file's imports, static or dynamic, lead back to it", () => {
    const cycles = [];
    const state = new Map();
    const stack = [];
    const visit = (file) => {
      state.set(file, "open");
      stack.push(file);
      for (const next of loads(file)) {
        if (state.get(next) === "open") cycles.push([...stack.slice(stack.indexOf(next)), next].join(" -> "));
        else if (!state.has(next) && files.has(next)) visit(next);
      }
      stack.pop();
      state.set(file, "done");
    };
    for (const file of [...files.keys()].sort()) if (!state.has(file)) visit(file);
    assert.deepEqual(cycles, []);
  });

  test("every file is reached from main.mjs (no orphan file)", () => {
    const reached = new Set();
    const queue = ["main.mjs"];
    while (queue.length) {
      const file = queue.pop();
      if (reached.has(file) || !files.has(file)) continue;
      reached.add(file);
      queue.push(...loads(file), ...files.get(file).types);
    }
    assert.deepEqual([...files.keys()].filter((f) => !reached.has(f)).sort(), []);
  });

  test("scripts live in the folders, the root holds only the entry, its wiring, the API and the wire's words", () => {
    const root = [...files.keys()].filter((f) => !f.includes("/")).sort();
    assert.deepEqual(root, [...ROOT_FILES].sort());
    const folders = new Set([...files.keys()].filter((f) => f.includes("/")).map((f) => f.split("/")[0]));
    assert.deepEqual([...folders].sort(), Object.keys(SURFACE).sort());
  });

  test("a folder is entered from another folder only through its surface", () => {
    const reaching = [];
    for (const [file] of files) {
      const from = file.includes("/") ? file.split("/")[0] : null;
      if (from === null) continue; // the root puts the rooms together
      for (const target of loads(file)) {
        const [into, name] = target.includes("/") ? target.split("/") : [null, target];
        if (into === null || into === from) continue;
        if (!SURFACE[into].includes(name)) reaching.push(`${file} -> ${target}`);
      }
    }
    assert.deepEqual(reaching, []);
    // Each surface file is used from outside its folder, by an import or as a JSDoc type (the
    // Bridge every room is handed): a surface no wider than it must be.
    for (const [folder, names] of Object.entries(SURFACE)) {
      for (const name of names) {
        const target = `${folder}/${name}`;
        const uses = (f) => loads(f).includes(target) || files.get(f).types.includes(target);
        const outside = [...files.keys()].some((f) => !f.startsWith(`${folder}/`) && f.includes("/") && uses(f));
        assert.ok(outside, `${target} is in the surface but no other folder imports it`);
      }
    }
  });

  test("no script exports a binding others could reassign (`export let`/`var`): shared state is passed, not imported", () => {
    const mutable = [...files].filter(([, { text }]) => /^export\s+(?:let|var)\s/m.test(text)).map(([f]) => f);
    assert.deepEqual(mutable, []);
  });
});
