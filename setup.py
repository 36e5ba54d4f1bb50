"""Build step that pyproject.toml cannot say: the wheel carries the Foundry module and the
documents the bridge serves, so an installed bridge needs neither Node nor the source tree.

``foundry-module/`` is copied into the package as ``bridge/_module/`` and README.md, LICENSE
and CHANGELOG.md as ``bridge/_docs/``; in the source tree (and an editable install)
``bridge.transport.module_package`` finds them where they are, so nothing is kept twice in git.
Everything else is in pyproject.toml.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
# What ships to Foundry; the socket.io-client fallback in scripts/vendor/ is npm's, never shipped
# in the package (Foundry's page has a global `io`; a source tree adds it to the zip when present).
MODULE = ROOT / "foundry-module"
DOCUMENTS = ("README.md", "LICENSE", "CHANGELOG.md")


class BuildPyWithModule(build_py):
    def run(self) -> None:
        super().run()
        if self.editable_mode:
            return  # bridge/transport/module_package.py reads the source tree's files in place
        package = Path(self.build_lib) / "bridge"
        module = package / "_module"
        # A fresh copy each build: a file removed from the module never lingers in the wheel.
        shutil.rmtree(module, ignore_errors=True)
        shutil.copytree(
            MODULE, module, ignore=shutil.ignore_patterns("vendor", ".*", "__pycache__")
        )
        documents = package / "_docs"
        documents.mkdir(exist_ok=True)
        for name in DOCUMENTS:
            shutil.copyfile(ROOT / name, documents / name)


setup(cmdclass={"build_py": BuildPyWithModule})
