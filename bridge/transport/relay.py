"""Relay mode on the bridge's side: the users a GM's connection speaks for.

In relay mode (DESIGN "Reach and trust") only the active GM's browser talks to the bridge.
A player's intent reaches it inside a ``relay`` envelope naming the Foundry user who sent
it (the id Foundry's server stamped on the socket message). Each relayed user gets a
session of its own on that GM connection: a player's authority (never the GM's), its own
rate limit, and presence while Foundry says it is at the table. A GM never acts through a
relay: what a GM may read must not cross Foundry's socket, which every client hears.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

from bridge.service.session import Session
from bridge.transport.ratelimit import TokenBucket

# Each relayed user's own budget: the same as a directly connected client's.
RELAYED_RATE_PER_SECOND = 20.0
RELAYED_BURST = 40.0
# A GM connection speaks for at most this many users (a Foundry world rarely has 20).
MAX_RELAYED_USERS = 64
# A GM connection's relayed frames together: each user's own budget is its fair share of
# this total (never more than the budget above), so a connection that invents users
# cannot multiply its budget, and one user flooding never spends another's share.
RELAY_TOTAL_RATE_PER_SECOND = 200.0
RELAY_TOTAL_BURST = 400.0


def fair_share(users: int) -> tuple[float, float]:
    """Each of ``users`` relayed users' rate and burst: an equal part of the total, at
    most a directly connected client's."""
    users = max(1, users)
    return (
        min(RELAYED_RATE_PER_SECOND, RELAY_TOTAL_RATE_PER_SECOND / users),
        min(RELAYED_BURST, RELAY_TOTAL_BURST / users),
    )


@dataclass
class RelayedUser:
    session: Session
    bucket: TokenBucket


class TooManyRelayedUsers(Exception):
    """The GM connection already speaks for ``MAX_RELAYED_USERS`` users."""


class RelayTable:
    """The users one process's GM connections relay for, by connection.

    A user who left (``relay.leave``) keeps only its rate bucket, so that leaving and
    coming back does not refill it; at most ``MAX_RELAYED_USERS`` such per connection,
    all forgotten with the connection."""

    def __init__(self) -> None:
        self._by_sid: dict[str, dict[str, RelayedUser]] = {}
        self._left: dict[str, OrderedDict[str, TokenBucket]] = {}

    def get(self, sid: str, user_id: str) -> RelayedUser | None:
        return self._by_sid.get(sid, {}).get(user_id)

    def users(self, sid: str) -> int:
        return len(self._by_sid.get(sid, {}))

    def add(self, gm: Session, user_id: str, now: float) -> RelayedUser:
        """A new relayed user on ``gm``'s connection: a player (never the GM's authority),
        bound (Foundry vouched for it) and not yet counted present, with its fair share
        of the connection's total (every user's share is set again). Raises
        :class:`TooManyRelayedUsers` at the cap."""
        users = self._by_sid.setdefault(gm.sid, {})
        if len(users) >= MAX_RELAYED_USERS:
            raise TooManyRelayedUsers
        session = Session(f"{gm.sid}>{user_id}", gm.world_id, user_id, "player", bound=True)
        bucket = self._left.get(gm.sid, OrderedDict()).pop(user_id, None)
        if bucket is None:
            bucket = TokenBucket(RELAYED_RATE_PER_SECOND, RELAYED_BURST, stamp=now)
        relayed = RelayedUser(session, bucket)
        users[user_id] = relayed
        self._share(users, now)
        return relayed

    def remove(self, sid: str, user_id: str, now: float) -> RelayedUser | None:
        users = self._by_sid.get(sid)
        relayed = None if users is None else users.pop(user_id, None)
        if relayed is not None and users is not None:
            left = self._left.setdefault(sid, OrderedDict())
            left[user_id] = relayed.bucket
            while len(left) > MAX_RELAYED_USERS:
                left.popitem(last=False)
            self._share(users, now)
        return relayed

    @staticmethod
    def _share(users: dict[str, RelayedUser], now: float) -> None:
        rate, burst = fair_share(len(users))
        for user in users.values():
            user.bucket.retune(rate, burst, now)

    def drop_connection(self, sid: str) -> list[RelayedUser]:
        """Forget a GM connection that closed; returns the users it relayed for."""
        self._left.pop(sid, None)
        return list(self._by_sid.pop(sid, {}).values())
