"""Connections per remote address: strangers at the TCP level, seats once they join.

aiohttp has no limit on open connections; :class:`AddressGate` wraps each connection's
protocol, so the pool of an address is kept to its cap before aiohttp sees a byte.
(Partial requests are timed out by aiohttp's keepalive timer,
which starts when the connection opens: see ``serve`` in :mod:`bridge.cli.serve`.)

The gate counts strangers: every connection from the moment it opens (an HTTP request,
a websocket that has not joined ``/fate``) until the Socket.IO server claims it for a
seat (:meth:`AddressGate.claim`). Joined sockets are counted by :class:`Seats` in pools
of their own, so that players nobody has vouched for fill only their own, smaller pool
(they can never hold an address's whole cap against its GM, on the socket or the HTTP
API), and every connection that has not joined is closed by the server's timeouts within
seconds. The strangers of one address are a small pool that cannot lock anyone out: when
it is full, a new connection takes the place of the oldest stranger that has sent nothing
yet (else of the oldest), so a flood of idle connections, however often reopened, delays
a client with a key by a handshake, never refuses it. What is refused or cut is logged at
a bounded rate (:class:`RefusalLog`), never a line per connection.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from bridge.transport.ratelimit import TokenBucket

log = logging.getLogger("bridge.transport.connections")

DEFAULT_PER_ADDRESS = 32
# Players joined with a world id whom the GM's client has not vouched for yet (direct mode).
DEFAULT_UNBOUND_PER_ADDRESS = 8


def peer_address(transport: Any) -> str:
    """The remote address of a connection's transport (what both the gate and the seats
    count by), or "unknown"."""
    peer = transport.get_extra_info("peername") if transport is not None else None
    return str(peer[0]) if isinstance(peer, tuple) and peer else "unknown"


# At most this many refusal lines a minute; the rest are counted into the next one.
REFUSAL_LINES_PER_MINUTE = 10


class RefusalCounts:
    """What the wire itself refused, cut or held back, by reason: one count per event,
    for ``/metrics`` (``fate_bridge_wire_refusals_total``). The transport is handed this
    object (or any callable taking a reason) by the server; it knows nothing of who reads it.

    Reasons: ``handshake_rate`` (a websocket handshake past its address's rate, HTTP 429),
    ``address_pool`` (an address's oldest stranger cut for a newer connection),
    ``connect_flood`` (CONNECTs that cannot succeed past the join rate: cut), ``join_rate``
    (a join of ``/fate`` past the websocket's join rate), ``seats_full`` (no seat left for
    the address), ``join_timeout`` (no namespace joined in time), ``bind_timeout`` (a player
    no GM vouched for in time), ``backlog`` (a client reading too slowly for its outgoing
    budget: cut), ``inbound_budget`` (a frame past the connection's frames or bytes a
    second: read late once joined, cut before), ``max_payload`` (a message over
    ``maxPayload``: closed), ``pong_timeout`` (no pong in time: cut), ``bad_packet`` (a
    frame no Engine.IO client sends, or a packet other than CONNECT before joining: cut)."""

    def __init__(self) -> None:
        self.by_reason: Counter[str] = Counter()

    def __call__(self, reason: str) -> None:
        self.by_reason[reason] += 1


def ignore_refusal(_reason: str) -> None:
    """The refusal hook of a wire nobody counts for (tests building parts directly)."""


class RefusalLog:
    """Logs refused or cut connections at most ``per_minute`` lines a minute: a flood
    makes a line now and then saying how many were left unsaid, not a line each."""

    def __init__(
        self,
        logger: logging.Logger,
        per_minute: int = REFUSAL_LINES_PER_MINUTE,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.logger = logger
        self.per_minute = per_minute
        self.clock = clock
        self.window = clock()
        self.lines = 0
        self.unsaid = 0

    def note(self, address: str, what: str) -> None:
        now = self.clock()
        if now - self.window >= 60.0:
            self.window, self.lines = now, 0
        if self.lines >= self.per_minute:
            self.unsaid += 1
            return
        self.lines += 1
        more = f" (and {self.unsaid} more not logged since)" if self.unsaid else ""
        self.unsaid = 0
        self.logger.warning("%s from %s%s", what, address, more)


class AddressGate:
    """Open connections per remote address that no seat has claimed (strangers), at most
    ``limit`` at once (0: no cap): past it the oldest idle stranger is cut to make room."""

    def __init__(
        self, limit: int = DEFAULT_PER_ADDRESS, count: Callable[[str], None] = ignore_refusal
    ) -> None:
        self.limit = limit
        self.count_refusal = count
        # address -> its strangers, oldest first.
        self.strangers: dict[str, dict[_GatedProtocol, None]] = {}
        # Each admitted connection's protocol, by its transport (what a request knows).
        self._by_transport: dict[Any, _GatedProtocol] = {}
        self.refusals = RefusalLog(log)

    def count(self, address: str) -> int:
        return len(self.strangers.get(address, ()))

    def admit(self, gated: _GatedProtocol, address: str) -> None:
        """Count ``gated`` among its address's strangers, cutting the oldest one that has
        sent nothing (else the oldest) when the pool is full."""
        pool = self.strangers.setdefault(address, {})
        if self.limit and len(pool) >= self.limit:
            evicted = next((g for g in pool if not g.heard), next(iter(pool)))
            self._drop(evicted)
            self.count_refusal("address_pool")
            self.refusals.note(address, f"cut the oldest of {self.limit} connections not joined")
            evicted.cut()
        pool[gated] = None

    def _drop(self, gated: _GatedProtocol) -> None:
        if gated.address is None:
            return
        pool = self.strangers.get(gated.address)
        if pool is not None:
            pool.pop(gated, None)
            if not pool:
                del self.strangers[gated.address]

    def claim(self, transport: Any) -> None:
        """The connection joined a seat: it no longer counts as a stranger (a connection
        the gate never admitted, e.g. one served in-process, is ignored)."""
        gated = self._by_transport.get(transport)
        if gated is not None and gated.address is not None and not gated.claimed:
            gated.claimed = True
            self._drop(gated)

    def unclaim(self, transport: Any) -> None:
        """The connection left its seat but stays open: a stranger again (the newest)."""
        gated = self._by_transport.get(transport)
        if gated is not None and gated.address is not None and gated.claimed:
            gated.claimed = False
            self.strangers.setdefault(gated.address, {})[gated] = None

    def factory(self, inner: Callable[[], asyncio.Protocol]) -> Callable[[], asyncio.Protocol]:
        """A protocol factory for ``loop.create_server`` that gates ``inner``'s protocols."""
        return lambda: _GatedProtocol(inner(), self)


class _GatedProtocol(asyncio.Protocol):
    """Forwards everything to the wrapped protocol once the gate admitted the connection."""

    def __init__(self, inner: asyncio.Protocol, gate: AddressGate) -> None:
        self.inner = inner
        self.gate = gate
        self.address: str | None = None
        self.transport: Any = None
        # Claimed by a seat (see AddressGate.claim): then not counted among the strangers.
        self.claimed = False
        # Whether the client has sent anything: the idle are cut first when the pool is full.
        self.heard = False

    def connection_made(self, transport: Any) -> None:
        address = peer_address(transport)
        self.address = address
        self.transport = transport
        self.gate._by_transport[transport] = self
        self.gate.admit(self, address)
        self.inner.connection_made(transport)

    def cut(self) -> None:
        """Made room for a newer connection: cut at once (no bytes owed to it)."""
        if self.transport is not None:
            self.transport.abort()

    def data_received(self, data: bytes) -> None:
        self.heard = True
        if self.address is not None:
            self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self.inner.eof_received() if self.address is not None else None

    def connection_lost(self, exc: Exception | None) -> None:
        if self.address is not None:
            self.gate._by_transport.pop(self.transport, None)
            if not self.claimed:
                self.gate._drop(self)
            self.inner.connection_lost(exc)

    def pause_writing(self) -> None:
        if self.address is not None:
            self.inner.pause_writing()

    def resume_writing(self) -> None:
        if self.address is not None:
            self.inner.resume_writing()


class Seats:
    """Sockets joined to ``/fate``, per remote address, in two pools with caps of their own
    (0: no cap): unbound players, who joined with a world id and wait for the GM's client
    to vouch for them (direct mode), at most ``unbound_limit``; and seated sockets, a GM
    with the world's key or a bound player, at most ``limit``. A GM is never refused for
    the unbound players of its address, and an unbound player never for the seated ones."""

    def __init__(
        self, limit: int = DEFAULT_PER_ADDRESS, unbound_limit: int = DEFAULT_UNBOUND_PER_ADDRESS
    ) -> None:
        self.limit = limit
        self.unbound_limit = unbound_limit
        # sid -> (address, bound)
        self._held: dict[str, tuple[str, bool]] = {}
        self._counts: dict[tuple[str, bool], int] = {}

    def count(self, address: str, *, bound: bool) -> int:
        return self._counts.get((address, bound), 0)

    def _room(self, address: str, *, bound: bool) -> bool:
        cap = self.limit if bound else self.unbound_limit
        return not cap or self.count(address, bound=bound) < cap

    def _add(self, sid: str, address: str, *, bound: bool) -> None:
        self._held[sid] = (address, bound)
        self._counts[(address, bound)] = self.count(address, bound=bound) + 1

    def take(self, sid: str, address: str, *, bound: bool) -> bool:
        """Seat ``sid`` in its pool; False (nothing taken) when the pool is full."""
        if sid in self._held:
            return True
        if not self._room(address, bound=bound):
            return False
        self._add(sid, address, bound=bound)
        return True

    def bind(self, sid: str) -> bool:
        """An unbound player was vouched for: it moves to the seated pool. False when that
        pool is full (it stays unbound)."""
        held = self._held.get(sid)
        if held is None or held[1]:
            return held is not None
        address = held[0]
        if not self._room(address, bound=True):
            return False
        self.leave(sid)
        self._add(sid, address, bound=True)
        return True

    def is_unbound(self, sid: str) -> bool:
        held = self._held.get(sid)
        return held is not None and not held[1]

    def leave(self, sid: str) -> None:
        held = self._held.pop(sid, None)
        if held is None:
            return
        left = self._counts.get(held, 0) - 1
        if left > 0:
            self._counts[held] = left
        else:
            self._counts.pop(held, None)


async def listen(
    protocol_factory: Callable[[], asyncio.Protocol],
    host: str,
    port: int,
    gate: AddressGate,
    *,
    start_serving: bool = True,
) -> asyncio.Server:
    """Listen on ``host:port`` with every connection passing ``gate`` first. With
    ``start_serving`` false the port is bound (so taken) but connections wait in the
    backlog until ``Server.start_serving()``."""
    loop = asyncio.get_running_loop()
    return await loop.create_server(
        gate.factory(protocol_factory), host, port, backlog=128, start_serving=start_serving
    )


# Websocket handshakes a second per address, and how many at once: a flood of handshakes
# (each cut, each reopened) costs the loop far more than its refusal does. A whole
# community behind one reverse proxy reconnecting after a restart is within a few seconds
# of it (clients retry with a backoff).
HANDSHAKES_PER_SECOND = 10.0
HANDSHAKE_BURST = 60.0
# Addresses whose buckets are kept; past it the full (idle) ones are forgotten.
HANDSHAKE_ADDRESSES = 4096


class HandshakeRate:
    """Websocket handshakes per remote address (a token bucket each); ``rate`` 0: none
    refused."""

    def __init__(self, rate: float = HANDSHAKES_PER_SECOND, burst: float = HANDSHAKE_BURST) -> None:
        self.rate = rate
        self.burst = burst
        self.buckets: dict[str, TokenBucket] = {}

    def take(self, address: str, now: float) -> bool:
        """Whether a handshake from ``address`` at ``now`` may open a websocket."""
        if not self.rate:
            return True
        bucket = self.buckets.get(address)
        if bucket is None:
            if len(self.buckets) >= HANDSHAKE_ADDRESSES:
                self._forget_idle(now)
            bucket = self.buckets[address] = TokenBucket(self.rate, self.burst, stamp=now)
        return bucket.take(now)

    def _forget_idle(self, now: float) -> None:
        for address, bucket in list(self.buckets.items()):
            bucket.retune(bucket.rate, bucket.burst, now)
            if bucket.tokens >= bucket.burst:
                del self.buckets[address]
