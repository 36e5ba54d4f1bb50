"""Package the Foundry module: the manifest with this bridge's URLs, and the zip.

The zip holds the module's files as they are. The module's files and the documents the
manifest links to (README, LICENSE, CHANGELOG) are found in the installed package
(``bridge/_module/`` and ``bridge/_docs/``, which the wheel's build copies there, see
setup.py) or else in the source tree (``foundry-module/`` and the project's root), so an
installed bridge serves its module without Node and without the source tree.

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

PACKAGE_DIR = Path(__file__).resolve().parent
PROJECT_ROOT = PACKAGE_DIR.parent


def _installed_or_source(installed: Path, source: Path, marker: str) -> Path:
    """The package's copy when the wheel put one there, else the source tree's folder."""
    return installed if (installed / marker).is_file() else source


MODULE_DIR = _installed_or_source(
    PACKAGE_DIR / "_module", PROJECT_ROOT / "foundry-module", "module.json"
)
DOCS_DIR = _installed_or_source(PACKAGE_DIR / "_docs", PROJECT_ROOT, "LICENSE")
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


def manifest(base_url: str, module_dir: Path = MODULE_DIR) -> dict[str, Any]:
    """module.json with its links (``manifest``, ``download``, ``url``, ``bugs``, ``readme``,
    ``license``, ``changelog``) pointing at this bridge, which serves each."""
    data: dict[str, Any] = json.loads((module_dir / "module.json").read_text("utf-8"))
    base = base_url.rstrip("/")
    data["url"] = base
    data["manifest"] = f"{base}/module/module.json"
    data["download"] = f"{base}/module/{ZIP_NAME}"
    data["readme"] = f"{base}/module/README.md"
    data["bugs"] = f"{base}/module/README.md#{BUGS_ANCHOR}"
    data["license"] = f"{base}/module/LICENSE"
    data["changelog"] = f"{base}/module/CHANGELOG.md"
    return data


def build_zip(
    base_url: str, module_dir: Path = MODULE_DIR, socket_io_esm: Path = SOCKET_IO_ESM
) -> bytes:
    """The installable zip: files under a ``fate-bridge/`` folder, as Foundry expects, with
    the socket.io-client fallback when ``socket_io_esm`` exists.

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
        archive.writestr(
            f"{MODULE_ID}/module.json", json.dumps(manifest(base_url, module_dir), indent=2)
        )
        if socket_io_esm.is_file():
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
