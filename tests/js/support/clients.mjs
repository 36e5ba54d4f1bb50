/**
 * Test-side handle of a fake Foundry client running in a worker thread.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";

const WORKER = path.join(path.dirname(fileURLToPath(import.meta.url)), "client-worker.mjs");

export class FoundryClient {
  /** @param {object} foundry  install() options for this client */
  static async launch(name, foundry) {
    const client = new FoundryClient(name, new Worker(WORKER, { workerData: { foundry } }));
    await client.ready;
    return client;
  }

  constructor(name, worker) {
    this.name = name;
    this.worker = worker;
    this.nextId = 0;
    this.pending = new Map();
    this.ready = new Promise((resolve, reject) => {
      worker.on("message", (msg) => {
        if (msg.ready) return resolve();
        const p = this.pending.get(msg.id);
        if (!p) return;
        this.pending.delete(msg.id);
        if ("error" in msg) p.reject(new Error(`[${name}] ${msg.error}`));
        else p.resolve(msg.result);
      });
      worker.on("error", reject);
    });
  }

  rpc(cmd, ...args) {
    const id = ++this.nextId;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, cmd, args });
    });
  }

  async waitFor(cmd, predicate, { ms = 20000, what = cmd, args = [] } = {}) {
    const end = Date.now() + ms;
    for (;;) {
      const value = await this.rpc(cmd, ...args);
      if (predicate(value)) return value;
      if (Date.now() > end) throw new Error(`[${this.name}] timed out waiting for ${what}; last: ${JSON.stringify(value)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async close() {
    await this.rpc("disconnect").catch(() => {});
    await this.worker.terminate();
  }
}

/**
 * install() options of a client that connects itself to the bridge on `port` for `worldId`
 * (direct mode; relay mode: relay.integration.test.mjs), logged in as `user`, with the GM key
 * `key` (undefined: none set). `extra` adds install() options (e.g. `foundryServer`).
 */
export function directClient({ users, user, activeGM, actors, port, worldId, key, ...extra }) {
  return {
    users,
    userId: user.id,
    activeGM,
    systemId: "fate-core-official",
    actors,
    ...extra,
    settings: {
      "fate-bridge.bridgeUrl": `http://127.0.0.1:${port}`,
      "fate-bridge.worldId": worldId,
      "fate-bridge.connectionMode": "direct",
      ...(key === undefined ? {} : { "fate-bridge.gmKey": key })
    }
  };
}

/** Launch a client, keep it in `clients` (to stop them all after), start it and wait for its hello. */
export async function launchGreeted(clients, name, options) {
  const client = await FoundryClient.launch(name, options);
  clients.push(client);
  await client.rpc("start");
  await client.waitFor("hello", (h) => h !== null, { what: `${name} hello` });
  return client;
}
