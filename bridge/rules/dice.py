"""Fate dice (R1.1): four dice, each -1, 0 or +1 with equal probability."""

from __future__ import annotations

import os
import weakref
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from itertools import product
from typing import Literal, Protocol, cast

Face = Literal[-1, 0, 1]
Roll = tuple[Face, Face, Face, Face]

FACES: tuple[Face, Face, Face] = (-1, 0, 1)
DICE_PER_ROLL = 4

# product yields tuples of faces of any length to mypy; here they are all of four.
ALL_ROLLS = cast(tuple[Roll, ...], tuple(product(FACES, repeat=DICE_PER_ROLL)))
"""Every one of the 3**4 = 81 ordered outcomes of four Fate dice, each exactly once."""


class DiceSource(Protocol):
    """Anything that can roll four Fate dice."""

    def roll(self) -> Roll:
        """Return four faces, each -1, 0 or +1."""
        ...


# A byte below 243 = 3 * 81 is a uniform draw over the 81 rolls (byte % 81); the 13 bytes
# above it are skipped, so no roll is likelier than another.
_ACCEPTED_BYTES = 256 - 256 % len(ALL_ROLLS)
# Bytes read from the CSPRNG at a time: one system call per ~480 rolls, not per roll.
POOL_BYTES = 512

# Every SecureDice alive, so a forked child drops the bytes it inherited (see _after_fork).
_LIVE: weakref.WeakSet[SecureDice] = weakref.WeakSet()


class SecureDice:
    """Production dice: the operating system's CSPRNG (R1.1).

    Its bytes are read ``POOL_BYTES`` at a time (one system call serves many rolls)
    and each is used once: the iterator hands
    out each byte to one caller only, even across threads, and a forked child drops the
    parent's unread bytes, so two processes never share a roll."""

    def __init__(self, random_bytes: Callable[[int], bytes] = os.urandom) -> None:
        self._random_bytes = random_bytes
        self._pool: Iterator[int] = iter(())
        _LIVE.add(self)

    def roll(self) -> Roll:
        """Four independent fair dice: one uniform draw over the 81 equally likely
        outcomes (one random byte instead of four dice)."""
        while True:
            for byte in self._pool:
                if byte < _ACCEPTED_BYTES:
                    return ALL_ROLLS[byte % len(ALL_ROLLS)]
            self._pool = iter(self._random_bytes(POOL_BYTES))

    def _forget_pool(self) -> None:
        self._pool = iter(())


def _after_fork() -> None:
    for dice in list(_LIVE):
        dice._forget_pool()


os.register_at_fork(after_in_child=_after_fork)


class QueuedDice:
    """Dice that return queued rolls first, then fall back to another source.

    Used by tests and by the bridge's ``--dev-dice`` mode; the queue is FIFO.
    """

    def __init__(self, fallback: DiceSource | None = None, rolls: Iterable[Roll] = ()) -> None:
        self._queue: deque[Roll] = deque(rolls)
        self._fallback = fallback

    def queue(self, rolls: Iterable[Roll]) -> None:
        self._queue.extend(rolls)

    @property
    def pending(self) -> int:
        return len(self._queue)

    def roll(self) -> Roll:
        if self._queue:
            return self._queue.popleft()
        if self._fallback is None:
            raise LookupError("no queued dice left and no fallback source")
        return self._fallback.roll()


def dice_total(faces: Roll) -> int:
    """The sum of a roll, always within -4..+4."""
    return sum(faces)
