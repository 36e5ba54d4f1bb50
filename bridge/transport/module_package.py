"""The Foundry module as this bridge serves it: its manifest and its zip under ``/module/``,
and the documents the manifest links to.

This bridge's manifest (``manifest``), served at ``/module/module.json``, is the committed
``foundry-module/module.json`` (the release's, see :mod:`bridge.cli.release`) with its links
pointing at the bridge that serves it, so only a Foundry on a machine that reaches that bridge
(for the default loopback bridge, the bridge's own machine) can install from it.

The zip holds the module's files as they are. The module's files and the documents the
manifest links to (README, LICENSE, CHANGELOG) are found in the installed package
(``bridge/_module/`` and ``bridge/_docs/``, which the wheel's build copies there, see
setup.py, and the one-file executable unpacks there, see packaging/fate-bridge.spec) or else
in the source tree (``foundry-module/`` and the project's root), so an installed or frozen
bridge serves its module without Node and without the source tree.

When npm has installed ``socket.io-client`` next to the source tree, its ESM build goes into
the zip as ``scripts/vendor/socket.io.esm.min.js``: the fallback for a page without a global
``io``. Foundry's page always has one, which the module uses first, so without npm the zip
is built without it; the file is npm's, never committed.
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

from aiohttp import web

from bridge.service.module_files import DOCS_DIR, MODULE_DIR, PROJECT_ROOT

SOCKET_IO_ESM = PROJECT_ROOT / "node_modules" / "socket.io-client" / "dist" / "socket.io.esm.min.js"
VENDOR_PATH = "scripts/vendor/socket.io.esm.min.js"
ZIP_NAME = "fate-bridge.zip"
MODULE_ID = "fate-bridge"
# The documents the manifest links to, served by the bridge under /module/, with their types.
DOCUMENTS = {
    "README.md": "text/markdown",
    "LICENSE": "text/plain",
    "CHANGELOG.md": "text/markdown",
}
# The README's section on reporting problems (GitHub-style anchor of its heading).
BUGS_ANCHOR = "reporting-problems"


def read_json(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text("utf-8"))
    return data


def with_links(
    data: dict[str, Any], *, home: str, manifest: str, download: str, documents: str, bugs: str
) -> dict[str, Any]:
    """``data``, a module.json, with every link it carries set: ``url`` at ``home``,
    ``manifest``, ``download`` and ``bugs`` as given, and ``readme``, ``license`` and
    ``changelog`` at the documents under ``documents``."""
    data.update(
        url=home,
        manifest=manifest,
        download=download,
        readme=f"{documents}/README.md",
        bugs=bugs,
        license=f"{documents}/LICENSE",
        changelog=f"{documents}/CHANGELOG.md",
    )
    return data


def _local_description(data: dict[str, Any], base: str) -> str:
    """The description of a manifest served by a bridge: says whose machine it is for."""
    public = data.get("manifest", "")
    note = (
        f" This copy is served by the Fate Bridge at {base}, for a Foundry that reaches that "
        "bridge (for the default http://127.0.0.1 bridge, a Foundry on the bridge's own machine)."
    )
    if str(public).startswith("https://"):
        note += f" A hosted Foundry installs from the release manifest, {public}."
    return str(data.get("description", "")) + note


def manifest(base_url: str, module_dir: Path = MODULE_DIR) -> dict[str, Any]:
    """module.json with its links (``manifest``, ``download``, ``url``, ``bugs``, ``readme``,
    ``license``, ``changelog``) pointing at this bridge, which serves each, and a description
    saying that this copy is for a Foundry that reaches this bridge."""
    data = read_json(module_dir / "module.json")
    base = base_url.rstrip("/")
    data["description"] = _local_description(data, base)
    return with_links(
        data,
        home=base,
        manifest=f"{base}/module/module.json",
        download=f"{base}/module/{ZIP_NAME}",
        documents=f"{base}/module",
        bugs=f"{base}/module/README.md#{BUGS_ANCHOR}",
    )


def build_zip(
    base_url: str, module_dir: Path = MODULE_DIR, socket_io_esm: Path | None = SOCKET_IO_ESM
) -> bytes:
    """The zip this bridge serves: its module.json is ``manifest(base_url)``."""
    return zip_module(manifest(base_url, module_dir), module_dir, socket_io_esm)


def zip_module(
    manifest_data: dict[str, Any],
    module_dir: Path = MODULE_DIR,
    socket_io_esm: Path | None = SOCKET_IO_ESM,
) -> bytes:
    """The installable zip: files under a ``fate-bridge/`` folder, as Foundry expects, with
    ``manifest_data`` as its module.json, and the socket.io-client fallback when
    ``socket_io_esm`` exists.

    Raises ``FileNotFoundError`` when the module's files are not there."""
    if not (module_dir / "module.json").is_file():
        raise FileNotFoundError(f"the Foundry module's files are missing from {module_dir}")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(module_dir.rglob("*")):
            rel = path.relative_to(module_dir).as_posix()
            if path.is_dir() or rel == "module.json" or rel.startswith("scripts/vendor/"):
                continue
            archive.write(path, f"{MODULE_ID}/{rel}")
        archive.writestr(f"{MODULE_ID}/module.json", json.dumps(manifest_data, indent=2))
        if socket_io_esm is not None and socket_io_esm.is_file():
            archive.write(socket_io_esm, f"{MODULE_ID}/{VENDOR_PATH}")
    return buffer.getvalue()


def document_routes(docs_dir: Path = DOCS_DIR) -> list[web.RouteDef]:
    """GET /module/README.md, /module/LICENSE and /module/CHANGELOG.md: the documents the
    manifest links to, as this bridge's own copies."""

    def serve(name: str, content_type: str) -> web.RouteDef:
        async def document(_request: web.Request) -> web.Response:
            try:
                text = (docs_dir / name).read_text("utf-8")
            except FileNotFoundError as exc:
                raise web.HTTPNotFound(text=f"{name} is not installed with this bridge") from exc
            return web.Response(text=text, content_type=content_type, charset="utf-8")

        return web.get(f"/module/{name}", document)

    return [serve(name, content_type) for name, content_type in DOCUMENTS.items()]
