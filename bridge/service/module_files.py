"""Where the Foundry module's files and the project's documents are read from.

The installed package's copies (``bridge/_module/`` and ``bridge/_docs/``, which the wheel's
build copies there, see setup.py, and the one-file executable unpacks there, see
packaging/fate-bridge.spec) when they exist, else the source tree's ``foundry-module/`` and the
project's root. The service reads the module's language files from here; the wire serves the
module and the command line builds its release from the same folders.
"""

from __future__ import annotations

from pathlib import Path

# The ``bridge`` package folder (this file sits in ``bridge/service/``).
PACKAGE_DIR = Path(__file__).resolve().parent.parent
PROJECT_ROOT = PACKAGE_DIR.parent


def _installed_or_source(installed: Path, source: Path, marker: str) -> Path:
    """The package's copy when the wheel (or the executable) put one there, else the source
    tree's folder."""
    return installed if (installed / marker).is_file() else source


MODULE_DIR = _installed_or_source(
    PACKAGE_DIR / "_module", PROJECT_ROOT / "foundry-module", "module.json"
)
DOCS_DIR = _installed_or_source(PACKAGE_DIR / "_docs", PROJECT_ROOT, "LICENSE")
