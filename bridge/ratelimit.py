"""Token buckets: floods get errors, not service time."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class TokenBucket:
    """``rate`` tokens a second up to ``burst``; each message takes one, and work that
    cost more takes the rest after (:meth:`spend`)."""

    rate: float
    burst: float
    tokens: float = -1.0
    stamp: float = 0.0

    def __post_init__(self) -> None:
        if self.tokens < 0:
            self.tokens = self.burst

    def take(self, now: float) -> bool:
        """Whether a message at ``now`` (monotonic seconds) may pass."""
        self._refill(now)
        if self.tokens < 1:
            return False
        self.tokens -= 1
        return True

    def spend(self, amount: float, now: float) -> None:
        """Take ``amount`` more tokens for work already done (a read that cost more than
        its message): the bucket may go into debt, at most a burst deep, and passes
        nothing until it has refilled past it."""
        self._refill(now)
        self.tokens = max(-self.burst, self.tokens - amount)

    def in_debt(self, now: float) -> bool:
        """Whether work done owes a whole token or more."""
        self._refill(now)
        return self.tokens <= -1

    def _refill(self, now: float) -> None:
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
