"""Where a webhook may go: public internet addresses only, unless the bridge's host
allows more (``serve --webhook-allow``).

A bridge shared by many GMs treats each GM as a stranger (DESIGN "Reach and trust"): a
webhook URL must not reach the host's own network. A target is checked when it is
registered (:meth:`WebhookReach.check_url`) and again at every connection, on the
address actually connected to (:class:`GuardedBackend`): the host is resolved, every
address checked, and the connection made to a checked address, so a DNS answer that
changes between check and connect changes nothing. TLS still verifies the certificate
against the URL's host name, and the request still names it in ``Host``.
"""

from __future__ import annotations

import asyncio
import functools
import ipaddress
import re
import socket
import ssl
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpcore
import httpx

from bridge import __version__

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
Resolver = Callable[[str, int], Awaitable[list[str]]]

ALLOW_ENV = "FATE_BRIDGE_WEBHOOK_ALLOW"
RESOLVE_SECONDS = 5.0

# Not the public internet: this host, its networks, shared and reserved space. Python's
# ``is_global`` is checked too; these are listed so the answer does not depend on it.
_NOT_PUBLIC: tuple[IPNetwork, ...] = tuple(
    ipaddress.ip_network(n)
    for n in (
        "0.0.0.0/8",  # "this network", 0.0.0.0 among them
        "10.0.0.0/8",
        "100.64.0.0/10",  # carrier-grade NAT (100.100.100.200 is a cloud's metadata)
        "127.0.0.0/8",
        "169.254.0.0/16",  # link-local (169.254.169.254 is the clouds' metadata)
        "172.16.0.0/12",
        "192.0.0.0/24",
        "192.0.2.0/24",
        "192.88.99.0/24",
        "192.168.0.0/16",
        "198.18.0.0/15",
        "198.51.100.0/24",
        "203.0.113.0/24",
        "224.0.0.0/4",  # multicast
        "240.0.0.0/4",  # reserved, 255.255.255.255 among them
        "::/8",  # unspecified, loopback, IPv4-compatible (IPv4-mapped is judged as IPv4)
        "64:ff9b::/96",  # NAT64: an IPv4 address behind a translator
        "64:ff9b:1::/48",
        "100::/64",
        "2001::/23",  # Teredo and other protocol assignments
        "2001:db8::/32",
        "2002::/16",  # 6to4: an IPv4 address inside
        "3fff::/20",
        "5f00::/16",
        "fc00::/7",  # unique-local
        "fe80::/10",  # link-local
        "fec0::/10",
        "ff00::/8",  # multicast
    )
)
# Names that are never the public internet, refused without asking DNS.
_LOCAL_NAMES = ("localhost",)
_LOCAL_SUFFIXES = (".localhost", ".local", ".internal", ".home.arpa")
_HOST_NAME = re.compile(r"[a-z0-9_]([a-z0-9_-]{0,62})(\.[a-z0-9_-]{1,63})*")


class TargetRefused(httpx.ConnectError):
    """The bridge would not connect there: not a public address, or not one at all.

    Raised by :class:`GuardedBackend` inside the HTTP client, so it leaves ``post`` as
    itself (an ``httpx.ConnectError``); ``reason`` is for the operator's log only."""

    def __init__(self, host: str, reason: str) -> None:
        super().__init__(f"{host}: {reason}")
        self.host = host
        self.reason = reason


def is_public(address: IPAddress) -> bool:
    """A public internet address: global, not multicast, in none of the ranges above.
    An IPv4-mapped IPv6 address (``::ffff:127.0.0.1``) is judged as its IPv4 address."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return is_public(address.ipv4_mapped)
    if address.version == 6:
        address = ipaddress.IPv6Address(int(address))  # without a %zone
    return (
        address.is_global
        and not address.is_multicast
        and not any(address in network for network in _NOT_PUBLIC)
    )


def _host_name(host: str) -> str:
    """A host as compared and resolved: lower case, no trailing dot, no IPv6 brackets."""
    return host.strip().strip("[]").rstrip(".").lower()


def _is_local_name(host: str) -> bool:
    if host in _LOCAL_NAMES or host.endswith(_LOCAL_SUFFIXES):
        return True
    try:
        ipaddress.ip_address(host)
    except ValueError:
        # One label ("router", "metadata"): the resolver's search list makes it a local name.
        return "." not in host
    return False


async def system_resolve(host: str, port: int) -> list[str]:
    """The addresses the system's resolver gives for ``host`` (a literal gives itself)."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def _parse_address(text: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


@dataclass(frozen=True)
class WebhookReach:
    """The webhook targets a bridge allows: public addresses, and what its host named.

    ``allow_hosts`` are names whose addresses are not checked (a self-hosted bridge's
    ``n8n.lan``); ``allow_networks`` are ranges that count as allowed (``192.168.1.0/24``).
    Both are empty by default."""

    allow_hosts: frozenset[str] = frozenset()
    allow_networks: tuple[IPNetwork, ...] = ()
    resolve: Resolver = field(default=system_resolve, compare=False)

    @classmethod
    def from_entries(
        cls, entries: Iterable[str], resolve: Resolver = system_resolve
    ) -> WebhookReach:
        """From ``--webhook-allow`` values: each a CIDR range or an address, or a host
        name. Raises ValueError naming an entry that is neither."""
        hosts: set[str] = set()
        networks: list[IPNetwork] = []
        for entry in entries:
            text = _host_name(entry)
            try:
                networks.append(ipaddress.ip_network(text, strict=False))
                continue
            except ValueError:
                pass
            try:
                name = httpx.URL(f"http://{text}/").raw_host.decode("ascii")
            except (httpx.InvalidURL, UnicodeError):
                name = ""
            if not _HOST_NAME.fullmatch(name) or any(c in text for c in "/:@?#"):
                raise ValueError(f"{entry!r} is neither a host name nor an address range")
            hosts.add(name)
        return cls(frozenset(hosts), tuple(networks), resolve)

    @staticmethod
    def entries_from_env(environ: Mapping[str, str]) -> list[str]:
        """``FATE_BRIDGE_WEBHOOK_ALLOW``: entries separated by commas or spaces."""
        return environ.get(ALLOW_ENV, "").replace(",", " ").split()

    def allows_address(self, address: IPAddress) -> bool:
        mapped = address.ipv4_mapped if isinstance(address, ipaddress.IPv6Address) else None
        candidates = [address] if mapped is None else [address, mapped]
        if any(a in network for a in candidates for network in self.allow_networks):
            return True
        return is_public(address)

    async def addresses(self, host: str, port: int) -> list[str]:
        """The addresses a connection to ``host`` may use, every one checked; raises
        :class:`TargetRefused` when the host is not allowed, resolves to any address
        that is not (a name that answers with one public and one private address is
        refused whole), or does not resolve."""
        name = _host_name(host)
        allowed_name = name in self.allow_hosts
        if not allowed_name and _is_local_name(name):
            raise TargetRefused(name, "a local name")
        if _parse_address(name) is not None:
            found = [name]  # an address is its own answer; no resolver is asked
        else:
            try:
                found = await asyncio.wait_for(self.resolve(name, port), RESOLVE_SECONDS)
            except (OSError, TimeoutError, UnicodeError) as exc:
                raise TargetRefused(name, f"does not resolve ({type(exc).__name__})") from exc
        if not found:
            raise TargetRefused(name, "does not resolve")
        if allowed_name:
            return found
        for text in found:
            address = _parse_address(text)
            if address is None or not self.allows_address(address):
                raise TargetRefused(name, f"resolves to {text}, which is not a public address")
        return found

    async def check_url(self, url: httpx.URL) -> None:
        """Registration's check of a webhook URL: an allowed name passes as it is, any
        other host as :meth:`addresses` judges it. Raises :class:`TargetRefused`."""
        host = _host_name(url.raw_host.decode("ascii"))
        if host not in self.allow_hosts:
            await self.addresses(host, url.port or _DEFAULT_PORTS.get(url.scheme, 443))


_DEFAULT_PORTS = {"http": 80, "https": 443}


class GuardedBackend(httpcore.AsyncNetworkBackend):
    """httpcore's network backend, connecting only to addresses ``reach`` allows: it
    resolves the host itself, checks every address, and connects to a checked one (in
    turn, until one answers). httpcore then starts TLS with the URL's host name."""

    def __init__(self, reach: WebhookReach, inner: httpcore.AsyncNetworkBackend | None = None):
        self.reach = reach
        self.inner = inner if inner is not None else httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        addresses = await self.reach.addresses(host, port)
        failure: Exception | None = None
        for address in addresses:
            try:
                return await self.inner.connect_tcp(
                    address,
                    port,
                    timeout=timeout,
                    local_address=local_address,
                    socket_options=socket_options,
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
        assert failure is not None  # addresses is never empty
        raise failure

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise TargetRefused(path, "a unix socket")

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)


@functools.cache
def trusted_tls() -> ssl.SSLContext:
    """The TLS settings every webhook connection verifies its host with (the trusted
    certificates httpx uses, none from the environment), loaded once per process: loading
    them takes tens of milliseconds, and one context serves any number of connections."""
    return httpx.create_ssl_context(trust_env=False)


class GuardedTransport(httpx.AsyncHTTPTransport):
    """httpx's own transport over a connection pool whose every connection goes through
    :class:`GuardedBackend`. No proxy: a proxy would connect for us, unchecked."""

    def __init__(
        self, reach: WebhookReach, inner: httpcore.AsyncNetworkBackend | None = None
    ) -> None:
        tls = trusted_tls()
        super().__init__(verify=tls, trust_env=False)
        limits = httpx.Limits()
        # httpx builds its pool with httpcore's default backend and takes no other: the
        # same pool, on ours (the request and exception mapping stay httpx's).
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=tls,
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=GuardedBackend(reach, inner),
        )


def webhook_client(
    reach: WebhookReach, inner: httpcore.AsyncNetworkBackend | None = None
) -> httpx.AsyncClient:
    """The one HTTP client every webhook goes out through: guarded, no redirects, no
    proxies from the environment."""
    return httpx.AsyncClient(
        transport=GuardedTransport(reach, inner),
        follow_redirects=False,
        trust_env=False,
        headers={"User-Agent": f"fate-bridge/{__version__}"},
    )


def refused_message(url: httpx.URL) -> str:
    """What a GM reads when a target is refused at registration: the same words whether
    the host is private or does not resolve, so they tell nothing of the host's network."""
    return (
        f"The bridge sends webhooks only to public internet addresses, and {url.host} is not "
        "one (or does not resolve). A bridge on your own machine can allow local targets "
        "with `serve --webhook-allow HOST_OR_RANGE`."
    )
