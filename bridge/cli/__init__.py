"""``fate-bridge`` (or ``python -m bridge``): serve the bridge and manage its worlds.

A module per command group, each adding its commands to the parser with the function that
runs them: :mod:`~bridge.cli.serve`, :mod:`~bridge.cli.world` (with
:mod:`~bridge.cli.backup` and :mod:`~bridge.cli.webhooks`) and :mod:`~bridge.cli.build`
(``schemas``, ``module``). What they share: the parser and its checks
(:mod:`~bridge.cli.options`), the store a command names (:mod:`~bridge.cli.stores`), and
the checks and messages before anything serves or opens (:mod:`~bridge.cli.startup`).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path

from bridge import __version__
from bridge.cli import build, serve, world
from bridge.cli.logs import log_handler, log_level, redact_urls_in_logs
from bridge.cli.options import OneLineParser
from bridge.cli.startup import PROGRAM, StartupError, default_data_dir
from bridge.cli.stores import resolve_data_dir

__all__ = ["build_parser", "main", "parse_args"]


def build_parser() -> argparse.ArgumentParser:
    """The whole command line; each command's namespace carries ``run``, the function that
    runs it and returns its exit status."""
    parser = OneLineParser(
        prog=PROGRAM,
        description="Fate Bridge: the authoritative Fate referee behind a Foundry VTT module.",
    )
    parser.add_argument("--version", action="version", version=f"{PROGRAM} {__version__}")
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help="folder for the SQLite database (env FATE_BRIDGE_DATA; default the user's data "
        f"folder, here {default_data_dir()})",
    )
    parser.add_argument(
        "--debug",
        action="store_true",
        help="show the traceback behind a start-up error (include it when reporting one)",
    )
    parser.add_argument(
        "--redis",
        default=os.environ.get("FATE_BRIDGE_REDIS"),
        metavar="URL",
        help="keep state in Redis (e.g. redis://127.0.0.1:6379/0) so several bridge "
        "processes can serve one table (env FATE_BRIDGE_REDIS; default: SQLite in --data-dir)",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    serve.add_command(commands.add_parser)
    world.add_command(commands.add_parser)
    build.add_commands(commands.add_parser)
    return parser


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """``argv`` parsed as the command does, its data folder resolved (see
    :func:`~bridge.cli.stores.resolve_data_dir`); a mistake exits with status 2."""
    args = build_parser().parse_args(argv)
    resolve_data_dir(args)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=log_level(), handlers=[log_handler(sys.stderr)])
    redact_urls_in_logs()
    try:
        status: int = args.run(args)
    except StartupError as exc:
        # One line a GM can act on; --debug adds how it came about.
        if args.debug:
            traceback.print_exc()
        print(f"error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    return status
