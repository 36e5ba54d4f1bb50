"""Fate dice (R1.1): four dice, each -1, 0 or +1 with equal probability."""

from __future__ import annotations

import secrets
from collections import deque
from collections.abc import Iterable
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


class SecureDice:
    """Production dice: the operating system's CSPRNG (R1.1)."""

    def roll(self) -> Roll:
        """Four independent fair dice: one uniform draw over the 81 equally likely
        outcomes (one CSPRNG read instead of four)."""
        return ALL_ROLLS[secrets.randbelow(len(ALL_ROLLS))]


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
