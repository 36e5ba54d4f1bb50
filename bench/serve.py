"""The real bridge CLI, with every garbage-collection pause recorded for the bench.

``BENCH_GC_STATS`` names a file that gets, twice a second, one JSON line per pause since
the last write, ``[wall time, generation, seconds, CPU seconds]`` (appending only the new
ones keeps the recorder's own cost out of the server's CPU): the pause as the clients
saw it, and the CPU the collection itself used (on a shared machine the first includes
time the process waited for a core). ``BENCH_LOOP_LAG`` names a file that gets, the same
way, ``[wall time, seconds]`` lines: how late the bridge's event loop ran a timer due every
``LAG_TICK`` seconds (the bridge's own view of its latency: a loop that runs its timers on
time answers on time). The bridge itself is unchanged.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import sys
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any

from bridge.cli import main

_pauses: deque[tuple[float, int, float, float]] = deque(maxlen=20000)
_started = [0.0, 0.0]
LAG_TICK = 0.01
_lags: deque[tuple[float, float]] = deque(maxlen=20000)


def _on_gc(phase: str, info: dict[str, Any]) -> None:
    if phase == "start":
        _started[0] = time.perf_counter()
        _started[1] = time.thread_time()
    else:
        _pauses.append(
            (
                time.time(),
                int(info["generation"]),
                time.perf_counter() - _started[0],
                time.thread_time() - _started[1],
            )
        )


def _sample_lag(loop: asyncio.AbstractEventLoop) -> None:
    """Every ``LAG_TICK`` seconds, note how late the loop ran this timer."""
    due = loop.time() + LAG_TICK

    def tick() -> None:
        nonlocal due
        now = loop.time()
        _lags.append((time.time(), now - due))
        due = now + LAG_TICK
        loop.call_at(due, tick)

    loop.call_at(due, tick)


class _LagSampling(asyncio.DefaultEventLoopPolicy):
    """Each new event loop (the bridge's) samples its own lag from its first turn."""

    def new_event_loop(self) -> asyncio.AbstractEventLoop:
        loop = super().new_event_loop()
        loop.call_soon(_sample_lag, loop)
        return loop


def _writer(path: Path, rows: deque[Any]) -> None:
    with path.open("a") as out:
        while True:
            time.sleep(0.5)
            lines = []
            while rows:
                lines.append(json.dumps(rows.popleft()) + "\n")
            if lines:
                out.write("".join(lines))
                out.flush()


if __name__ == "__main__":
    stats = os.environ.get("BENCH_GC_STATS")
    if stats:
        gc.callbacks.append(_on_gc)
        threading.Thread(target=_writer, args=(Path(stats), _pauses), daemon=True).start()
    lags = os.environ.get("BENCH_LOOP_LAG")
    if lags:
        asyncio.set_event_loop_policy(_LagSampling())
        threading.Thread(target=_writer, args=(Path(lags), _lags), daemon=True).start()
    sys.exit(main(sys.argv[1:]))
