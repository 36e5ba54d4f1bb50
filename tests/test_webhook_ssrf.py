"""Webhooks go only where a stranger's request may (DESIGN "Reach and trust"), over the
real wire: a real bridge (served in the test's process; a bridge process where the test
reads its log, or needs a setting fixed when it started), its HTTP API and CLI, and
loopback listeners this test starts. Private and metadata addresses are named only as
literals or names the bridge refuses unresolved, so nothing here leaves the machine, not
even a DNS query."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import socketio

from bridge.service.protocol import NAMESPACE
from tests.bridge_process import BridgeProcess, add_world, free_port
from tests.conftest import API, bearer, world_api
from tests.in_process import run_cli
from tests.receiver import Listener
from tests.seats import BROUSSEAU, Seat, gm_auth, overcome, queue

ALLOW_ENV = "FATE_BRIDGE_WEBHOOK_ALLOW"
# What a GM may read of a delivery that did not go through (never how it failed).
TRANSPORT_WORDS = ("Error", "Timeout", "refused", "reset", "Connect", "Read", "Errno", "public")


@contextlib.asynccontextmanager
async def gm_at(bridge: BridgeProcess, world: tuple[str, str]) -> AsyncIterator[Seat]:
    """The world's GM on a real Socket.IO connection, with Brousseau synced."""
    client = socketio.AsyncClient(reconnection=False)
    await client.connect(
        bridge.url,
        namespaces=[NAMESPACE],
        transports=["websocket"],
        auth=gm_auth(world),
        wait_timeout=10,
    )
    try:
        gm = Seat(client)
        await gm.ok("actor.sync", actor=BROUSSEAU)
        yield gm
    finally:
        await client.disconnect()


async def resolve_a_card(gm: Seat, request_id: str) -> None:
    await queue(gm, [1, 1, 0, 0])
    card = await overcome(gm, 2, request_id=request_id)
    final = await gm.card("action.pass", action_id=card["action_id"], side="actor")
    assert final["state"] == "resolved"


async def deliveries_settled(
    bridge: BridgeProcess, world: tuple[str, str], count: int, tries: int = 150
) -> list[dict[str, Any]]:
    """The world's deliveries once ``count`` of them have been tried at least once."""
    url = "/webhooks"
    listed: list[dict[str, Any]] = []
    async with world_api(bridge, world) as http:
        for _ in range(tries):
            listed = (await http.get(url)).json()["deliveries"]
            if len(listed) >= count and all(d["attempts"] >= 1 for d in listed):
                return listed
            await asyncio.sleep(0.1)
    raise AssertionError(f"deliveries not tried: {listed}")


def ssrf_targets(port: int) -> list[str]:
    """The attacker's targets: this host (as the listener's port), its networks, the
    clouds' metadata services; each an address literal or a name refused unresolved."""
    return [
        f"http://127.0.0.1:{port}/hook",
        f"http://localhost:{port}/hook",
        f"http://LOCALHOST.:{port}/hook",
        f"http://0.0.0.0:{port}/hook",
        f"http://127.1:{port}/hook",
        f"http://2130706433:{port}/hook",
        f"http://[::1]:{port}/hook",
        f"http://[::ffff:127.0.0.1]:{port}/hook",
        f"http://[::]:{port}/hook",
        "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
        "http://metadata.google.internal/computeMetadata/v1/",
        "http://100.100.100.200/latest/meta-data/",
        "http://[fd00:ec2::254]/latest/meta-data/",
        "http://10.0.0.1/admin",
        "http://172.16.0.1/",
        "http://172.31.255.254/",
        "http://192.168.1.1/",
        "http://100.64.0.1/",
        "http://[fd00::1]/",
        "http://[fe80::1]/",
        "http://224.0.0.1/",
        "http://192.0.2.10/",
        "https://printer.local/",
        "http://router/",
    ]


async def test_loopback_private_and_metadata_targets_are_refused_when_added_never_contacted(
    bridge: BridgeProcess, world: tuple[str, str], listener: Listener
) -> None:
    targets = ssrf_targets(listener.port)
    messages = set()
    async with world_api(bridge, world) as http:
        for url in targets:
            answer = await http.post("/webhooks", json={"kind": "json", "url": url})
            assert answer.status_code == 422, (url, answer.text)
            refused = answer.json()["error"]
            assert refused["code"] == "invalid" and refused["field"] == "url", (url, refused)
            host = httpx.URL(url).host
            messages.add(refused["message"].replace(host, "HOST"))
        # One message for all: it does not say which of them the host can reach.
        assert len(messages) == 1, messages
        assert "public internet addresses" in messages.pop()
        assert (await http.get("/webhooks")).json()["webhooks"] == []
    for url in targets[:3] + targets[9:11]:
        added = run_cli(bridge, "world", "webhooks", "add", world[0], "json", url, check=False)
        assert added.returncode == 1, (url, added.stdout, added.stderr)
        assert added.stderr.startswith("error: The bridge sends webhooks only to public"), url
    # A card resolves; had any target been kept, the outbox would post it within a second.
    async with gm_at(bridge, world) as gm:
        await resolve_a_card(gm, "after-refusals")
        await asyncio.sleep(2.0)
    assert listener.got == []


@pytest.fixture
def loopback_allowed_for_the_cli(
    bridge: BridgeProcess, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """The environment of a self-hosted GM's shell that allows loopback targets: the CLI
    the test runs inherits it, a bridge started before it does not."""
    monkeypatch.setenv(ALLOW_ENV, "127.0.0.1")
    yield


@pytest.mark.process
async def test_a_loopback_webhook_kept_from_before_is_checked_at_send_and_never_reached(
    bridge: BridgeProcess,
    world: tuple[str, str],
    listener: Listener,
    loopback_allowed_for_the_cli: None,
) -> None:
    # Registered where loopback was allowed (or before the rule), then served by a bridge
    # that allows no such thing: the send's own check refuses it, on the address itself.
    for url in (listener.url("/hook/s3cr3t?token=t0k3n"), listener.url("/x", "[::ffff:7f00:1]")):
        added = run_cli(bridge, "world", "webhooks", "add", world[0], "json", url, "--json")
        assert json.loads(added.stdout)["webhook"]["id"].startswith("wh_")
    async with gm_at(bridge, world) as gm:
        await resolve_a_card(gm, "kept-from-before")
    deliveries = await deliveries_settled(bridge, world, 2)
    assert listener.got == []
    for delivery in deliveries:
        assert delivery["status"] == "retrying", delivery
        assert delivery["last_error"] == "no answer", delivery
    log = bridge.log_text()
    assert "not sent to http://127.0.0.1" in log, log[-2000:]
    assert "s3cr3t" not in log and "t0k3n" not in log


@pytest.fixture
def self_hosted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[BridgeProcess]:
    """A self-hosted bridge whose host allows loopback targets (by the environment, as
    the CLI's commands see it too), logging at DEBUG."""
    monkeypatch.setenv(ALLOW_ENV, "127.0.0.1")
    monkeypatch.setenv("FATE_BRIDGE_LOG", "DEBUG")
    process = BridgeProcess(tmp_path).start()
    try:
        yield process
    finally:
        process.stop()


@pytest.mark.process
async def test_the_gm_reads_delivered_failed_or_retrying_with_a_status_only_from_an_answer(
    self_hosted: BridgeProcess,
    listener: Listener,
    second_listener: Listener,
) -> None:
    key = add_world(self_hosted, "home")
    world = ("home", key)
    closed_port = free_port()
    listener.redirect_to = second_listener.url("/elsewhere")
    targets = {
        "ok": listener.url("/ok"),
        "missing": listener.url("/missing"),
        "moved": listener.url("/moved"),
        "closed": f"http://127.0.0.1:{closed_port}/hook",
    }
    ids = {}
    async with httpx.AsyncClient(headers=bearer(key)) as http:
        for name, url in targets.items():
            created = await http.post(
                f"{self_hosted.url}{API}/home/webhooks", json={"kind": "json", "url": url}
            )
            assert created.status_code == 200, created.text
            ids[created.json()["webhook"]["id"]] = name
    async with gm_at(self_hosted, world) as gm:
        await resolve_a_card(gm, "statuses")
    deliveries = await deliveries_settled(self_hosted, world, 4)
    seen = {ids[d["webhook_id"]]: (d["status"], d["last_error"]) for d in deliveries}
    assert seen == {
        "ok": ("delivered", ""),
        "missing": ("failed", "HTTP 404"),
        "moved": ("failed", "HTTP 302"),  # redirects are not followed
        "closed": ("retrying", "no answer"),
    }
    assert second_listener.got == []
    shown = run_cli(self_hosted, "world", "webhooks", "list", "home").stdout
    assert "RETRYING" in shown and "HTTP 404" in shown and "FAILED" in shown
    for text in (json.dumps(deliveries), shown):
        assert not any(word in text for word in TRANSPORT_WORDS), text


@pytest.mark.process
async def test_at_debug_no_log_line_has_a_webhook_urls_path_or_query(
    self_hosted: BridgeProcess, listener: Listener
) -> None:
    key = add_world(self_hosted, "home")
    secret_url = listener.url("/hook/s3cr3t-path-t0ken?token=qu3ry-s3cr3t")
    refused_url = "http://169.254.169.254/latest/meta-data/m3tadata-path"
    async with httpx.AsyncClient(headers=bearer(key)) as http:
        base = f"{self_hosted.url}{API}/home/webhooks"
        created = await http.post(base, json={"kind": "json", "url": secret_url})
        assert created.status_code == 200, created.text
        refused = await http.post(base, json={"kind": "json", "url": refused_url})
        assert refused.status_code == 422, refused.text
    async with gm_at(self_hosted, ("home", key)) as gm:
        await resolve_a_card(gm, "logged")
    for _ in range(100):
        if listener.got:
            break
        await asyncio.sleep(0.05)
    assert listener.got and listener.got[0][1] == "/hook/s3cr3t-path-t0ken?token=qu3ry-s3cr3t"
    await asyncio.sleep(0.5)
    log = self_hosted.log_text()
    # DEBUG is on and httpx and httpcore both logged the delivery...
    assert " DEBUG httpcore" in log and "HTTP Request: POST http://127.0.0.1" in log, log[-3000:]
    # ...with no part of any URL's path or query, in any line.
    secret = created.json()["secret"]
    for part in ("s3cr3t", "t0ken", "qu3ry", "/hook", "m3tadata", "/latest/meta-data", secret):
        assert part not in log, (part, [line for line in log.splitlines() if part in line])
    assert os.environ.get("FATE_BRIDGE_LOG") == "DEBUG"
