/**
 * Runs a real bridge process for the integration tests: temp data dir, free port, --dev-dice.
 */
import { execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { REPO, waitFor } from "./node-foundry.mjs";

const run = promisify(execFile);

/** Where `python -m bridge` runs (a checkout of the bridge); the repo unless FATE_BRIDGE_ROOT says. */
export const BRIDGE_ROOT = process.env.FATE_BRIDGE_ROOT ?? REPO;

export const PYTHON = process.env.FATE_BRIDGE_PYTHON
  ?? (existsSync(path.join(REPO, ".venv/bin/python")) ? path.join(REPO, ".venv/bin/python") : "python3");

export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

export async function tempDataDir() {
  return mkdtemp(path.join(os.tmpdir(), "fate-bridge-js-"));
}

/** Register a world through the CLI (`world add ID --name NAME --json`); resolves to {id, name, key, ruleset}. */
export async function addWorld(dataDir, id, name = id, ruleset = null) {
  return (await addWorlds(dataDir, [[id, name, ruleset]]))[0];
}

// `world add ... --json` for each world, through the command's entry function, all in one
// interpreter (a Python start-up costs more than the command): what each printed, as a list.
const ADD_WORLDS = `
import contextlib, io, json, sys
from bridge.cli import main
printed = []
for argv in json.loads(sys.argv[1]):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = main(argv)
    if status:
        sys.exit(status)
    printed.append(json.loads(out.getvalue()))
print(json.dumps(printed))
`;

/**
 * Register several worlds with the CLI's `world add ID --name NAME [--ruleset R] --json`, run
 * in one Python process; resolves to their {id, name, key, ruleset}, in order.
 * @param {string} dataDir
 * @param {Array<[string, string?, string?]>} worlds  [id, name = id, ruleset = the default]
 */
export async function addWorlds(dataDir, worlds) {
  const argvs = worlds.map(([id, name = id, ruleset = null]) => [
    "--data-dir", dataDir, "world", "add", id, "--name", name ?? id, "--json", ...(ruleset ? ["--ruleset", ruleset] : [])
  ]);
  const { stdout } = await run(PYTHON, ["-c", ADD_WORLDS, JSON.stringify(argvs)], { cwd: BRIDGE_ROOT });
  return JSON.parse(stdout);
}

/**
 * Start `bridge serve` and wait for /healthz.
 * @returns {Promise<{url: string, port: number, stop: () => Promise<void>, output: () => string}>}
 */
export async function startBridge({ dataDir, port }) {
  const proc = spawn(PYTHON, ["-m", "bridge", "--data-dir", dataDir, "serve", "--host", "127.0.0.1", "--port", String(port), "--dev-dice"], {
    cwd: BRIDGE_ROOT,
    stdio: ["ignore", "pipe", "pipe"]
  });
  let output = "";
  proc.stdout.on("data", (d) => (output += d));
  proc.stderr.on("data", (d) => (output += d));
  let exited = false;
  proc.on("exit", () => (exited = true));
  const url = `http://127.0.0.1:${port}`;
  await waitFor(async () => {
    if (exited) throw new Error(`bridge exited:\n${output}`);
    try {
      return (await fetch(`${url}/healthz`)).status === 200;
    } catch {
      return false;
    }
  }, { ms: 30000, step: 100, what: "bridge /healthz" });
  return {
    url,
    port,
    output: () => output,
    stop: () => new Promise((resolve) => {
      if (exited) return resolve();
      proc.once("exit", () => resolve());
      proc.kill("SIGTERM");
      setTimeout(() => { if (!exited) proc.kill("SIGKILL"); }, 5000).unref();
    })
  };
}
