/**
 * The module's live state on this client: one connection at a time.
 * @module runtime
 */

export const runtime = {
  /** @type {import("./connection.mjs").IntentChannel|null} the way to the bridge */
  connection: null,
  /** @type {import("./relay.mjs").RelayHost|null} set while this client relays for the others */
  relayHost: null,
  /** @type {import("./relay.mjs").GmRoster|null} the GMs' bridge statuses, and who relays */
  roster: null,
  /** whether this client writes what the bridge says (the elected GM's, see relay.mjs) */
  writing: false,
  /** @type {object|null} the `hello` answer of the current connection */
  hello: null
};
