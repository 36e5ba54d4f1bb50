"""The real bridge CLI, with every garbage-collection pause recorded for the bench.

``BENCH_GC_STATS`` names a file that gets, twice a second, one JSON line per pause since
the last write, ``[wall time, generation, seconds, CPU seconds]`` (appending only the new
ones keeps the recorder's own cost out of the server's CPU): the pause as the clients
saw it, and the CPU the collection itself used (on a shared machine the first includes
time the process waited for a core); the bridge itself is unchanged.
"""

from __future__ import annotations

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


def _writer(path: Path) -> None:
    with path.open("a") as out:
        while True:
            time.sleep(0.5)
            lines = []
            while _pauses:
                lines.append(json.dumps(_pauses.popleft()) + "\n")
            if lines:
                out.write("".join(lines))
                out.flush()


if __name__ == "__main__":
    stats = os.environ.get("BENCH_GC_STATS")
    if stats:
        gc.callbacks.append(_on_gc)
        threading.Thread(target=_writer, args=(Path(stats),), daemon=True).start()
    sys.exit(main(sys.argv[1:]))
