/**
 * The chat as the integration tests read it across fake Foundry clients: a card's message by its
 * card id, waiting for it to reach a state, and Foundry's own chat sync (a message one client
 * wrote reaching another), which the fake clients do not do by themselves.
 */

/** A finder of the message holding a card. */
export const byCard = (cardId) => (messages) => messages.find((m) => m.flags["fate-bridge"].cardId === cardId);

/**
 * Wait until a client's message of a card satisfies `predicate`; resolves to that message.
 * @param {import("./clients.mjs").FoundryClient} client
 */
export async function cardIn(client, cardId, predicate, what) {
  const messages = await client.waitFor("messages", (ms) => {
    const m = byCard(cardId)(ms);
    return m && predicate(m);
  }, { what });
  return byCard(cardId)(messages);
}

/**
 * Foundry's server: the message one client wrote reaches another; resolves to it as the other
 * client shows it.
 */
export async function showMessage(from, to, cardId) {
  await to.rpc("receiveMessage", await from.rpc("messageData", cardId));
  return byCard(cardId)(await to.rpc("messages"));
}
