"""Where a webhook may go, in the bridge's own process: the check when a target is added
and the check at every connection, on the address connected to. A stub resolver answers
for every name, and the network backend under the guard records what it is asked to
dial, so no test here sends anything off this machine (the loopback listener aside)."""

from __future__ import annotations

import ipaddress
import logging
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import httpcore
import httpx
import pytest
import respx

from bridge.cli.logs import RedactUrls, redact_urls
from bridge.service import BridgeService, IntentError, Session
from bridge.service.protocol.http import WebhookCreate
from bridge.service.webhook_settings import shown_error
from bridge.service.webhooks.outbox import NO_ANSWER, WebhookOutbox
from bridge.service.webhooks.reach import (
    TargetRefused,
    WebhookReach,
    is_public,
    webhook_client,
)
from bridge.store.sqlite import SQLiteStore
from bridge.store.webhooks import webhook_store_for
from tests.receiver import Listener
from tests.seats import BROUSSEAU, overcome_start
from tests.service_seat import ServiceSeat

WORLD = "table"
PUBLIC = "93.184.216.34"


class StubDns:
    """Answers from a table, one answer per lookup in turn; records every name asked."""

    def __init__(self, answers: dict[str, list[list[str]]]) -> None:
        self.answers = answers
        self.asked: list[str] = []

    async def __call__(self, host: str, port: int) -> list[str]:
        self.asked.append(host)
        turns = self.answers.get(host)
        if not turns:
            raise OSError(f"stub resolver: no name {host}")
        return turns.pop(0) if len(turns) > 1 else turns[0]


class RecordingBackend(httpcore.AsyncNetworkBackend):
    """Under the guard: records each dial, and dials only loopback (anything else would
    leave the machine, so it fails here instead)."""

    def __init__(self) -> None:
        self.dialled: list[tuple[str, int]] = []
        self.real = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        self.dialled.append((host, port))
        if not ipaddress.ip_address(host).is_loopback:
            raise httpcore.ConnectError(f"the test refuses to dial {host}")
        return await self.real.connect_tcp(host, port, timeout=timeout)

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Any = None
    ) -> httpcore.AsyncNetworkStream:
        raise AssertionError("no unix sockets")

    async def sleep(self, seconds: float) -> None:
        await self.real.sleep(seconds)


async def open_service(tmp_path: Path, reach: WebhookReach) -> BridgeService:
    store = SQLiteStore(tmp_path / "bridge.sqlite3")
    await store.open()
    hooks = webhook_store_for(store)
    await hooks.open()
    service = BridgeService(store, dev_dice=True, webhooks=hooks, webhook_reach=reach)
    await service.add_world(WORLD, "Table")
    return service


async def close_service(service: BridgeService) -> None:
    assert service.webhooks is not None
    await service.webhooks.close()
    await service.store.close()


async def add(service: BridgeService, url: str) -> str:
    created = await service.webhook_settings.add_webhook(WORLD, WebhookCreate(kind="json", url=url))
    return created.webhook.id


REFUSED_LITERALS = [
    "http://127.0.0.1:8080/hook",
    "http://127.8.9.10/",
    "http://0.0.0.0/",
    "http://[::]/",
    "http://[::1]/",
    "http://[::ffff:127.0.0.1]/",
    "http://[::ffff:10.1.2.3]/",
    "http://[::ffff:169.254.169.254]/",
    "http://169.254.169.254/latest/meta-data/",
    "http://100.100.100.200/latest/meta-data/",
    "http://[fd00:ec2::254]/",
    "http://10.0.0.1/",
    "http://172.16.0.1/",
    "http://172.31.255.255/",
    "http://192.168.0.1/",
    "http://100.64.0.1/",
    "http://100.127.255.254/",
    "http://[fc00::1]/",
    "http://[fd12:3456::1]/",
    "http://[fe80::1]/",
    "http://169.254.1.1/",
    "http://224.0.0.251/",
    "http://239.255.255.250/",
    "http://[ff02::1]/",
    "http://255.255.255.255/",
    "http://240.0.0.1/",
    "http://192.0.2.1/",
    "http://198.51.100.7/",
    "http://203.0.113.9/",
    "http://198.18.0.1/",
    "http://[2001:db8::1]/",
    "http://[64:ff9b::7f00:1]/",
    "http://[2002:7f00:1::1]/",
]
REFUSED_NAMES = [
    "http://localhost/",
    "http://LocalHost./",
    "http://api.localhost/",
    "http://metadata.google.internal/computeMetadata/v1/",
    "http://printer.local/",
    "http://nas.home.arpa/",
    "http://router/",
    "http://2130706433/",
    "http://0x7f000001/",
]


async def test_every_private_loopback_and_metadata_target_is_refused_when_added(
    tmp_path: Path,
) -> None:
    dns = StubDns(
        {
            "intranet.example": [["10.20.30.40"]],
            "rebind.example": [[PUBLIC, "127.0.0.1"]],  # one public answer is not enough
            "v6only.example": [["fd00::5"]],
            "mapped.example": [["::ffff:192.168.1.1"]],
            "hooks.example": [[PUBLIC]],
        }
    )
    service = await open_service(tmp_path, WebhookReach(resolve=dns))
    try:
        resolving = [
            "https://intranet.example/",
            "https://rebind.example/",
            "https://v6only.example/",
            "https://mapped.example/",
            "https://nowhere.example/",
        ]
        messages = set()
        for url in REFUSED_LITERALS + REFUSED_NAMES + resolving:
            with pytest.raises(IntentError) as refused:
                await add(service, url)
            assert refused.value.code == "invalid" and refused.value.field == "url", url
            messages.add(refused.value.message.replace(httpx.URL(url).host, "HOST"))
        # The same words for a private answer and for none: no map of the host's network.
        assert len(messages) == 1, messages
        # Literals and local names were judged without a lookup.
        assert sorted(set(dns.asked)) == sorted(httpx.URL(u).host for u in resolving)
        assert (await service.webhook_settings.list_webhooks(WORLD)).webhooks == []
        # A public answer is a target; Discord's hosts are public by name, not looked up.
        await add(service, "https://hooks.example/fate")
        created = await service.webhook_settings.add_webhook(
            WORLD,
            WebhookCreate(kind="discord", url="https://discord.com/api/webhooks/1/token"),
        )
        assert created.webhook.kind == "discord"
        assert "discord.com" not in dns.asked
    finally:
        await close_service(service)


async def test_the_hosts_allow_list_admits_named_hosts_and_ranges_only(tmp_path: Path) -> None:
    dns = StubDns({"n8n.lan": [["192.168.1.20"]], "other.lan": [["192.168.2.20"]]})
    reach = WebhookReach.from_entries(["n8n.lan", "127.0.0.1", "10.0.0.0/8", "fd00::/8"], dns)
    service = await open_service(tmp_path, reach)
    try:
        for url in (
            "http://n8n.lan:5678/webhook/x",
            "http://127.0.0.1:9000/x",
            "http://[::ffff:127.0.0.1]:9000/x",
            "http://10.1.2.3/x",
            "http://[fd00::1]/x",
        ):
            await add(service, url)
        for url in ("http://127.0.0.2/", "http://192.168.1.20/", "http://other.lan/"):
            with pytest.raises(IntentError):
                await add(service, url)
        assert "n8n.lan" not in dns.asked  # an allowed name is taken as it is
    finally:
        await close_service(service)
    for bad in ("http://x", "a b", "host:80", "", "10.0.0.0/33", "user@host"):
        with pytest.raises(ValueError):
            WebhookReach.from_entries([bad])


async def test_private_and_metadata_addresses_met_at_send_are_never_dialled() -> None:
    # Names that answered publicly when added and answer otherwise now; and literals kept
    # from before the rule. The guard judges each connection on the address it would use.
    targets = {
        "meta.example": "169.254.169.254",
        "ali.example": "100.100.100.200",
        "lan.example": "192.168.1.1",
        "ten.example": "10.0.0.1",
        "ula.example": "fd00::1",
        "loop.example": "127.0.0.1",
        "mapped.example": "::ffff:127.0.0.1",
        "zero.example": "0.0.0.0",
    }
    dns = StubDns({name: [[address]] for name, address in targets.items()})
    backend = RecordingBackend()
    async with webhook_client(WebhookReach(resolve=dns), backend) as client:
        urls = [f"http://{name}/x" for name in targets]
        urls += ["http://169.254.169.254/latest/meta-data/", "http://[::1]:1/", "http://10.0.0.1/"]
        urls += ["http://metadata.google.internal/", "https://localhost/"]
        for url in urls:
            with pytest.raises(TargetRefused):
                await client.post(url, content=b"{}")
    assert backend.dialled == []


async def test_a_name_that_turns_to_loopback_after_it_was_added_reaches_nothing(
    tmp_path: Path, listener: Listener, caplog: pytest.LogCaptureFixture
) -> None:
    # DNS rebinding: public when added, loopback when sent.
    dns = StubDns({"rebind.example": [[PUBLIC], ["127.0.0.1"]]})
    reach = WebhookReach(resolve=dns)
    service = await open_service(tmp_path, reach)
    backend = RecordingBackend()
    try:
        await add(service, f"http://rebind.example:{listener.port}/hook/s3cr3t")
        await card(service)
        assert service.webhooks is not None
        async with webhook_client(reach, backend) as client:
            outbox = WebhookOutbox(service.store, service.webhooks, client)
            with caplog.at_level(logging.INFO):
                assert await outbox.run_once() == 1
        (delivery,) = (await service.webhook_settings.list_webhooks(WORLD)).deliveries
        assert delivery.status == "retrying" and delivery.last_error == NO_ANSWER
        assert listener.got == [] and backend.dialled == []
        assert dns.asked == ["rebind.example", "rebind.example"]
        warned = [r.getMessage() for r in caplog.records if r.name == "bridge.service.webhooks"]
        assert any("not sent to http://rebind.example" in line for line in warned), warned
        assert not any("s3cr3t" in r.getMessage() for r in caplog.records)
    finally:
        await close_service(service)


async def test_the_connection_goes_to_the_address_checked_under_the_hosts_name(
    listener: Listener,
) -> None:
    # The name resolves once per connection, by the guard; the socket is opened to that
    # checked address (never the name, which a second lookup could answer otherwise),
    # and the request still names the host.
    dns = StubDns({"hooks.example": [["127.0.0.1"]]})
    backend = RecordingBackend()
    reach = WebhookReach.from_entries(["127.0.0.0/8"], dns)
    async with webhook_client(reach, backend) as client:
        answer = await client.post(listener.url(host="hooks.example"), content=b"{}")
    assert answer.status_code == 204
    assert backend.dialled == [("127.0.0.1", listener.port)]
    assert dns.asked == ["hooks.example"]
    ((method, path, headers),) = listener.got
    assert (
        method == "POST" and path == "/hook" and headers["Host"] == f"hooks.example:{listener.port}"
    )
    assert headers["User-Agent"].startswith("fate-bridge/")


async def test_the_bridges_client_is_the_one_respx_mocks() -> None:
    dns = StubDns({})
    async with webhook_client(WebhookReach(resolve=dns)) as client:
        with respx.mock() as mock:
            route = mock.post("https://hooks.example/x").mock(return_value=httpx.Response(204))
            assert (await client.post("https://hooks.example/x")).status_code == 204
            assert route.called
    assert dns.asked == []


def test_the_public_address_check_by_range() -> None:
    for text in ("93.184.216.34", "1.1.1.1", "2606:4700:4700::1111", "::ffff:8.8.8.8"):
        assert is_public(ipaddress.ip_address(text)), text
    for url in REFUSED_LITERALS:
        host = httpx.URL(url).host
        assert not is_public(ipaddress.ip_address(host)), host


def test_a_gm_never_reads_how_a_connection_failed() -> None:
    assert shown_error("HTTP 404") == "HTTP 404"
    assert shown_error("") == ""
    assert shown_error("no answer") == "no answer"
    assert shown_error("the webhook was removed") == "the webhook was removed"
    # Records from before the rule:
    assert shown_error("ConnectError: All connection attempts failed") == "no answer"
    assert shown_error("ReadTimeout: no detail") == "no answer"
    assert shown_error("gave up after 9 attempts: ConnectError: x") == (
        "gave up after 9 attempts: no answer"
    )
    assert shown_error("gave up after 9 attempts: HTTP 503") == (
        "gave up after 9 attempts: HTTP 503"
    )


def test_log_lines_keep_a_urls_scheme_and_host_only() -> None:
    assert redact_urls(
        'HTTP Request: POST https://discord.com/api/webhooks/1/t0k "HTTP/1.1 204 No Content"'
    ) == ('HTTP Request: POST https://discord.com/\u2026 "HTTP/1.1 204 No Content"')
    assert (
        redact_urls("to https://u:pw@h.example:8443/p?q=1#f.") == "to https://h.example:8443/\u2026"
    )
    assert redact_urls("Listening on http://127.0.0.1:8765 (protocol 5).") == (
        "Listening on http://127.0.0.1:8765 (protocol 5)."
    )
    try:
        raise ValueError("bad https://h.example/secret-path")
    except ValueError:
        record = logging.LogRecord(
            "x", logging.ERROR, __file__, 1, "sent %s", ("http://a.example/s?t=1",), None
        )
        record.exc_info = sys.exc_info()
    RedactUrls().filter(record)
    assert record.getMessage() == "sent http://a.example/\u2026"
    assert record.exc_text is not None and "secret-path" not in record.exc_text


async def card(service: BridgeService) -> None:
    """Brousseau resolves an overcome, as the GM."""
    send = ServiceSeat(service, Session("s", WORLD, "gm", "gm", True)).ok
    await send("actor.sync", actor=BROUSSEAU)
    await send("dev.queue_dice", rolls=[[1, 1, 0, 0]])
    started = await send("action.start", **overcome_start(2))
    await send("action.pass", action_id=started["action_id"], side="actor")
