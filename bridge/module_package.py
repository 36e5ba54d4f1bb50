"""Package the Foundry module: the manifest with this bridge's URLs, and the zip.

The zip holds ``foundry-module/`` as it is, plus the npm ``socket.io-client``
ESM build as ``scripts/vendor/socket.io.esm.min.js`` (the fallback for pages
without Foundry's global ``io``); the build is installed by npm, never committed.
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

PROJECT_ROOT = Path(__file__).resolve().parent.parent
MODULE_DIR = PROJECT_ROOT / "foundry-module"
SOCKET_IO_ESM = PROJECT_ROOT / "node_modules" / "socket.io-client" / "dist" / "socket.io.esm.min.js"
VENDOR_PATH = "scripts/vendor/socket.io.esm.min.js"
ZIP_NAME = "fate-bridge.zip"
MODULE_ID = "fate-bridge"


def manifest(base_url: str, module_dir: Path = MODULE_DIR) -> dict[str, Any]:
    """module.json with ``manifest`` and ``download`` pointing at this bridge."""
    data: dict[str, Any] = json.loads((module_dir / "module.json").read_text("utf-8"))
    base = base_url.rstrip("/")
    data["manifest"] = f"{base}/module/module.json"
    data["download"] = f"{base}/module/{ZIP_NAME}"
    return data


def build_zip(
    base_url: str, module_dir: Path = MODULE_DIR, socket_io_esm: Path = SOCKET_IO_ESM
) -> bytes:
    """The installable zip: files under a ``fate-bridge/`` folder, as Foundry expects.

    Raises ``FileNotFoundError`` when the socket.io-client build is missing
    (run ``npm ci``), since a module without its fallback would fail on some pages.
    """
    if not socket_io_esm.is_file():
        raise FileNotFoundError(f"{socket_io_esm.name} missing: run `npm ci` first")
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
        archive.write(socket_io_esm, f"{MODULE_ID}/{VENDOR_PATH}")
    return buffer.getvalue()
