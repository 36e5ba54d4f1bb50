"""``schemas`` and ``module``: the files the bridge's build writes for others, the JSON
Schemas and the Foundry module's zip (this bridge's, or the public release's)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bridge.cli.options import AddParser
from bridge.cli.release import ReleaseError, build_release, write_public_manifest
from bridge.cli.schemas import write_schemas
from bridge.cli.serve import DEFAULT_HOST, DEFAULT_PORT
from bridge.service.module_files import PROJECT_ROOT
from bridge.transport.module_package import ZIP_NAME, build_zip


def add_commands(add_parser: AddParser) -> None:
    schemas = add_parser("schemas", help="write the JSON Schemas")
    schemas.add_argument("--out", default="schemas", help="output folder (default %(default)s)")
    schemas.set_defaults(run=_write_schemas)

    module = add_parser(
        "module",
        help="build the Foundry module zip: this bridge's (--url), or the public release's "
        "zip and module.json (--release)",
    )
    module.set_defaults(run=_build_module)
    module.add_argument("--out", default="dist", help="output folder (default %(default)s)")
    module.add_argument(
        "--url",
        default=f"http://{DEFAULT_HOST}:{DEFAULT_PORT}",
        help="bridge URL written into the manifest (default %(default)s)",
    )
    release = module.add_mutually_exclusive_group()
    release.add_argument(
        "--release",
        action="store_true",
        help="write the release's fate-bridge.zip and module.json, every link on the public "
        "repository that pyproject.toml's [project.urls] Repository names; refuses when it is "
        "missing, not https or not public, or when the checkout's versions disagree",
    )
    release.add_argument(
        "--write-manifest",
        action="store_true",
        help="rewrite foundry-module/module.json as the release's manifest (after changing "
        "the version or the repository)",
    )
    module.add_argument(
        "--repository",
        metavar="URL",
        help="with --release: the repository releasing (e.g. CI's own); refused unless it is "
        "the one pyproject.toml names",
    )
    module.add_argument(
        "--source",
        type=Path,
        default=None,
        metavar="DIR",
        help="with --release or --write-manifest: the checkout (default this bridge's)",
    )


def _write_schemas(args: argparse.Namespace) -> int:
    written = write_schemas(Path(args.out))
    print(f"wrote {len(written)} schema files to {args.out}")
    return 0


def _build_module(args: argparse.Namespace) -> int:
    out = Path(args.out)
    if args.release or args.write_manifest:
        source = args.source or PROJECT_ROOT
        try:
            if args.write_manifest:
                print(f"wrote {write_public_manifest(source)}")
                return 0
            written = build_release(out, args.repository, source)
        except (ReleaseError, FileNotFoundError) as exc:
            print(f"error: {' '.join(str(exc).split())}", file=sys.stderr)
            return 2
        print("\n".join(f"wrote {path}" for path in written))
        return 0
    out.mkdir(parents=True, exist_ok=True)
    try:
        (out / ZIP_NAME).write_bytes(build_zip(args.url))
    except FileNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"wrote {out / ZIP_NAME}")
    return 0
