"""Instructions, counted by valgrind's callgrind: a figure this machine's noise does not
move, for comparing two versions of the bridge.

On a shared 2-core machine CPU time per action moves by 10-15% from one minute to the
next (other machines' work, the host's steal); the number of instructions the bridge
runs for an action repeats to within about 1%. It is not time (a cache miss or a system
call costs more than its count, and valgrind runs the threads one at a time), so the
ladder's CPU figures stay the measure; this is the check that a change made the bridge
do less. Needs valgrind (``apt-get install valgrind``)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from tests.bridge_process import PROJECT_ROOT

CALLGRIND = ["valgrind", "--quiet", "--tool=callgrind", "--cache-sim=no"]
# The rules' dice are seeded here, so the N and 2N runs roll the same first N.
ENGINE_SEED = 9


def available() -> bool:
    """Whether valgrind and callgrind_control are installed."""
    return shutil.which("valgrind") is not None and shutil.which("callgrind_control") is not None


def callgrind(out: Path) -> list[str]:
    """The command a process runs under to be counted, its counts written to ``out``."""
    return [*CALLGRIND, f"--callgrind-out-file={out}"]


def zero(pid: int) -> None:
    """Reset the counters of a process running under callgrind."""
    subprocess.run(["callgrind_control", "-z", str(pid)], check=True, capture_output=True)


def dump_total(pid: int, out: Path, number: int, timeout: float = 120.0) -> int:
    """Have a process running under callgrind write its counts since the last zero (its
    ``number``-th dump, to ``out``.N) and return the instructions, all threads together."""
    subprocess.run(["callgrind_control", "-d", str(pid)], check=True, capture_output=True)
    dump = out.with_name(f"{out.name}.{number}")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if dump.exists():
            total = total_of(dump.read_text(errors="replace"))
            if total is not None:
                return total
        time.sleep(0.2)
    raise RuntimeError(f"callgrind wrote no counts to {dump}")


class Window:
    """The instructions a process under callgrind runs between ``open`` and ``close``,
    and the wall-clock seconds between them; ``first_dump`` is the number callgrind
    gives the dump ``close`` asks for (1 for the process's first)."""

    def __init__(self, pid: int, out: Path, first_dump: int = 1) -> None:
        self.pid, self.out, self.number = pid, out, first_dump
        self.instructions = 0
        self.seconds = 0.0
        self._opened = 0.0

    def open(self) -> None:
        zero(self.pid)
        self._opened = time.monotonic()

    def close(self) -> None:
        self.seconds = time.monotonic() - self._opened
        self.instructions = dump_total(self.pid, self.out, self.number)


def total_of(dump: str) -> int | None:
    """The instruction total of a callgrind output file (None while it is being written)."""
    found = re.search(r"^(?:summary|totals):\s*(\d+)", dump, re.MULTILINE)
    return int(found.group(1)) if found else None


def engine_instructions(resolutions: int, folder: Path, resolved: int = 0) -> dict[str, float]:
    """Instructions per passive overcome through the rules alone: ``time_engine`` counted
    for N and for 2N resolutions in two processes, on the same seeded dice, each on a
    world with ``resolved`` passive overcomes already resolved; the difference over N
    leaves the interpreter's start-up, the imports and building that world out."""
    totals = []
    for count in (resolutions, 2 * resolutions):
        out = folder / f"engine-{resolved}-{count}.callgrind"
        script = (
            "import random, sys\n"
            "from bench.seed import time_engine\n"
            "from bridge.rules.dice import SecureDice\n"
            f"dice = SecureDice(random.Random({ENGINE_SEED}).randbytes)\n"
            "time_engine(int(sys.argv[1]), dice=dice, resolved=int(sys.argv[2]))\n"
        )
        subprocess.run(
            [*callgrind(out), sys.executable, "-c", script, str(count), str(resolved)],
            cwd=PROJECT_ROOT,
            env={**os.environ, "PYTHONHASHSEED": "0"},
            check=True,
            capture_output=True,
        )
        total = total_of(out.read_text(errors="replace"))
        if total is None:
            raise RuntimeError(f"callgrind wrote no counts to {out}")
        totals.append(total)
    return {
        "resolutions": resolutions,
        "resolved": resolved,
        "instructions_per_resolution": (totals[1] - totals[0]) / resolutions,
    }
