"""The real bridge served inside the test's own process: what ``python -m bridge serve``
runs, without the interpreter start-up.

:class:`InProcessBridge` parses its flags with the command's own parser and runs the
command's own serve coroutine (the store, the webhook outbox, the app ``create_app``
builds, the connection gate, the default world) on a free loopback port, so a test's real
Socket.IO and HTTP clients reach it over real TCP, on the real SQLite file or the real
redis-server. An async test serves it in its own event loop (:meth:`InProcessBridge.serve`);
a synchronous test, which has no running loop while it calls the bridge, in a loop on a
thread of its own (:func:`serving_in_thread`). :func:`add_world_in_process` registers a
world as ``world add`` does, through the service, without a subprocess.

What stays the process's: the garbage collector's tuning (``tune_gc`` freezes the whole
interpreter's heap, the test runner's included: left alone here), the logging set-up and
the process's output (a test reading the bridge's log, or killing, stopping or restarting
it, runs the real process: ``@pytest.mark.process``)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import NoReturn
from unittest import mock

import aiohttp

from bridge import cli
from bridge.server import GcFreezer
from bridge.service import BridgeService
from tests.bridge_process import free_port

START_TIMEOUT = 30.0
STOP_TIMEOUT = 10.0


class ProcessOnly(AttributeError):
    """A test asked an in-process bridge for what only a bridge process has."""

    def __init__(self, name: str) -> None:
        super().__init__(
            f"the bridge runs in the test's process: it has no {name}(); a test that needs "
            "it runs the real process with @pytest.mark.process"
        )


def _leave_gc_alone() -> None:
    """Stands in for ``bridge.server.tune_gc``: a serving process freezes its whole heap
    and tunes the collector for itself; here that heap is the test runner's."""


def _gc_freezers() -> int:
    return sum(isinstance(callback, GcFreezer) for callback in gc.callbacks)


def _parse(store_args: list[str], *command: str) -> argparse.Namespace:
    """The command's own parsing: its defaults, its environment variables, its checks."""
    args = cli.build_parser().parse_args([*store_args, *command])
    cli._resolve_data_dir(args)
    return args


@dataclass
class InProcessBridge:
    """A bridge served by this process: the same ``url``, ``port``, ``data_dir``,
    ``redis_url`` and ``store_args`` as :class:`~tests.bridge_process.BridgeProcess`."""

    data_dir: Path
    dev_dice: bool = True
    port: int = field(default_factory=free_port)
    redis_url: str | None = None
    task: asyncio.Task[int] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def store_args(self) -> list[str]:
        args = ["--data-dir", str(self.data_dir)]
        return [*args, "--redis", self.redis_url] if self.redis_url else args

    # What only a process has: a test that stops, kills, restarts or reads the output of
    # its bridge fails here, loudly, instead of passing against a bridge that never
    # stopped; it belongs with the process (``@pytest.mark.process``).
    def start(self, *extra: str) -> NoReturn:
        raise ProcessOnly("start")

    def stop(self) -> NoReturn:
        raise ProcessOnly("stop")

    def restart(self) -> NoReturn:
        raise ProcessOnly("restart")

    def log_text(self) -> NoReturn:
        raise ProcessOnly("log_text")

    @property
    def process(self) -> NoReturn:
        raise ProcessOnly("process")

    def serve_args(self, *extra: str) -> argparse.Namespace:
        """``serve``'s arguments as the command parses them for the process's flags."""
        flags = ["--host", "127.0.0.1", "--port", str(self.port), *extra]
        if self.dev_dice:
            flags.append("--dev-dice")
        return _parse(self.store_args, "serve", *flags)

    async def serve(self, *extra: str) -> InProcessBridge:
        """Serve in the running event loop with ``serve``'s flags ``extra``; return once
        ``/healthz`` answers 200 over TCP. Raises what the command would have stopped
        with (a ``StartupError``, say) if it ends first."""
        args = self.serve_args(*extra)
        freezers = _gc_freezers()
        with mock.patch.object(cli, "tune_gc", _leave_gc_alone):
            self.task = asyncio.create_task(cli._serve(args), name=f"bridge:{self.port}")
            await self._wait_healthy()
        # Should serving tune the collector some other way, this says so rather than let
        # it freeze the runner's heap behind a callback on a loop that is about to close.
        assert _gc_freezers() == freezers, "serving tuned the garbage collector"
        return self

    async def _wait_healthy(self) -> None:
        assert self.task is not None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + START_TIMEOUT
        timeout = aiohttp.ClientTimeout(total=1)
        async with aiohttp.ClientSession(timeout=timeout) as session:
            while loop.time() < deadline:
                if self.task.done():
                    self.task.result()  # its exception, if it has one
                    raise RuntimeError("the bridge stopped serving as it started")
                with contextlib.suppress(aiohttp.ClientError, TimeoutError):
                    async with session.get(f"{self.url}/healthz") as response:
                        if response.status == 200:
                            return
                await asyncio.sleep(0.01)
        await self.aclose()
        raise RuntimeError(f"the bridge on {self.url} did not become healthy")

    async def aclose(self) -> None:
        """Stop serving as the process does when told to: the serve coroutine's own
        clean-up (outbox, listener, app, store) runs; what it raises is raised here."""
        task, self.task = self.task, None
        if task is None:
            return
        if not task.done():
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(task, STOP_TIMEOUT)


@contextlib.contextmanager
def serving_in_thread(bridge: InProcessBridge, *extra: str) -> Iterator[InProcessBridge]:
    """Serve ``bridge`` in an event loop on a thread of its own for the ``with`` block:
    for a synchronous test, whose calls block the thread they run on."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name=f"bridge:{bridge.port}", daemon=True)
    thread.start()
    try:
        asyncio.run_coroutine_threadsafe(bridge.serve(*extra), loop).result(START_TIMEOUT + 5)
        try:
            yield bridge
        finally:
            asyncio.run_coroutine_threadsafe(bridge.aclose(), loop).result(STOP_TIMEOUT + 5)
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(STOP_TIMEOUT)
        loop.close()


async def _add_world(store_args: list[str], world_id: str, ruleset: str) -> str:
    """``world add ID --ruleset RULESET``: the command's store, opened as it opens it, and
    the service's ``add_world``."""
    args = _parse(store_args, "world", "add", world_id, "--ruleset", ruleset)
    store = await cli._open_store(args, create=True)
    try:
        _record, key = await BridgeService(store).add_world(
            args.id, args.name or args.id, args.ruleset
        )
    finally:
        await store.close()
    return key


def add_world_in_process(bridge: InProcessBridge, world_id: str, ruleset: str) -> str:
    """Register a world on ``bridge``'s store as ``world add`` does and return its GM key.

    Synchronous, as the tests call it, even from a test whose loop serves the bridge: it
    runs on a thread with a loop of its own and a store of its own, as the command would
    in its own process (a world that exists raises ``WorldExists``)."""
    keys: list[str] = []
    failures: list[BaseException] = []

    def run() -> None:
        try:
            keys.append(asyncio.run(_add_world(bridge.store_args, world_id, ruleset)))
        except BaseException as exc:  # handed to the caller's thread
            failures.append(exc)

    thread = threading.Thread(target=run, name=f"world-add:{world_id}")
    thread.start()
    thread.join()
    if failures:
        raise failures[0]
    return keys[0]
