"""Run the real bridge as a child process on a free loopback port.

Ports, Redis and the wait for health come from :mod:`bench.proc` (their one home)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from bench.proc import PROJECT_ROOT, free_port, wait_healthy

# How the tests run the bridge's command: this interpreter's, from the source tree.
PYTHON_M_BRIDGE = (sys.executable, "-m", "bridge")


def store_args(target: Path | BridgeProcess) -> list[str]:
    """The global flags that point the CLI at a data folder, or at a bridge's store."""
    if isinstance(target, BridgeProcess):
        return target.store_args
    return ["--data-dir", str(target)]


def cli(
    target: Path | BridgeProcess,
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


def add_world(target: Path | BridgeProcess, world_id: str, ruleset: str = "unwritten") -> str:
    """Register a world through the CLI and return its GM key."""
    out = cli(target, "world", "add", world_id, "--ruleset", ruleset, "--json").stdout
    key: str = json.loads(out)["key"]
    return key


@dataclass
class BridgeProcess:
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
