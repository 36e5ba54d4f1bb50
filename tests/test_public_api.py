"""The bridge uses python-socketio and python-engineio through their public API only
(issue 27): no attribute of theirs whose name starts with one underscore is read, called,
assigned or overridden anywhere in ``bridge/``, and nothing is assigned into their modules.
The next minor release of either may rename what is private; the bridge must not notice."""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass
from pathlib import Path

import engineio
import engineio.async_drivers.aiohttp
import engineio.async_socket
import socketio
import socketio.packet

BRIDGE = Path(__file__).resolve().parent.parent / "bridge"
LIBRARIES = ("socketio", "engineio")


def _private(names: list[str]) -> set[str]:
    return {n for n in names if n.startswith("_") and not n.startswith("__")}


def library_private_names() -> frozenset[str]:
    """Single-underscore names on the library classes the bridge meets, from ``dir()`` of
    the classes and of live instances (which adds what ``__init__`` sets)."""
    server = socketio.AsyncServer(async_mode="aiohttp")
    eio = server.eio
    instances: list[object] = [
        server,
        eio,
        server.manager,
        socketio.AsyncNamespace("/x"),
        socketio.packet.Packet(),
        engineio.async_socket.AsyncSocket(eio, "sid"),
        engineio.async_drivers.aiohttp.WebSocket(None, eio),
    ]
    classes: list[type] = [
        socketio.AsyncServer,
        socketio.AsyncManager,
        socketio.AsyncRedisManager,
        socketio.AsyncNamespace,
        socketio.packet.Packet,
        engineio.AsyncServer,
        engineio.async_socket.AsyncSocket,
        engineio.async_drivers.aiohttp.WebSocket,
    ]
    names: set[str] = set()
    for thing in [*classes, *instances]:
        names |= _private(dir(thing))
    return frozenset(names)


@dataclass(frozen=True)
class Use:
    path: str
    line: int
    what: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.what}"


def _root_name(node: ast.expr) -> str | None:
    while isinstance(node, ast.Attribute | ast.Subscript):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def private_uses(source: str, path: str, private: frozenset[str]) -> list[Use]:
    """Every place in ``source`` that touches a library's private name: an attribute
    (read, call, assignment), a method defined under that name, ``getattr``/``setattr``
    with it as a string; and every assignment into a socketio/engineio module."""
    tree = ast.parse(source)
    modules: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in LIBRARIES:
                    modules.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in LIBRARIES:
            for alias in node.names:
                modules.add(alias.asname or alias.name)
    uses: list[Use] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in private:
            uses.append(Use(path, node.lineno, f"attribute {node.attr}"))
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name in private:
            uses.append(Use(path, node.lineno, f"override {node.name}"))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "setattr", "hasattr", "delattr")
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
            and node.args[1].value in private
        ):
            uses.append(Use(path, node.lineno, f"{node.func.id} {node.args[1].value!s}"))
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        for target in targets:
            if isinstance(target, ast.Attribute | ast.Subscript) and _root_name(target) in modules:
                uses.append(Use(path, target.lineno, f"assignment into {ast.unparse(target)}"))
    return uses


def _meets_the_libraries(path: Path, source: str) -> bool:
    """Whether a module can hold a socketio/engineio object: the wire's own modules, and
    any module that imports either library. (The others are not scanned: the SQLite
    store's own ``self._thread`` is no AsyncRedisManager's.)"""
    if path.parent.name == "transport" or path.name == "server.py":
        return True
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(
            a.name.split(".")[0] in LIBRARIES for a in node.names
        ):
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in LIBRARIES:
            return True
    return False


def bridge_private_uses() -> list[Use]:
    private = library_private_names()
    uses: list[Use] = []
    for path in sorted(BRIDGE.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        if _meets_the_libraries(path, source):
            relative = str(path.relative_to(BRIDGE.parent))
            uses += private_uses(source, relative, private)
    return uses


def test_the_bridge_uses_no_private_name_of_python_socketio_or_engineio() -> None:
    uses = bridge_private_uses()
    assert not uses, "\n".join(str(use) for use in uses)


def test_the_scan_finds_each_kind_of_private_use() -> None:
    # What the bridge did before issue 27, one of each kind: the scan must flag them all.
    before = textwrap.dedent(
        """
        import functools
        import socketio
        from engineio.async_drivers import aiohttp as engineio_aiohttp

        class FateServer(socketio.AsyncServer):
            async def _handle_eio_message(self, eio_sid, data):
                await super()._handle_eio_message(eio_sid, data)

            async def answer(self, eio_sid, pkt):
                await self._send_packet(eio_sid, pkt)

        def create_app(sio):
            sio.eio._async = {**sio.eio._async}
            engineio_aiohttp.WebSocket.send = None
            socketio.packet.Packet.json = None
            return getattr(sio, "_binary_packet")
        """
    )
    uses = private_uses(before, "before.py", library_private_names())
    kinds = sorted({use.what.split()[0] for use in uses})
    assert kinds == ["assignment", "attribute", "getattr", "override"], uses
    assert {use.what for use in uses} >= {
        "override _handle_eio_message",
        "attribute _handle_eio_message",
        "attribute _send_packet",
        "attribute _async",
        "assignment into engineio_aiohttp.WebSocket.send",
        "assignment into socketio.packet.Packet.json",
        "getattr _binary_packet",
    }
