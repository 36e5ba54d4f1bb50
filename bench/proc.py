"""Processes the bench starts and watches: servers pinned to cores, CPU and memory from /proc.

Free ports, redis-server and the wait for health come from the tests' launcher
(``tests/bridge_process.py``, their one home); this adds the pinning and the readings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.bridge_process import PROJECT_ROOT, free_port, wait_healthy
from tests.bridge_process import redis_server as unpinned_redis_server

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")
CORES = sorted(os.sched_getaffinity(0))
# The server under test gets the first core; load generators and Redis the rest.
SERVER_CORE = {CORES[0]}
LOAD_CORES = set(CORES[1:]) or SERVER_CORE


def cpu_seconds(pid: int) -> float:
    """User + system CPU time the process has used, all its threads, to the nanosecond
    where the kernel keeps scheduler statistics (/proc/PID/task/TID/schedstat); else
    in clock ticks (/proc/PID/stat, 10 ms each: a few per cent of a short window).
    A thread that ended is in the tick count but not in the per-thread sum: compare
    readings taken while the same threads run (the servers' threads live as long as
    they do)."""
    try:
        return sum(
            _schedstat_seconds(task / "schedstat") for task in Path(f"/proc/{pid}/task").iterdir()
        )
    except (FileNotFoundError, ProcessLookupError, ValueError):
        return cpu_seconds_of(Path(f"/proc/{pid}/stat"))


def main_thread_cpu_seconds(pid: int) -> float:
    """The CPU of the process's main thread alone (the bridge's event loop): its own
    schedstat (or stat). What the process used beyond it ran on other threads (the
    SQLite store's worker, executors)."""
    try:
        return _schedstat_seconds(Path(f"/proc/{pid}/task/{pid}/schedstat"))
    except (FileNotFoundError, ValueError):
        return cpu_seconds_of(Path(f"/proc/{pid}/task/{pid}/stat"))


def _schedstat_seconds(schedstat: Path) -> float:
    """The time a thread has run on a CPU (the first field of its schedstat, in ns)."""
    return int(schedstat.read_text().split()[0]) / 1e9


def cpu_seconds_of(stat: Path) -> float:
    """User + system CPU time from a /proc stat file (fields 14 and 15)."""
    text = stat.read_text()
    fields = text[text.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def core_ticks(cores: set[int]) -> tuple[int, int]:
    """(steal, all) clock ticks of ``cores`` so far, from /proc/stat: the time a hypervisor
    gave the cores' turns to other machines, and all of their time. A run's share of steal
    says whether its latencies measured this code or the host (``steal_share``)."""
    steal = total = 0
    for line in Path("/proc/stat").read_text().splitlines():
        name, *values = line.split()
        if name.startswith("cpu") and name[3:].isdigit() and int(name[3:]) in cores:
            ticks = [int(v) for v in values]
            # user nice system idle iowait irq softirq steal (guest time is inside user)
            steal += ticks[7] if len(ticks) > 7 else 0
            total += sum(ticks[:8])
    return steal, total


def steal_share(before: tuple[int, int], after: tuple[int, int]) -> float:
    """The share of the cores' time stolen between two ``core_ticks`` readings."""
    elapsed = after[1] - before[1]
    return (after[0] - before[0]) / elapsed if elapsed > 0 else 0.0


def core_busy_ticks(cores: set[int]) -> tuple[int, int]:
    """(busy, all) clock ticks of ``cores`` so far, from /proc/stat: busy is all but idle
    and iowait, whoever ran (on a shared machine, other people's processes too)."""
    busy = total = 0
    for line in Path("/proc/stat").read_text().splitlines():
        name, *values = line.split()
        if name.startswith("cpu") and name[3:].isdigit() and int(name[3:]) in cores:
            ticks = [int(v) for v in values[:8]]
            busy += sum(ticks) - ticks[3] - ticks[4]
            total += sum(ticks)
    return busy, total


def busy_share(before: tuple[int, int], after: tuple[int, int]) -> float:
    """The share of the cores' time busy between two ``core_busy_ticks`` readings."""
    elapsed = after[1] - before[1]
    return round((after[0] - before[0]) / elapsed, 3) if elapsed > 0 else 0.0


@contextmanager
def pinned_here(cores: set[int]) -> Iterator[None]:
    """This process (the bench's own clients, e.g. a latency probe) runs on ``cores`` for
    the block, then where it ran before."""
    before = os.sched_getaffinity(0)
    pin(0, cores)
    try:
        yield
    finally:
        pin(0, before)


def rss_bytes(pid: int) -> int:
    """Resident memory of the process."""
    return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE_SIZE


def pin(pid: int, cores: set[int]) -> None:
    with suppress(OSError):
        os.sched_setaffinity(pid, cores)


@contextmanager
def redis_server(folder: Path, cores: set[int] | None = None) -> Iterator[str]:
    """A throwaway redis-server (the tests' launcher's), pinned to ``cores`` when given;
    yields its URL."""
    with unpinned_redis_server(folder) as url:
        if cores is not None:
            pin(redis_pid(url), cores)
        yield url


def redis_pid(url: str) -> int:
    """The process id of the redis-server behind ``url`` (from its INFO)."""
    import redis

    client = redis.Redis.from_url(url)
    try:
        info: dict[str, Any] = client.info("server")  # type: ignore[assignment]
        return int(info["process_id"])
    finally:
        client.close()


@dataclass
class Server:
    """A server under test in its own process, pinned to the server core."""

    args: list[str]
    health_path: str
    port: int = field(default_factory=free_port)
    stats_file: Path | None = None
    # Where bench.serve writes the event loop's lag (see bench/serve.py), when set.
    lag_file: Path | None = None
    cores: set[int] = field(default_factory=lambda: set(SERVER_CORE))
    # A command the interpreter runs under (valgrind for bench/instructions.py), and how
    # long the server may take to answer its health check.
    wrapper: list[str] = field(default_factory=list)
    start_timeout: float = 30.0
    # The checkout the server runs from (another one's bridge, for a before/after table).
    cwd: Path = PROJECT_ROOT
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def start(self) -> Server:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        if self.stats_file is not None:
            env["BENCH_GC_STATS"] = str(self.stats_file)
        if self.lag_file is not None:
            env["BENCH_LOOP_LAG"] = str(self.lag_file)
        self.process = subprocess.Popen(
            [
                *self.wrapper,
                sys.executable,
                *[a.replace("{port}", str(self.port)) for a in self.args],
            ],
            cwd=self.cwd,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE if os.environ.get("BENCH_QUIET_SERVER") else None,
            env=env,
        )
        pin(self.process.pid, self.cores)
        wait_healthy(
            self.process,
            self.url + self.health_path,
            lambda: str(self.args),
            timeout=self.start_timeout,
        )
        return self

    def gc_pauses(self, since: float, until: float) -> list[tuple[float, int, float, float]]:
        """(wall time, generation, pause seconds, CPU seconds) of the server's collections
        in a window."""
        if self.stats_file is None or not self.stats_file.exists():
            return []
        pauses: list[list[Any]] = []
        for line in self.stats_file.read_text().splitlines():
            try:
                pauses.append(json.loads(line))
            except ValueError:
                continue  # a line being written
        return [(t, g, d, c) for t, g, d, c in pauses if since <= t <= until]

    def loop_lags(self, since: float, until: float) -> list[float]:
        """The server's event-loop lag samples (seconds) in a wall-time window."""
        if self.lag_file is None or not self.lag_file.exists():
            return []
        lags: list[float] = []
        for line in self.lag_file.read_text().splitlines():
            try:
                at, lag = json.loads(line)
            except ValueError:
                continue  # a line being written
            if since <= at <= until:
                lags.append(lag)
        return lags

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None


def bridge_server(
    data_dir: Path,
    redis_url: str | None = None,
    cores: set[int] | None = None,
    wrapper: list[str] | None = None,
    start_timeout: float = 30.0,
) -> Server:
    store = ["--data-dir", str(data_dir)] + (["--redis", redis_url] if redis_url else [])
    server = Server(
        [
            "-m",
            "bench.serve",
            *store,
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            "{port}",
            "--no-default-world",
            # Every load generator connects from loopback: the per-address cap (issue 7's
            # slow-loris guard) would refuse the bench's own clients.
            "--max-connections-per-address",
            "0",
        ],
        "/healthz",
        stats_file=data_dir / f"gc-{free_port()}.json",
        wrapper=wrapper or [],
        start_timeout=start_timeout,
    )
    if cores is not None:
        server.cores = cores
    return server
