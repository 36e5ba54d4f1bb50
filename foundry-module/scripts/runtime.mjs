/**
 * The module's live state on this client: one connection at a time.
 * @module runtime
 */

export const runtime = {
  /** @type {import("./connection.mjs").ConnectionManager|null} */
  connection: null,
  /** @type {object|null} the `hello` answer of the current connection */
  hello: null
};
