/**
 * A stand-in for Foundry's own server, as far as the module's socket channel goes: a real
 * Socket.IO server every fake Foundry client connects to as its user (Foundry knows who a
 * socket is from its session; here the handshake names the user, as the session would).
 *
 * What it does as Foundry does:
 * - A message on a `module.*` (or `system.*`) channel goes to every *other* client, never back
 *   to its emitter, with no addressing, and with the sender's user id added by the server after
 *   whatever the client sent: a handler runs as `(data, ...extra, senderUserId)`.
 * - Presence: a client learns who is active when it joins (`activeUsers`), and every client
 *   hears `userActivity(userId, {active})` when a user's first tab opens or its last closes;
 *   the fake client turns that into `user.active` and the `userConnected` hook.
 * - A message over the server's buffer size (Socket.IO's `maxHttpBufferSize`, 1e6 by default
 *   as Foundry leaves it) closes the emitter's connection.
 */
import http from "node:http";
import { Server } from "socket.io";

const CHANNEL = /^(module|system)\./;

/**
 * @param {{maxBytes?: number}} [options]
 * @returns {Promise<{url: string, relayed: () => number, kick: (userId: string) => void, close: () => Promise<void>}>}
 */
export async function startFoundryServer({ maxBytes = 1e6 } = {}) {
  const server = http.createServer();
  const io = new Server(server, { transports: ["websocket"], maxHttpBufferSize: maxBytes });
  /** @type {Map<string, Set<import("socket.io").Socket>>} */
  const tabs = new Map();
  let relayed = 0;
  const active = () => [...tabs].filter(([, set]) => set.size > 0).map(([id]) => id);

  io.use((socket, next) => {
    const userId = socket.handshake.auth?.userId;
    if (typeof userId !== "string" || !userId) return next(new Error("no session"));
    socket.data.userId = userId;
    next();
  });

  io.on("connection", (socket) => {
    const userId = socket.data.userId;
    if (!tabs.has(userId)) tabs.set(userId, new Set());
    const mine = tabs.get(userId);
    const first = mine.size === 0;
    mine.add(socket);
    socket.emit("activeUsers", active());
    if (first) socket.broadcast.emit("userActivity", userId, { active: true });
    socket.onAny((event, ...args) => {
      if (!CHANNEL.test(event)) return;
      relayed += 1;
      // The sender's id is the server's to add, last, whatever the client put before it.
      const data = args.filter((a) => typeof a !== "function");
      socket.broadcast.emit(event, ...data, userId);
    });
    socket.on("disconnect", () => {
      mine.delete(socket);
      if (mine.size === 0) socket.broadcast.emit("userActivity", userId, { active: false });
    });
  });

  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    relayed: () => relayed,
    /** Close every tab of a user, as a closed browser would. */
    kick(userId) {
      for (const socket of tabs.get(userId) ?? []) socket.disconnect(true);
    },
    async close() {
      io.close();
      await new Promise((resolve) => server.close(() => resolve()));
    }
  };
}
