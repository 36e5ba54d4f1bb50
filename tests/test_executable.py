"""The release's one-file ``fate-bridge`` executable (PyInstaller, packaging/fate-bridge.spec),
built here for this machine as the release workflow builds it for Linux, macOS and Windows:
started from another folder, with nothing but its own file, it serves ``/healthz``, the
Foundry module's manifest and zip, and the documents the manifest links to."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import httpx
import pytest

from bridge import __version__
from tests.bridge_process import PROJECT_ROOT, BridgeProcess

SPEC = PROJECT_ROOT / "packaging" / "fate-bridge.spec"
RELEASE_MANIFEST = "https://github.com/fate-bridge/fate-bridge/releases/latest/download/module.json"
MODULE_FILES = (
    "module.json",
    "scripts/main.mjs",
    "scripts/adapters/index.mjs",
    "lang/en.json",
    "templates/action-card.hbs",
    "styles/fate-bridge.css",
)


@pytest.fixture(scope="module")
def executable(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The executable PyInstaller builds from the checkout, in a temporary folder (its work
    folder too, so nothing lands in the checkout)."""
    out = tmp_path_factory.mktemp("executable")
    subprocess.run(
        [sys.executable, "-m", "PyInstaller", "--noconfirm", "--log-level", "WARN",
         "--distpath", str(out / "dist"), "--workpath", str(out / "build"), str(SPEC)],
        cwd=PROJECT_ROOT,
        check=True,
        timeout=900,
    )  # fmt: skip
    built = out / "dist" / ("fate-bridge.exe" if os.name == "nt" else "fate-bridge")
    assert built.is_file()
    return built


@pytest.mark.process
def test_the_executable_serves_the_bridge_and_the_module_from_any_folder(
    executable: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    version = subprocess.run(
        [str(executable), "--version"], cwd=elsewhere, capture_output=True, text=True, check=True
    )
    assert version.stdout.strip() == f"fate-bridge {__version__}"
    data = tmp_path / "data"
    data.mkdir()
    bridge = BridgeProcess(data, dev_dice=False, program=(str(executable),), cwd=elsewhere)
    bridge.start()
    try:
        health = httpx.get(f"{bridge.url}/healthz").json()
        assert health["ok"] is True and health["version"] == __version__
        served = httpx.get(f"{bridge.url}/module/module.json").json()
        assert served["version"] == __version__
        assert served["download"] == f"{bridge.url}/module/fate-bridge.zip"
        assert "a Foundry on the bridge's own machine" in served["description"]
        zipped = httpx.get(served["download"])
        assert zipped.status_code == 200
        packed = zipfile.ZipFile(io.BytesIO(zipped.content))
        assert {f"fate-bridge/{name}" for name in MODULE_FILES} <= set(packed.namelist())
        assert json.loads(packed.read("fate-bridge/module.json")) == served
        for key in ("readme", "license", "changelog"):
            assert httpx.get(served[key]).status_code == 200, key
    finally:
        bridge.stop()
    log = bridge.log_text()
    assert f"Listening on {bridge.url}" in log
    # Any Foundry installs from the release's manifest; the bridge's own is for this machine.
    assert f"                 {RELEASE_MANIFEST}\n" in log
    assert f"(or, for a Foundry on this machine: {bridge.url}/module/module.json)" in log
    # The banner's command is the executable itself, naming the data folder.
    assert f"--data-dir {data.absolute()} world rotate-key default" in log
    assert (data / "bridge.sqlite3").is_file()
    assert list(elsewhere.iterdir()) == []
