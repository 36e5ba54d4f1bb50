"""Run the real bridge as a child process on a free loopback port, and the redis-server
it may stand on.

The one home of the launcher: free ports, a throwaway redis-server, the wait for health and
the bridge process itself. The bench starts its servers with these too (bench/proc.py adds
its CPU pinning and /proc readings around them); nothing here imports the bench."""

from __future__ import annotations

import json
import os
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


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def redis_server(folder: Path) -> Iterator[str]:
    """A throwaway redis-server on a free loopback port (no persistence); yields its URL."""
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
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1) as probe:
                    probe.sendall(b"PING\r\n")
                    if probe.recv(16).startswith(b"+PONG"):
                        break
            except OSError:
                pass
            if time.monotonic() > deadline or process.poll() is not None:
                raise RuntimeError("redis-server did not start")
            time.sleep(0.05)
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
    """Register a world and return its GM key: through the CLI, or for a bridge served in
    the test's process through the service as the CLI does (no interpreter start-up)."""
    from tests import in_process

    if isinstance(target, in_process.InProcessBridge):
        return in_process.add_world_in_process(target, world_id, ruleset)
    out = cli(target, "world", "add", world_id, "--ruleset", ruleset, "--json").stdout
    key: str = json.loads(out)["key"]
    return key


@dataclass
class BridgeProcess:
    """``python -m bridge serve`` as a child process with --dev-dice (unless told not to)
    on a free loopback port; its stdout and stderr go to ``bridge-PORT.log`` in the data
    folder (:meth:`log_text`). :meth:`start` returns once ``/healthz`` answers; the tests
    whose subject is the process (``@pytest.mark.process``) stop, kill and restart it."""

    data_dir: Path
    dev_dice: bool = True
    port: int = field(default_factory=free_port)
    redis_url: str | None = None
    process: subprocess.Popen[str] | None = None
    output: list[str] = field(default_factory=list)
    # The command that runs the bridge, and the folder it runs in (an installed
    # ``fate-bridge`` from elsewhere, say).
    program: tuple[str, ...] = PYTHON_M_BRIDGE
    cwd: Path = PROJECT_ROOT

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def store_args(self) -> list[str]:
        args = ["--data-dir", str(self.data_dir)]
        return [*args, "--redis", self.redis_url] if self.redis_url else args

    def start(self, *extra: str) -> BridgeProcess:
        args = [*self.program, *self.store_args, "serve"]
        args += ["--host", "127.0.0.1", "--port", str(self.port), *extra]
        if self.dev_dice:
            args.append("--dev-dice")
        log = open(self.data_dir / f"bridge-{self.port}.log", "a")  # noqa: SIM115
        self.process = subprocess.Popen(
            args,
            cwd=self.cwd,
            stdout=log,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        wait_healthy(self.process, f"{self.url}/healthz", lambda: f"bridge:\n{self.log_text()}")
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
