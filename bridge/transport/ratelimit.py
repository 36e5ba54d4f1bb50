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

    def retune(self, rate: float, burst: float, now: float) -> None:
        """From ``now`` on, ``rate`` a second up to ``burst`` (what was spent stays spent)."""
        self._refill(now)
        self.rate, self.burst = rate, burst
        self.tokens = min(self.tokens, burst)

    def _refill(self, now: float) -> None:
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now


@dataclass(frozen=True)
class Pace:
    """Frames and bytes a second a connection may send, and how many of each at once."""

    frames_per_second: float
    frame_burst: float
    bytes_per_second: float
    byte_burst: float


class InboundBudget:
    """Paces what one connection sends, in frames and bytes, before anything is decoded.

    :meth:`charge` takes a frame's cost (it may go into debt) and says how long to wait
    before reading the next one, so a sender past its pace is read no faster than it;
    :meth:`pace` switches the rates (a connection that joined gets more) keeping what
    was spent, or (``fresh``) starting the new pace at its full burst."""

    def __init__(self, pace: Pace, now: float) -> None:
        self.frames = TokenBucket(pace.frames_per_second, pace.frame_burst, stamp=now)
        self.bytes = TokenBucket(pace.bytes_per_second, pace.byte_burst, stamp=now)

    def pace(self, pace: Pace, now: float, *, fresh: bool = False) -> None:
        self.frames.retune(pace.frames_per_second, pace.frame_burst, now)
        self.bytes.retune(pace.bytes_per_second, pace.byte_burst, now)
        if fresh:
            self.frames.tokens = self.frames.burst
            self.bytes.tokens = self.bytes.burst

    def charge(self, size: int, now: float) -> float:
        """Spend a frame of ``size`` bytes received at ``now``; the seconds to wait before
        the next read (0 while within the pace)."""
        wait = 0.0
        for bucket, cost in ((self.frames, 1.0), (self.bytes, float(size))):
            bucket._refill(now)
            bucket.tokens -= cost
            if bucket.tokens < 0:
                wait = max(wait, -bucket.tokens / bucket.rate)
        return wait
