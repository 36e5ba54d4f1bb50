"""The command line's parser, the checks its values go through, and the options several
commands share."""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar
from urllib.parse import urlsplit

from bridge.cli.startup import PROGRAM, StartupError
from bridge.service.webhooks.reach import ALLOW_ENV, WebhookReach

WORLD_ID = re.compile(r"^[A-Za-z0-9_.:\-]{1,64}$")
N = TypeVar("N", int, float)


class OneLineParser(argparse.ArgumentParser):
    """A command-line mistake is one line on stderr, naming what to fix, and exit status 2
    (argparse's own usage block before it buries the line that matters)."""

    def error(self, message: str) -> NoReturn:
        where = self.prog.removeprefix(PROGRAM).strip()
        line = f"{where}: {message}" if where else message
        self.exit(2, f"error: {' '.join(line.split())} (see {self.prog} --help)\n")


# How a command group adds its commands: the ``add_parser`` of ``add_subparsers()``.
AddParser = Callable[..., argparse.ArgumentParser]


def world_id(value: str) -> str:
    if not WORLD_ID.match(value):
        raise argparse.ArgumentTypeError("use 1-64 letters, digits, '_', '.', ':' or '-'")
    return value


def _number(value: str, kind: type[N], expected: str) -> N:
    try:
        return kind(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{expected}, not {value!r}") from None


def port(value: str) -> int:
    expected = "a port is a number from 0 to 65535"
    number = _number(value, int, expected)
    if not 0 <= number <= 65535:
        raise argparse.ArgumentTypeError(f"{expected}, not {number}")
    return number


def count(value: str) -> int:
    number = _number(value, int, "a whole number of 0 or more")
    if number < 0:
        raise argparse.ArgumentTypeError(f"a whole number of 0 or more, not {number}")
    return number


def positive(value: str) -> float:
    number = _number(value, float, "a number")
    if not number > 0 or number == float("inf"):
        raise argparse.ArgumentTypeError(f"a number above 0, not {value}")
    return number


def public_url(value: str) -> str:
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise argparse.ArgumentTypeError(
            f"an http:// or https:// URL Foundry can open (https://bridge.example.org), "
            f"not {value!r}"
        )
    return value.rstrip("/")


def add_env_option(
    parser: argparse.ArgumentParser, flag: str, env: str, default: object, text: str, **more: Any
) -> None:
    """``flag``, whose default is the environment variable ``env``, else ``default``; ``{env}``
    in its help ``text`` names the variable. The default is given as a string, so it goes
    through ``type`` too: a wrong value in the environment is one line, as on the command
    line."""
    fallback = None if default is None else str(default)
    parser.add_argument(
        flag, default=os.environ.get(env, fallback), help=text.format(env=f"env {env}"), **more
    )


def add_env_switch(parser: argparse.ArgumentParser, flag: str, env: str, text: str) -> None:
    """``flag``, a switch that is on also when the environment sets ``env`` to 1."""
    parser.add_argument(
        flag,
        action="store_true",
        default=os.environ.get(env, "") == "1",
        help=text.format(env=f"env {env}=1"),
    )


def add_world(parser: argparse.ArgumentParser, text: str | None = None) -> None:
    """The world a command acts on: its id, checked before anything opens."""
    parser.add_argument("id", type=world_id, help=text)


def add_json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON")


def _allow_entry(value: str) -> str:
    try:
        WebhookReach.from_entries([value])
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc
    return value


def add_webhook_allow(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--webhook-allow",
        action="append",
        type=_allow_entry,
        default=[],
        metavar="HOST_OR_RANGE",
        help="also send webhooks to this host name or address range (CIDR), e.g. a "
        "self-hosted bridge's 192.168.1.0/24 or n8n.lan (repeatable; env "
        f"{ALLOW_ENV}, comma-separated; default only public internet addresses)",
    )


def webhook_reach(args: argparse.Namespace) -> WebhookReach:
    """Where webhooks may go: public addresses, and what the environment and (for a command
    that has it) --webhook-allow name."""
    entries = WebhookReach.entries_from_env(os.environ)
    try:
        return WebhookReach.from_entries([*entries, *getattr(args, "webhook_allow", [])])
    except ValueError as exc:
        raise StartupError(f"{ALLOW_ENV}: {exc}") from exc
