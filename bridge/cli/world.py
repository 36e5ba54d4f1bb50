"""``world``: register, list and re-key worlds; with the history's commands
(:mod:`bridge.cli.backup`) and the webhooks' (:mod:`bridge.cli.webhooks`)."""

from __future__ import annotations

import argparse
import json
import sys

from bridge.cli import backup, webhooks
from bridge.cli.options import AddParser, add_json, add_world
from bridge.cli.startup import command
from bridge.cli.stores import flags_of, on_store, require_world
from bridge.rules.ruleset import RULESETS
from bridge.service import BridgeService
from bridge.store.base import Store, WorldExists


def add_command(add_parser: AddParser) -> None:
    world = add_parser("world", help="manage worlds").add_subparsers(
        dest="world_command", required=True, metavar="WORLD_COMMAND"
    )
    add = world.add_parser("add", help="register a world and print its GM key")
    add_world(add, "world id (what the module's settings name)")
    add.add_argument("--name", help="display name (default: the id)")
    add.add_argument("--ruleset", choices=sorted(RULESETS), default="unwritten")
    add_json(add)
    add.set_defaults(run=on_store(_add, create=True, known_world=False))
    listing = world.add_parser("list", help="list worlds")
    add_json(listing)
    listing.set_defaults(run=on_store(_list, known_world=False))
    backup.add_commands(world.add_parser)
    rotate = world.add_parser("rotate-key", help="replace a world's GM key and print the new one")
    add_world(rotate)
    add_json(rotate)
    rotate.set_defaults(run=on_store(_rotate_key))
    webhooks.add_command(world.add_parser)


async def _add(store: Store, args: argparse.Namespace) -> int:
    try:
        record, key = await BridgeService(store).add_world(
            args.id, args.name or args.id, args.ruleset
        )
    except WorldExists:
        rotate = command(flags_of(args), "world", "rotate-key", args.id)
        print(
            f"error: world {args.id!r} already exists: pick another id, or `{rotate}` "
            "prints a new GM key for it",
            file=sys.stderr,
        )
        return 1
    info = {"id": record.id, "name": record.name, "ruleset": record.ruleset, "key": key}
    if args.json:
        print(json.dumps(info))
    else:
        print(f"World {record.id!r} ({record.ruleset}) registered.\nGM key: {key}")
    return 0


async def _list(store: Store, args: argparse.Namespace) -> int:
    worlds = await store.list_worlds()
    if args.json:
        print(json.dumps([{"id": w.id, "name": w.name, "ruleset": w.ruleset} for w in worlds]))
        return 0
    for w in worlds:
        print(f"{w.id}\t{w.ruleset}\t{w.name}")
    if not worlds:
        add = command(flags_of(args), "world", "add", "ID")
        print(f"No worlds yet: `{add}` registers one.", file=sys.stderr)
    return 0


async def _rotate_key(store: Store, args: argparse.Namespace) -> int:
    new_key = await BridgeService(store).rotate_key(args.id)
    if new_key is None:
        await require_world(store, args)  # removed since the check: says so
        return 2
    print(json.dumps({"id": args.id, "key": new_key}) if args.json else f"GM key: {new_key}")
    return 0
