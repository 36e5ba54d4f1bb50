"""The real bridge served inside the test's own process: what ``python -m bridge serve``
runs, without the interpreter start-up.

:class:`InProcessBridge` parses its flags with the command's own parser and runs the
command's own serve coroutine (the store, the webhook outbox, the app ``create_app``
builds, the connection gate, the default world) on a free loopback port, so a test's real
Socket.IO and HTTP clients reach it over real TCP, on the real SQLite file or the real
redis-server. An async test serves it in its own event loop (:meth:`InProcessBridge.serve`);
a synchronous test, which has no running loop while it calls the bridge, in a loop on a
thread of its own (:func:`serving_in_thread`). :func:`run_cli` runs the command line
(``world add``, ``world verify``, ``world webhooks`` ...) through its entry function, without
a subprocess.

While it serves, what this process logs is kept in the bridge's format and at its level
(``FATE_BRIDGE_LOG``), URLs cut as the bridge cuts them: :meth:`InProcessBridge.log_text`.

What stays the process's: the garbage collector's tuning (``tune_gc`` freezes the whole
interpreter's heap, the test runner's included: left alone here), the process's own
output and its life (a test reading what the command prints, or killing, stopping or
restarting it, runs the real process: ``@pytest.mark.process``)."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import gc
import io
import logging
import os
import subprocess
import threading
import traceback
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import NoReturn
from unittest import mock

import aiohttp

from bridge.cli import main, parse_args
from bridge.cli import serve as serve_command
from bridge.cli.logs import log_handler
from bridge.cli.startup import StartupError
from tests.bridge_process import PORT_TRIES, Bridge, Served, free_port, store_args

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


def _gc_tuning() -> tuple[tuple[int, ...], int]:
    return gc.get_threshold(), gc.get_freeze_count()


@dataclass
class InProcessBridge(Served):
    """A bridge served by this process: the same ``url``, ``port``, ``data_dir``,
    ``redis_url``, ``store_args`` and ``serve_args`` as
    :class:`~tests.bridge_process.BridgeProcess`."""

    task: asyncio.Task[int] | None = None
    log: io.StringIO = field(default_factory=io.StringIO)
    _log_handler: logging.Handler | None = None
    _root_level: int = logging.WARNING

    # What only a process has: a test that stops, kills, restarts or reads the output of
    # its bridge fails here, loudly, instead of passing against a bridge that never
    # stopped; it belongs with the process (``@pytest.mark.process``).
    def start(self, *extra: str) -> NoReturn:
        raise ProcessOnly("start")

    def stop(self) -> NoReturn:
        raise ProcessOnly("stop")

    def restart(self) -> NoReturn:
        raise ProcessOnly("restart")

    def log_text(self) -> str:
        """What was logged while this bridge served: every logger's lines at the
        bridge's level, the test's own clients' included (they share the process)."""
        return self.log.getvalue()

    @property
    def process(self) -> NoReturn:
        raise ProcessOnly("process")

    async def serve(self, *extra: str) -> InProcessBridge:
        """Serve in the running event loop with ``serve``'s flags ``extra``; return once
        ``/healthz`` answers 200 over TCP. Raises what the command would have stopped
        with (a ``StartupError``, say) if it ends first; a port another test took in the
        meantime is traded for a fresh one (:data:`~tests.bridge_process.PORT_TRIES`)."""
        for tries_left in range(PORT_TRIES - 1, -1, -1):
            try:
                return await self._serve(*extra)
            except StartupError as exc:
                cause = exc.__cause__
                taken = isinstance(cause, OSError) and cause.errno == errno.EADDRINUSE
                if not (taken and tries_left):
                    raise
                self.port = free_port()
        raise AssertionError("unreachable")

    async def _serve(self, *extra: str) -> InProcessBridge:
        # The command's own parsing: its defaults, its environment variables, its checks.
        args = parse_args(self.serve_args(*extra))
        self._capture_log()
        tuning = _gc_tuning()
        try:
            with mock.patch.object(serve_command, "tune_gc", _leave_gc_alone):
                serving = serve_command.serve(args)
                self.task = asyncio.create_task(serving, name=f"bridge:{self.port}")
                await self._wait_healthy()
        except BaseException:
            self._release_log()
            raise
        # Should serving tune the collector some other way, this says so rather than let
        # it freeze the runner's heap or set its thresholds for a loop about to close.
        assert _gc_tuning() == tuning, "serving tuned the garbage collector"
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
        try:
            if task is None:
                return
            if not task.done():
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait_for(task, STOP_TIMEOUT)
        finally:
            self._release_log()

    def _capture_log(self) -> None:
        """Keep the log as the command's own set-up would write it (``bridge.cli.main``:
        the root logger at the bridge's level, through :func:`bridge.cli.logs.log_handler`)."""
        if self._log_handler is not None:
            return
        root = logging.getLogger()
        self._log_handler = log_handler(self.log)
        self._root_level = root.level
        root.setLevel(min(root.level, self._log_handler.level))
        root.addHandler(self._log_handler)

    def _release_log(self) -> None:
        handler, self._log_handler = self._log_handler, None
        if handler is not None:
            root = logging.getLogger()
            root.removeHandler(handler)
            root.setLevel(self._root_level)


@contextlib.asynccontextmanager
async def serving_in_loop(bridge: InProcessBridge, *extra: str) -> AsyncIterator[InProcessBridge]:
    """Serve ``bridge`` in the running event loop with ``serve``'s flags ``extra`` for the
    ``async with`` block (:meth:`InProcessBridge.serve`), stopped after it."""
    served = await bridge.serve(*extra)
    try:
        yield served
    finally:
        await served.aclose()


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


def run_cli(
    target: Path | Bridge | None,
    *args: str,
    check: bool = True,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """``fate-bridge ARGS`` (after the store flags of ``target``, a data folder or a bridge)
    as :func:`tests.bridge_process.cli` runs it, but through the command's entry function
    ``bridge.cli.main`` in this process: no interpreter start-up. Its output and exit
    status come back as a ``CompletedProcess``'s (an exception the command lets out is a
    traceback on stderr and status 1, as from the process); ``env``, when given, is the
    whole environment it sees. It runs on a thread with an event loop of its own, as the
    command would in its own process, so a test whose loop serves the bridge may call it.
    For what only the process shows (start-up, the interpreter, the working folder, the
    printed commands run from elsewhere) the tests run the real one."""
    argv = [*(store_args(target) if target is not None else []), *args]
    out, err = io.StringIO(), io.StringIO()
    status: list[int] = []

    def run() -> None:
        try:
            status.append(main(argv))
        except SystemExit as exit_:  # argparse's --help, --version and usage errors
            code = exit_.code
            status.append(code if isinstance(code, int) else 0 if code is None else 1)
        except BaseException:
            traceback.print_exc(file=err)
            status.append(1)

    environment = mock.patch.dict(os.environ, env or {}, clear=env is not None)
    with CLI_LOCK, environment, contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        thread = threading.Thread(target=run, name=f"cli:{' '.join(args[:2])}")
        thread.start()
        thread.join()
    done = subprocess.CompletedProcess(
        ["fate-bridge", *argv], status[0], out.getvalue(), err.getvalue()
    )
    if check:
        done.check_returncode()
    return done


# One command at a time swaps this process's stdout, stderr and environment.
CLI_LOCK = threading.Lock()
