from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio
import socketio

from bridge.service.protocol import EMITS_FRAME, NAMESPACE, PROTOCOL_VERSION
from tests import fuzzing  # noqa: F401 - loads the hypothesis profile
from tests.bridge_process import Bridge, BridgeProcess, add_world, flush_redis
from tests.bridge_process import redis_server as start_redis
from tests.in_process import InProcessBridge, serving_in_loop, serving_in_thread
from tests.receiver import listener, receiver, second_listener  # noqa: F401 - fixtures for every module
from tests.seats import BROUSSEAU, GHOUL, MARGOT, Seat, card_put_back
from tests.stores import store  # noqa: F401 - a fixture for every module


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "process: the test's bridge is `python -m bridge serve` in a process of its own: "
        "the bridge fixture gives a BridgeProcess (for start-up, the command line, a kill "
        "or restart, several processes on one Redis, or the process's log), and tests that "
        "start one themselves carry it too; `-m 'not process'` is the in-process tier",
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Modules marked ``both_stores`` run every bridge test on SQLite and on Redis."""
    if "store_kind" in metafunc.fixturenames:
        kinds = ["sqlite"]
        if metafunc.definition.get_closest_marker("both_stores") is not None:
            kinds = ["sqlite", "redis"]
        elif metafunc.definition.get_closest_marker("redis_only") is not None:
            kinds = ["redis"]
        metafunc.parametrize("store_kind", kinds)


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real redis-server on a free loopback port, for the whole run."""
    with start_redis(tmp_path_factory.mktemp("redis")) as url:
        yield url


_prefixes = itertools.count(1)


@pytest.fixture
def redis_url(redis_server: str) -> str:
    """A fresh database number for each test, so nothing leaks between them."""
    return redis_server.rsplit("/", 1)[0] + f"/{next(_prefixes) % 16}"


def bridge_args(request: pytest.FixtureRequest) -> tuple[str, ...]:
    """The flags a test's ``bridge_args`` marker adds to ``serve`` (none without one)."""
    marker = request.node.get_closest_marker("bridge_args")
    return tuple(marker.args) if marker is not None else ()


@pytest.fixture
def bridge(tmp_path: Path, store_kind: str, request: pytest.FixtureRequest) -> Iterator[Bridge]:
    """A running bridge with --dev-dice and the flags of the test's ``bridge_args`` marker,
    on its own data folder (SQLite) or its own fresh Redis database, and its own free
    loopback port, reached over real TCP at ``bridge.url``.

    By default the bridge is the real app served in the test's own process
    (:class:`tests.in_process.InProcessBridge`: ``serve``'s own code, no interpreter
    start-up): in the test's event loop for an async test, on a thread's loop for a
    synchronous one. A test marked ``process`` gets a real ``python -m bridge serve``
    process (:class:`BridgeProcess`) instead, for what only a process has: its output, its
    death, its restart, its signals. Either is stopped at the end of the test."""
    redis = None
    if store_kind == "redis":
        redis = request.getfixturevalue("redis_url")
        flush_redis(redis)
    extra = bridge_args(request)
    if request.node.get_closest_marker("process") is not None:
        process = BridgeProcess(tmp_path, redis_url=redis).start(*extra)
        try:
            yield process
        finally:
            process.stop()
    elif pytest_asyncio.is_async_test(request.node):
        yield request.getfixturevalue("bridge_in_loop")
    else:
        with serving_in_thread(InProcessBridge(tmp_path, redis_url=redis), *extra) as served:
            yield served


@pytest.fixture
async def bridge_in_loop(
    tmp_path: Path, store_kind: str, request: pytest.FixtureRequest
) -> AsyncIterator[InProcessBridge]:
    """The in-process bridge served in the test's own event loop (``bridge`` asks for it
    for an async test; the Redis database is the one ``bridge`` flushed)."""
    redis = request.getfixturevalue("redis_url") if store_kind == "redis" else None
    async with serving_in_loop(
        InProcessBridge(tmp_path, redis_url=redis), *bridge_args(request)
    ) as served:
        yield served


API = "/api/v1/worlds"


def bearer(key: str) -> dict[str, str]:
    """The header that authenticates an HTTP API request with a world's GM key."""
    return {"Authorization": f"Bearer {key}"}


def world_api(bridge: Bridge, world: tuple[str, str]) -> httpx.AsyncClient:
    """An HTTP client of ``world``'s API (id, GM key) on ``bridge``, acting as its GM: a
    relative path (``/state``, ``/actions``) is under ``/api/v1/worlds/{id}/``."""
    return httpx.AsyncClient(base_url=f"{bridge.url}{API}/{world[0]}", headers=bearer(world[1]))


@pytest.fixture
def world(bridge: Bridge) -> tuple[str, str]:
    """A registered world: (id, GM key)."""
    return "table", add_world(bridge, "table")


Connect = Callable[..., Awaitable[socketio.AsyncClient]]


@pytest.fixture
async def connect(bridge: Bridge) -> AsyncIterator[Connect]:
    """Open real Socket.IO clients; every one is disconnected at the end."""
    clients: list[socketio.AsyncClient] = []

    async def _connect(
        world: str,
        *,
        role: str = "gm",
        user: str = "gmUser0000000001",
        key: str | None = None,
        protocol: int = PROTOCOL_VERSION,
        auth: dict[str, Any] | None = None,
        url: str | None = None,
    ) -> socketio.AsyncClient:
        client = socketio.AsyncClient(reconnection=False)
        # Every frame as it arrived, and every emit (a commit's frame unrolled, as the
        # module does) as (event, data).
        frames: list[tuple[str, Any]] = []
        received: list[tuple[str, Any]] = []
        client.frames = frames
        client.received = received

        async def _any(event: str, data: Any) -> None:
            frames.append((event, data))
            if event == EMITS_FRAME:
                received.extend((e["event"], e["data"]) for e in data["emits"])
            else:
                received.append((event, data))

        client.on("*", _any, namespace=NAMESPACE)
        # The sender hears its own commit in the ack (protocol.AckOk.emits): unrolled
        # into ``received`` as the module does, and an answer's card left to its emit put
        # back (protocol.ActionData); ``frames`` keeps only what came as frames.
        send = client.call

        async def call(event: str, data: Any = None, **kwargs: Any) -> Any:
            ack = await send(event, data, **kwargs)
            if isinstance(ack, dict) and isinstance(ack.get("emits"), list):
                received.extend((e["event"], e["data"]) for e in ack["emits"])
            return card_put_back(ack)

        client.call = call

        handshake = (
            auth
            if auth is not None
            else {
                "world": world,
                "role": role,
                "user": user,
                "protocol": protocol,
                **({"key": key} if key is not None else {}),
            }
        )
        clients.append(client)
        await client.connect(
            url or bridge.url,
            namespaces=[NAMESPACE],
            transports=["websocket"],
            auth=handshake,
            wait_timeout=10,
        )
        return client

    yield _connect
    for client in clients:
        if client.connected:
            await client.disconnect()


@pytest.fixture
async def gm(connect: Connect, world: tuple[str, str]) -> Seat:
    """The world's GM on a real Socket.IO connection, with Brousseau synced."""
    seat = Seat(await connect(world[0], key=world[1]))
    await seat.ok("actor.sync", actor=BROUSSEAU)
    return seat


@pytest.fixture
async def strict_table(connect: Connect, world: tuple[str, str]) -> dict[str, Seat]:
    """A GM with three synced actors and two bound players (paul, anna), with the world's
    default settings: every player's passive rating waits for the GM (R2.1)."""
    gm = Seat(await connect(world[0], key=world[1], user="gm"))
    for actor in (BROUSSEAU, MARGOT, GHOUL):
        await gm.ok("actor.sync", actor=actor)
    await gm.ok("fate.gm_budget", fate_points=2)
    seats = {"gm": gm}
    for user in ("paul", "anna"):
        seat = Seat(await connect(world[0], role="player", user=user))
        hello = await seat.ok("hello")
        assert hello["bound"] is False
        # What the player's module does (flag on its own User) and the GM's module reports:
        bound = await gm.ok("user.bind", user_id=user, nonce=hello["bind_nonce"])
        assert bound == {"user_id": user, "bound": True}
        seats[user] = seat
    return seats


@pytest.fixture
async def table(strict_table: dict[str, Seat]) -> dict[str, Seat]:
    """The same table, whose GM trusts the players' passive ratings (R2.1 Decision: a
    world setting), so scenarios about other rules need no confirmation step; danger
    and helpers are still the GM's and the owners' to confirm."""
    settings = await strict_table["gm"].ok("world.settings", trust_player_ratings=True)
    assert settings["settings"] == {"trust_player_ratings": True, "full_defense": False}
    return strict_table
