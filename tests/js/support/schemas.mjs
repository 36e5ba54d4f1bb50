/**
 * Validators for the bridge's JSON Schemas (schemas/, generated from bridge/protocol/).
 *
 * Each shared shape is written once, in schemas/defs/<Model>.json, and the message schemas
 * refer to it by a relative `$ref` resolved against their `$id`: the definitions are
 * registered first, then every message schema is compiled against them.
 */
import Ajv2020 from "ajv/dist/2020.js";
import { readJson } from "./node-foundry.mjs";

export async function loadValidators() {
  const index = await readJson("schemas/index.json");
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  for (const rel of Object.values(index.defs)) ajv.addSchema(await readJson(`schemas/${rel}`));
  const compile = async (rel) => ajv.compile(await readJson(`schemas/${rel}`));
  const client = {};
  for (const [event, rel] of Object.entries(index.client)) client[event] = await compile(rel);
  const results = {};
  for (const [event, rel] of Object.entries(index.results)) results[event] = await compile(rel);
  const server = {};
  for (const [event, rel] of Object.entries(index.server)) server[event] = await compile(rel);
  return { index, client, results, server, ack: await compile("ack.json"), historyAnchors: await compile("history_anchors.json"), auth: await compile("auth.json"), refusal: await compile("connect_refusal.json") };
}

/** Throws with ajv's errors when data does not validate. */
export function check(validate, data, what) {
  if (!validate(data)) throw new Error(`${what} does not match its schema: ${JSON.stringify(validate.errors)}\n${JSON.stringify(data)}`);
  return true;
}
