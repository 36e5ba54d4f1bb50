"""The bench's relay hop (bench/foundry.py, bench/relay_host.py, bench/relay_load.py): the
fake Foundry server forwards as Foundry's does, and a player's intents reach a real bridge
through the relay host. No timings are checked here: ``python -m bench --only relay``
measures them."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator
from typing import Any

import pytest
import socketio
from aiohttp import web

from bench.foundry import foundry_app
from bench.load import CallFailed
from bench.relay_host import CHANNEL, RelayHost, sender_of
from bench.relay_load import Player, passive_overcome
from bench.seed import HERO
from bridge.service.protocol import NAMESPACE
from tests.bridge_process import BridgeProcess, free_port
from tests.seats import gm_auth

WAIT = 10.0
_tags = itertools.count(1)


@pytest.fixture
async def foundry() -> AsyncIterator[str]:
    """The fake Foundry server, in this process, on a free loopback port."""
    runner = web.AppRunner(foundry_app())
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


class Listener:
    """A Foundry client as its user: every event it hears, in order, with its arguments."""

    def __init__(self, user: str) -> None:
        self.user = user
        self.client = socketio.AsyncClient(reconnection=False)
        self.heard: asyncio.Queue[tuple[str, tuple[Any, ...]]] = asyncio.Queue()

        async def hear(event: str, *args: Any) -> None:
            await self.heard.put((event, args))

        self.client.on("*", hear)

    async def open(self, url: str) -> Listener:
        await self.client.connect(url, auth={"userId": self.user}, transports=["websocket"])
        return self

    async def next_on(self, channel: str) -> tuple[Any, ...]:
        """The arguments of the next event heard on ``channel`` (others are passed over)."""
        while True:
            event, args = await asyncio.wait_for(self.heard.get(), WAIT)
            if event == channel:
                return args


@pytest.fixture
async def listeners(foundry: str) -> AsyncIterator[list[Listener]]:
    opened: list[Listener] = []
    yield opened
    for listener in opened:
        await listener.client.disconnect()


async def test_a_message_reaches_every_other_client_with_its_sender_last(
    foundry: str, listeners: list[Listener]
) -> None:
    alice, bob, gm = [await Listener(u).open(foundry) for u in ("alice", "bob", "gm")]
    listeners.extend((alice, bob, gm))
    # A sender that names another user after its data: Foundry's id still comes last.
    await alice.client.emit(CHANNEL, ({"t": "hi"}, "gm"))
    for other in (bob, gm):
        args = await other.next_on(CHANNEL)
        assert args == ({"t": "hi"}, "gm", "alice")
        assert sender_of(args) == "alice"
    # Never back to its emitter: bob's answer is the first thing alice hears on the channel,
    # and the server handled alice's message before it.
    await bob.client.emit(CHANNEL, {"t": "back"})
    assert await alice.next_on(CHANNEL) == ({"t": "back"}, "bob")


async def test_only_module_and_system_events_are_forwarded(
    foundry: str, listeners: list[Listener]
) -> None:
    alice, bob = [await Listener(u).open(foundry) for u in ("alice", "bob")]
    listeners.extend((alice, bob))
    await alice.client.emit("chat", {"t": "not forwarded"})
    await alice.client.emit("system.fco", {"t": "forwarded"})
    event, args = await asyncio.wait_for(bob.heard.get(), WAIT)
    while event in ("activeUsers", "userActivity"):
        event, args = await asyncio.wait_for(bob.heard.get(), WAIT)
    assert (event, args) == ("system.fco", ({"t": "forwarded"}, "alice"))


async def test_presence_is_told_as_foundry_tells_it(
    foundry: str, listeners: list[Listener]
) -> None:
    alice = await Listener("alice").open(foundry)
    listeners.append(alice)
    assert await alice.next_on("activeUsers") == (["alice"],)
    bob = await Listener("bob").open(foundry)
    listeners.append(bob)
    assert await bob.next_on("activeUsers") == (["alice", "bob"],)
    assert await alice.next_on("userActivity") == ("bob", {"active": True})
    await bob.client.disconnect()
    assert await alice.next_on("userActivity") == ("bob", {"active": False})


async def test_a_client_without_a_user_is_refused(foundry: str) -> None:
    client = socketio.AsyncClient(reconnection=False)
    with pytest.raises(socketio.exceptions.ConnectionError):
        await client.connect(foundry, auth={}, transports=["websocket"])


@pytest.fixture
async def relay_host(
    foundry: str, bridge: BridgeProcess, world: tuple[str, str]
) -> AsyncIterator[RelayHost]:
    """The GM's client relaying for a world whose hero player1 owns, with the players'
    ratings trusted (as the bench seeds its relay world)."""
    host = RelayHost("gm")
    await host.start(foundry, bridge.url, gm_auth(world))
    for event, payload in (
        ("actor.sync", {"actor": {**HERO, "owners": ["player1"]}}),
        ("world.settings", {"trust_player_ratings": True}),
    ):
        ack = await host.bridge.call(
            event, {"request_id": event, **payload}, namespace=NAMESPACE, timeout=WAIT
        )
        assert ack["ok"], ack
    try:
        yield host
    finally:
        await host.stop()


@pytest.fixture
async def players(foundry: str, relay_host: RelayHost) -> AsyncIterator[list[Player]]:
    opened = [Player(user, relay_host.user) for user in ("player1", "player2")]
    for player in opened:
        await player.open(foundry)
    try:
        yield opened
    finally:
        for player in opened:
            await player.close()


async def test_players_reach_the_bridge_only_through_the_relay_host(
    foundry: str, listeners: list[Listener], relay_host: RelayHost, players: list[Player]
) -> None:
    """One bridge for the three cases (a bridge process takes seconds to start)."""
    owner, other = players
    intents: list[float] = []
    await passive_overcome(owner, f"t{next(_tags)}", intents)
    assert len(intents) == 2
    assert relay_host.take_stats()["bridge_calls"]
    # The emits went to every client, before the answer: the owner has them already.
    assert owner.emits > 0
    for _ in range(int(WAIT / 0.05)):
        if other.emits:
            break
        await asyncio.sleep(0.05)
    assert other.emits > 0

    # A relayed user has a player's authority: it acts only for what it owns.
    with pytest.raises(CallFailed, match="forbidden"):
        await passive_overcome(other, f"t{next(_tags)}", [])

    # An answer from anyone but the host is not an answer.
    forger, watcher = [await Listener(u).open(foundry) for u in ("player2", "watcher")]
    listeners.extend((forger, watcher))
    waiting: asyncio.Future[object] = asyncio.get_running_loop().create_future()
    owner.pending["forged"] = waiting
    forged = {"t": "relay.answer", "to": owner.user, "id": "forged", "ack": {"ok": True}}
    await forger.client.emit(CHANNEL, forged)
    # Once another client has it, the server has sent it to the owner too: it reaches the
    # owner before the host's answer to any request sent after.
    assert await watcher.next_on(CHANNEL) == (forged, "player2")
    await passive_overcome(owner, f"t{next(_tags)}", [])
    assert not waiting.done()
