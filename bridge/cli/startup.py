"""What the command line checks before it serves or opens a store, and how it says what is
wrong: each problem a GM can fix is a :class:`StartupError`, printed as one line (exit 2).

Also where the data folder is by default, the lock that keeps a second bridge off a SQLite
file, the commands the bridge prints (as ``fate-bridge …``), and the addresses a bridge
listening on every interface can be reached at.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import ipaddress
import os
import shlex
import shutil
import socket
import sqlite3
import sys
import sysconfig
import tempfile
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import platformdirs
import redis.exceptions
from redis.connection import parse_url

from bridge.store.base import Store

PROGRAM = "fate-bridge"
# Opening a store waits this long for Redis before saying it cannot be reached.
OPEN_TIMEOUT_SECONDS = 10.0
# Documentation addresses (RFC 5737, RFC 3849): a UDP socket "connected" to one asks the
# kernel which local address would route there, and sends nothing.
_ROUTE_PROBES = ((socket.AF_INET, "192.0.2.1"), (socket.AF_INET6, "2001:db8::1"))


class StartupError(Exception):
    """A problem the person running the bridge can fix: one line saying what is wrong and
    what to do."""


def default_data_dir() -> Path:
    """The user's data directory for the bridge (e.g. ~/.local/share/fate-bridge on Linux)."""
    return Path(platformdirs.user_data_dir(PROGRAM, appauthor=False))


def program() -> str:
    """How to run this bridge's command: ``fate-bridge``, or the full path of the script
    beside this Python when ``fate-bridge`` is not on PATH (a venv not activated, as
    ``make run`` leaves it), so a printed command works as typed from any folder."""
    if shutil.which(PROGRAM) is not None:
        return PROGRAM
    scripts = Path(sysconfig.get_path("scripts"))
    for name in (PROGRAM, f"{PROGRAM}.exe"):
        if (scripts / name).is_file():
            return shlex.quote(str(scripts / name))
    return PROGRAM


def redact(url: str) -> str:
    """A Redis URL fit to print: its password replaced by ``PASSWORD``."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    user = f"{parts.username}:" if parts.username else ":"
    netloc = f"{user}PASSWORD@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


def command(store_flags: Sequence[str], *words: str) -> str:
    """A command line for the user to type: the program, the flags naming the store (none
    for the default data folder), then ``words``."""
    return " ".join([program(), *(shlex.quote(f) for f in store_flags), *words])


def store_flags(data_dir: Path, *, default: bool, redis_url: str | None) -> list[str]:
    """The global flags that name this store to another command, from any folder."""
    if redis_url:
        return ["--redis", redact(redis_url)]
    return [] if default else ["--data-dir", str(data_dir.absolute())]


# -- the data folder ------------------------------------------------------------------------


def prepare_data_dir(path: Path, *, create: bool, parents: bool) -> None:
    """Check the data folder before the store opens it.

    ``create``: make the folder when it is missing (``parents``: its missing parents too,
    for the default folder); else a missing folder is an error and nothing is created.
    Either way the folder must be one this process can write in."""
    shown = path.absolute()
    if path.exists() and not path.is_dir():
        raise StartupError(
            f"the data folder {shown} is a file, not a folder: pass --data-dir a folder"
        )
    if not path.exists():
        if not create:
            raise StartupError(f"the data folder {shown} does not exist")
        parent = shown.parent
        if not parents and parent.exists() and not parent.is_dir():
            raise StartupError(
                f"cannot create the data folder {shown}: {parent} is a file, not a folder; "
                "pass --data-dir a folder"
            )
        if not parents and not parent.exists():
            raise StartupError(
                f"cannot create the data folder {shown}: {parent} does not exist; create it "
                "first, or pass --data-dir a folder that exists"
            )
        try:
            path.mkdir(parents=parents, exist_ok=True)
        except OSError as exc:
            raise StartupError(
                f"cannot create the data folder {shown}: {_reason(exc)}; "
                "pass --data-dir a folder you can write in"
            ) from exc
    _check_writable(path)


def _check_writable(path: Path) -> None:
    """Write and remove a file in the folder: the one test that also holds for root, for a
    read-only file system and for access rules that ``os.access`` does not see."""
    try:
        with tempfile.TemporaryFile(dir=path, prefix=".fate-bridge-probe-"):
            pass
    except OSError as exc:
        raise StartupError(
            f"the data folder {path.absolute()} is not writable ({_reason(exc)}): give this "
            "user write access to it, or pass --data-dir another folder"
        ) from exc


def require_database(db_path: Path, flags: Sequence[str]) -> None:
    """A world command other than ``add`` needs the database there already: it never
    creates one (an empty one in the wrong folder would hide the real one)."""
    folder = db_path.parent
    if folder.exists() and not folder.is_dir():
        raise StartupError(
            f"the data folder {folder.absolute()} is a file, not a folder: pass the "
            "--data-dir your bridge uses"
        )
    if not db_path.is_file():
        raise StartupError(
            f"no bridge database in {db_path.parent.absolute()}: pass the --data-dir your "
            f"bridge uses, or create it with `{command(flags, 'world', 'add', 'ID')}` "
            f"or `{command(flags, 'serve')}`"
        )


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


# -- one bridge per SQLite file -------------------------------------------------------------


class DataLock:
    """An exclusive lock on ``<database>.lock``, held for the serving process's life: a
    second ``serve`` on the same SQLite file is refused with the first one's process id.
    The operating system drops the lock when the process ends, however it ends."""

    def __init__(self, db_path: Path) -> None:
        self.path = db_path.with_name(db_path.name + ".lock")
        self.db_path = db_path
        self._fd: int | None = None

    def acquire(self) -> None:
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise StartupError(
                f"cannot create the lock file {self.path.absolute()}: {_reason(exc)}; "
                "give this user write access to the data folder"
            ) from exc
        if not _try_lock(fd):
            holder = os.read(fd, 64).decode("ascii", "replace").strip()
            os.close(fd)
            who = f"another bridge (process {holder})" if holder.isdigit() else "another bridge"
            raise StartupError(
                f"{who} is already serving {self.db_path.absolute()}: stop it first, or "
                "pass this one another --data-dir (several bridges share a world only "
                "through --redis)"
            )
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode("ascii"))
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)
            os.close(fd)


if sys.platform == "win32":
    import msvcrt

    def _try_lock(fd: int) -> bool:
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

else:
    import fcntl

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True


# -- opening the store ----------------------------------------------------------------------


def check_redis_url(url: str) -> None:
    """Refuse what cannot be a Redis URL before anything connects."""
    hint = "write it as redis://HOST:PORT/DB, e.g. redis://127.0.0.1:6379/0"
    if urlsplit(url).scheme not in ("redis", "rediss", "unix"):
        raise StartupError(f"--redis {redact(url)!r} is not a Redis URL: {hint}")
    try:
        parse_url(url)  # type: ignore[no-untyped-call]
    except ValueError as exc:
        raise StartupError(
            f"--redis {redact(url)!r} is not a valid Redis URL ({exc}): {hint}"
        ) from exc


async def open_store(store: Store, *, redis_url: str | None, db_path: Path) -> None:
    """Open ``store``, turning the ways it fails to open into one line each."""
    try:
        await asyncio.wait_for(store.open(), OPEN_TIMEOUT_SECONDS)
    except (redis.exceptions.RedisError, OSError, TimeoutError) as exc:
        with contextlib.suppress(Exception):
            await store.close()
        if redis_url is None:
            raise StartupError(f"cannot open {db_path.absolute()}: {exc}") from exc
        if isinstance(exc, TimeoutError):
            reason = f"no answer in {OPEN_TIMEOUT_SECONDS:g} s"
        else:  # redis-py's first sentence: "Error 111 connecting to HOST:PORT"
            reason = (str(exc) or type(exc).__name__).split(". ")[0].rstrip(".")
        raise StartupError(
            f"cannot reach Redis at {redact(redis_url)} ({reason}): start redis-server "
            "there, or fix --redis / FATE_BRIDGE_REDIS"
        ) from exc
    except sqlite3.Error as exc:
        with contextlib.suppress(Exception):
            await store.close()
        raise StartupError(
            f"cannot open the database {db_path.absolute()} ({exc}): check that it is a "
            "bridge database and that this user may write in its folder"
        ) from exc


# -- listening ------------------------------------------------------------------------------


def listen_error(exc: OSError, host: str, port: int) -> StartupError:
    """What a failed bind means for the GM."""
    where = f"{host}:{port}" if ":" not in host else f"[{host}]:{port}"
    if exc.errno == errno.EADDRINUSE:
        return StartupError(
            f"port {port} is already in use on {host} (another bridge, or another program, "
            f"listens there): stop it, or start this one with --port {port + 1}"
        )
    if exc.errno == errno.EACCES:
        return StartupError(
            f"no permission to listen on {where}: ports below 1024 need privileges; "
            "use --port 8765 (and a reverse proxy for port 80 or 443)"
        )
    if isinstance(exc, socket.gaierror):
        return StartupError(
            f"cannot listen on --host {host}: the name does not resolve ({_reason(exc)}); "
            "use 127.0.0.1 for this machine only, or 0.0.0.0 for every interface"
        )
    if exc.errno == errno.EADDRNOTAVAIL:
        return StartupError(
            f"cannot listen on --host {host}: it is not an address of this machine; use "
            "127.0.0.1 for this machine only, or 0.0.0.0 for every interface"
        )
    return StartupError(f"cannot listen on {where}: {_reason(exc)}")


def is_wildcard(host: str) -> bool:
    return host in ("0.0.0.0", "::", "")


def reachable_addresses(host: str) -> list[str]:
    """The addresses a bridge listening on the wildcard ``host`` can be reached at: the
    machine's own addresses of the families it listens on, its outward ones first and
    loopback last (link-local IPv6 left out: it needs a zone in a URL)."""
    families = {
        "0.0.0.0": {socket.AF_INET},
        "::": {socket.AF_INET6},
    }.get(host, {socket.AF_INET, socket.AF_INET6})
    found: list[str] = []
    for family, probe in _ROUTE_PROBES:
        if family not in families:
            continue
        # connect() on UDP picks the route and the source address; no packet is sent.
        with contextlib.suppress(OSError), socket.socket(family, socket.SOCK_DGRAM) as udp:
            udp.connect((probe, 9))
            found.append(str(udp.getsockname()[0]))
    with contextlib.suppress(OSError):
        for family, _type, _proto, _name, sockaddr in socket.getaddrinfo(
            socket.gethostname(), None, proto=socket.IPPROTO_TCP
        ):
            if family in families:
                found.append(str(sockaddr[0]))
    if socket.AF_INET in families:
        found.append("127.0.0.1")
    if socket.AF_INET6 in families and socket.has_ipv6:
        found.append("::1")
    usable: list[ipaddress.IPv4Address | ipaddress.IPv6Address] = []
    for text in found:
        try:
            address = ipaddress.ip_address(text.split("%", 1)[0])
        except ValueError:
            continue
        if address.is_unspecified or address.is_link_local or address in usable:
            continue
        if address.is_loopback and text not in ("127.0.0.1", "::1"):
            continue  # Debian's 127.0.1.1 for the host name: 127.0.0.1 says it
        usable.append(address)
    usable.sort(key=lambda a: a.is_loopback)
    return [str(a) for a in usable]


def url_for(address: str, port: int) -> str:
    return f"http://[{address}]:{port}" if ":" in address else f"http://{address}:{port}"
