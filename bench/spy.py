"""The server's profile under load, when py-spy is installed (``pip install py-spy``):
sampled from outside the process, so the server runs unchanged, and summed into the
functions that used most of its time."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from bench.proc import LOAD_CORES, pin

SAMPLES_PER_SECOND = 100


def py_spy() -> str | None:
    """The py-spy executable next to this Python, or on the PATH; None when absent."""
    beside = Path(sys.executable).parent / "py-spy"
    return str(beside) if beside.exists() else shutil.which("py-spy")


class Spy:
    """``py-spy record`` of one process for ``seconds``, in collapsed-stack form."""

    def __init__(self, pid: int, seconds: float, out: Path) -> None:
        self.out = out
        self.process: subprocess.Popen[bytes] | None = None
        executable = py_spy()
        if executable is None:
            return
        self.process = subprocess.Popen(
            [
                executable,
                "record",
                "--pid",
                str(pid),
                "--duration",
                str(max(1, int(seconds))),
                "--rate",
                str(SAMPLES_PER_SECOND),
                "--format",
                "raw",
                "--nonblocking",
                "--output",
                str(out),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        pin(self.process.pid, LOAD_CORES)

    def top(self, entries: int = 12) -> dict[str, Any] | None:
        """Wait for the recording; the functions with most samples on top of the stack
        (own time) and the bridge's functions with most samples anywhere in it
        (inclusive), as shares of the samples where the process was busy."""
        if self.process is None:
            return None
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return None
        if not self.out.exists():
            return None
        return summarise(self.out.read_text(), entries)


def summarise(collapsed: str, entries: int) -> dict[str, Any]:
    """Own and inclusive shares from py-spy's collapsed stacks (``a;b;c count`` lines);
    samples idle in the event loop's ``select`` are left out of the total."""
    own: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    busy = 0
    for line in collapsed.splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        frames = stack.split(";")
        if "select (selectors.py" in frames[-1]:
            continue
        busy += count
        own[frames[-1]] += count
        for frame in set(frames):
            if "(bridge/" in frame:
                inclusive[frame] += count

    def shares(counter: Counter[str]) -> list[list[Any]]:
        return [[name, round(100 * n / busy, 1)] for name, n in counter.most_common(entries)]

    return {"busy_samples": busy, "own_pct": shares(own), "bridge_inclusive_pct": shares(inclusive)}
