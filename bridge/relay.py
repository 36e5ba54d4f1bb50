"""Relay mode on the bridge's side: the users a GM's connection speaks for.

In relay mode (DESIGN "Reach and trust") only the active GM's browser talks to the bridge.
A player's intent reaches it inside a ``relay`` envelope naming the Foundry user who sent
it (the id Foundry's server stamped on the socket message). Each relayed user gets a
session of its own on that GM connection: a player's authority (never the GM's), its own
rate limit, and presence while Foundry says it is at the table. A GM never acts through a
relay: what a GM may read must not cross Foundry's socket, which every client hears.
"""

from __future__ import annotations

from dataclasses import dataclass

from bridge.ratelimit import TokenBucket
from bridge.service.session import Session

# Each relayed user's own budget: the same as a directly connected client's.
RELAYED_RATE_PER_SECOND = 20.0
RELAYED_BURST = 40.0
# A GM connection speaks for at most this many users (a Foundry world rarely has 20).
MAX_RELAYED_USERS = 64
# Every relayed frame also spends from its GM connection's total, so a connection that
# invents users cannot multiply its budget without bound.
RELAY_TOTAL_RATE_PER_SECOND = 200.0
RELAY_TOTAL_BURST = 400.0


@dataclass
class RelayedUser:
    session: Session
    bucket: TokenBucket


class TooManyRelayedUsers(Exception):
    """The GM connection already speaks for ``MAX_RELAYED_USERS`` users."""


class RelayTable:
    """The users one process's GM connections relay for, by connection."""

    def __init__(self) -> None:
        self._by_sid: dict[str, dict[str, RelayedUser]] = {}
        self._totals: dict[str, TokenBucket] = {}

    def take_total(self, sid: str, now: float) -> bool:
        """Spend one of the GM connection's relay tokens (shared by all its users)."""
        bucket = self._totals.get(sid)
        if bucket is None:
            bucket = self._totals[sid] = TokenBucket(
                RELAY_TOTAL_RATE_PER_SECOND, RELAY_TOTAL_BURST, stamp=now
            )
        return bucket.take(now)

    def get(self, sid: str, user_id: str) -> RelayedUser | None:
        return self._by_sid.get(sid, {}).get(user_id)

    def add(self, gm: Session, user_id: str, now: float) -> RelayedUser:
        """A new relayed user on ``gm``'s connection: a player (never the GM's authority),
        bound (Foundry vouched for it) and not yet counted present. Raises
        :class:`TooManyRelayedUsers` at the cap."""
        users = self._by_sid.setdefault(gm.sid, {})
        if len(users) >= MAX_RELAYED_USERS:
            raise TooManyRelayedUsers
        session = Session(f"{gm.sid}>{user_id}", gm.world_id, user_id, "player", bound=True)
        relayed = RelayedUser(
            session, TokenBucket(RELAYED_RATE_PER_SECOND, RELAYED_BURST, stamp=now)
        )
        users[user_id] = relayed
        return relayed

    def remove(self, sid: str, user_id: str) -> RelayedUser | None:
        users = self._by_sid.get(sid)
        return None if users is None else users.pop(user_id, None)

    def drop_connection(self, sid: str) -> list[RelayedUser]:
        """Forget a GM connection that closed; returns the users it relayed for."""
        self._totals.pop(sid, None)
        return list(self._by_sid.pop(sid, {}).values())
