"""Run the real bridge as a child process on a free loopback port, and the redis-server
it may stand on.

The one home of the launcher: free ports, a throwaway redis-server, the wait for health and
the bridge process itself. The bench starts its servers with these too (bench/proc.py adds
its CPU pinning and /proc readings around them); nothing here imports the bench."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import httpx

PROJECT_ROOT = Path(__file__).resolve().parent.parent

# How the tests run the bridge's command: this interpreter's, from the source tree.
PYTHON_M_BRIDGE = (sys.executable, "-m", "bridge")


# Another test (another xdist worker, or a client's outgoing connection) may take the port
# :func:`free_port` found before a server binds it: a bridge that was given no port of its
# own, or a redis-server, tries again on a fresh one, this many times.
PORT_TRIES = 5


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _redis_pid(port: int) -> int | None:
    """The process id of the redis-server answering on ``port``, if one answers."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as probe:
            probe.sendall(b"INFO server\r\n")
            answer = b""
            # The reply is one bulk string; its process_id line is all this needs of it.
            while not re.search(rb"process_id:(\d+)\r\n", answer):
                chunk = probe.recv(4096)
                if not chunk:
                    return None
                answer += chunk
    except OSError:
        return None
    found = re.search(rb"process_id:(\d+)\r\n", answer)
    return int(found.group(1)) if found else None


@contextmanager
def redis_server(folder: Path) -> Iterator[str]:
    """A throwaway redis-server on a free loopback port (no persistence); yields its URL.

    Ready once the server on the port says it is this one (its process id): should another
    test's redis-server hold the port found free, this one exits and another port is tried."""
    for tries_left in range(PORT_TRIES - 1, -1, -1):
        port = free_port()
        process = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(folder),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 20
        while _redis_pid(port) != process.pid:
            if process.poll() is not None or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        else:
            break
        process.terminate()
        process.wait(timeout=10)
        if not tries_left:
            raise RuntimeError("redis-server did not start")
    try:
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        process.wait(timeout=10)


def flush_redis(url: str) -> None:
    """Empty one Redis database (each test, and each bench part, gets a fresh one)."""
    import redis

    client = redis.Redis.from_url(url)
    try:
        client.flushdb()
    finally:
        client.close()


def wait_healthy(
    process: subprocess.Popen[Any], url: str, describe: Callable[[], str], timeout: float = 30
) -> None:
    """Return once ``url`` answers 200; raise (with ``describe()``, e.g. the server's log)
    when the process exits first or the timeout passes."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited early: {describe()}")
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.05)
    raise RuntimeError(f"server did not become healthy: {describe()}")


class Bridge(Protocol):
    """What a test reaches a running bridge by, whether it runs in a process of its own
    (:class:`BridgeProcess`) or in the test's (``tests.in_process.InProcessBridge``)."""

    data_dir: Path
    port: int
    redis_url: str | None

    @property
    def url(self) -> str: ...

    @property
    def store_args(self) -> list[str]: ...

    def log_text(self) -> str:
        """What the bridge has logged so far, in its own format."""
        ...


@dataclass
class Served:
    """Where a bridge serves and what it stands on, and the command line that serves it:
    what :class:`BridgeProcess` runs and ``tests.in_process.InProcessBridge`` parses."""

    data_dir: Path
    dev_dice: bool = True
    port: int = field(default_factory=free_port)
    redis_url: str | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def store_args(self) -> list[str]:
        args = ["--data-dir", str(self.data_dir)]
        return [*args, "--redis", self.redis_url] if self.redis_url else args

    def serve_args(self, *extra: str) -> list[str]:
        """The global store flags, then ``serve`` on loopback at :attr:`port` with the
        flags ``extra`` (and ``--dev-dice`` unless told not to)."""
        args = [*self.store_args, "serve", "--host", "127.0.0.1", "--port", str(self.port)]
        return [*args, *extra, *(["--dev-dice"] if self.dev_dice else [])]


def store_args(target: Path | Bridge) -> list[str]:
    """The global flags that point the CLI at a data folder, or at a bridge's store."""
    if isinstance(target, Path):
        return ["--data-dir", str(target)]
    return target.store_args


def cli(
    target: Path | Bridge,
    *args: str,
    check: bool = True,
    cwd: Path = PROJECT_ROOT,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m bridge`` with the given arguments; raises on failure unless
    ``check`` is false."""
    return subprocess.run(
        [*PYTHON_M_BRIDGE, *store_args(target), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=check,
        timeout=60,
        env=env,
    )


def add_world(target: Path | Bridge, world_id: str, ruleset: str = "unwritten") -> str:
    """Register a world as ``world add ID --ruleset RULESET --json`` does and return its GM
    key: the command run in the test's process (``tests.in_process.run_cli``; no
    interpreter start-up), on a data folder or on a bridge's store, served in a process of
    its own or in the test's."""
    from tests.in_process import run_cli

    out = run_cli(target, "world", "add", world_id, "--ruleset", ruleset, "--json").stdout
    key: str = json.loads(out)["key"]
    return key


@dataclass
class BridgeProcess(Served):
    """``python -m bridge serve`` as a child process with --dev-dice (unless told not to)
    on a free loopback port; its stdout and stderr go to ``bridge-PORT.log`` in the data
    folder (:meth:`log_text`). :meth:`start` returns once ``/healthz`` answers; the tests
    whose subject is the process (``@pytest.mark.process``) stop, kill and restart it."""

    process: subprocess.Popen[str] | None = None
    output: list[str] = field(default_factory=list)
    # The command that runs the bridge, and the folder it runs in (an installed
    # ``fate-bridge`` from elsewhere, say).
    program: tuple[str, ...] = PYTHON_M_BRIDGE
    cwd: Path = PROJECT_ROOT
    # Whether the port may change: the first start on a port found free, not a restart.
    fresh_port: bool = field(default=True, repr=False)

    def start(self, *extra: str) -> BridgeProcess:
        for tries_left in range(PORT_TRIES - 1, -1, -1):
            with open(self.data_dir / f"bridge-{self.port}.log", "a") as log:
                self.process = subprocess.Popen(
                    [*self.program, *self.serve_args(*extra)],
                    cwd=self.cwd,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    text=True,
                    env={**os.environ, "PYTHONUNBUFFERED": "1"},
                )
            try:
                wait_healthy(
                    self.process, f"{self.url}/healthz", lambda: f"bridge:\n{self.log_text()}"
                )
            except RuntimeError:
                taken = self.process.poll() is not None and "already in use" in self.log_text()
                if not (taken and self.fresh_port and tries_left):
                    raise
                self.port = free_port()
                continue
            break
        self.fresh_port = False
        return self

    def log_text(self) -> str:
        path = self.data_dir / f"bridge-{self.port}.log"
        return path.read_text() if path.exists() else ""

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def restart(self) -> BridgeProcess:
        self.stop()
        return self.start()
