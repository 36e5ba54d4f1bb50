"""What the service counts as it answers, for ``/metrics`` (bridge.transport.metrics): plain numbers
kept on the service, read when scraped, so counting costs a dict update per intent."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class ServiceStats:
    """Counters since the service started, and the connections joined now.

    ``intents`` counts answers by ``(event, outcome)``: ``ok``, or the error code the ack
    carried (an event the bridge does not know is counted as ``unknown``). ``refusals``
    counts refused handshakes by the refusal's reason. ``joined`` maps each joined
    connection's session (its ``id``) to its role. ``observe_commit`` is handed the
    seconds each store commit took (``/metrics`` sets it to a histogram's ``observe``)."""

    intents: Counter[tuple[str, str]] = field(default_factory=Counter)
    refusals: Counter[str] = field(default_factory=Counter)
    joined: dict[int, str] = field(default_factory=dict)
    observe_commit: Callable[[float], None] = lambda seconds: None

    def connections(self) -> Counter[str]:
        """Joined connections by role (gm, player)."""
        return Counter(self.joined.values())

    def timer(self) -> Callable[[], None]:
        """Start timing a commit; the returned function, called when it is done,
        hands the seconds to ``observe_commit``."""
        began = time.perf_counter()
        return lambda: self.observe_commit(time.perf_counter() - began)
