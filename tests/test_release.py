"""The public release a GM installs like any Foundry module: one version everywhere, the
committed module.json is the release's manifest for the repository pyproject.toml names (every
link public https, never loopback), ``fate-bridge module --release`` writes the zip and the
manifest and refuses, naming the setting, what would make a release no hosted Foundry installs,
and the bridge's own ``/module/module.json`` keeps its loopback links and says whom it is for.

The release command runs through its entry function (``run_cli``) on a copy of the checkout's
versioned files in a temporary folder, which each refusal's test breaks in one way."""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import tomllib
import zipfile
from datetime import date
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from bridge import __version__
from bridge.cli.release import (
    LINKS,
    REPOSITORY_SETTING,
    configured_repository,
    public_manifest,
    versions,
)
from bridge.transport.module_package import ZIP_NAME
from tests.bridge_process import PROJECT_ROOT, Bridge
from tests.in_process import run_cli

REPOSITORY = "https://github.com/fate-bridge/fate-bridge"
MODULE_JSON = PROJECT_ROOT / "foundry-module" / "module.json"
FAILS = 2


def refusal(result: subprocess.CompletedProcess[str]) -> str:
    """The one line a refused release prints (exit 2, no traceback), without ``error: ``."""
    assert result.returncode == FAILS, result
    assert "Traceback" not in result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("error: ")
    return line.removeprefix("error: ")


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A copy of what a release reads: pyproject.toml, the versioned files and the module."""
    root = tmp_path / "checkout"
    for name in ("pyproject.toml", "package.json", "package-lock.json", "CHANGELOG.md"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(PROJECT_ROOT / name, root / name)
    (root / "bridge").mkdir()
    shutil.copy2(PROJECT_ROOT / "bridge" / "__init__.py", root / "bridge" / "__init__.py")
    shutil.copytree(
        PROJECT_ROOT / "foundry-module",
        root / "foundry-module",
        ignore=shutil.ignore_patterns("vendor"),
    )
    return root


def release(root: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return run_cli(
        None, "module", "--release", "--source", str(root), "--out", str(root / "dist"), *extra,
        check=False,
    )  # fmt: skip


def set_repository(root: Path, value: str | None) -> None:
    pyproject = root / "pyproject.toml"
    text = pyproject.read_text()
    line = f'Repository = "{REPOSITORY}"\n'
    assert line in text
    pyproject.write_text(text.replace(line, "" if value is None else f'Repository = "{value}"\n'))


def edit_json(path: Path, **changes: str) -> None:
    data = json.loads(path.read_text())
    data.update(changes)
    path.write_text(json.dumps(data, indent=2))


# -- what is committed ------------------------------------------------------------------------


def test_the_repository_is_named_once_and_every_project_url_is_under_it() -> None:
    urls = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text())["project"]["urls"]
    assert urls["Repository"] == REPOSITORY == configured_repository()
    for label, url in urls.items():
        assert url.startswith(REPOSITORY), (label, url)


def test_the_committed_module_json_is_the_release_manifest_all_public_https() -> None:
    committed = json.loads(MODULE_JSON.read_text())
    # Drift: the committed file is what pyproject's repository derives (the release checks it
    # too; `fate-bridge module --write-manifest` rewrites it).
    assert committed == public_manifest(REPOSITORY)
    assert committed["manifest"] == f"{REPOSITORY}/releases/latest/download/module.json"
    assert committed["download"] == (f"{REPOSITORY}/releases/download/v{__version__}/{ZIP_NAME}")
    for key in LINKS:
        parts = urlsplit(committed[key])
        assert parts.scheme == "https", (key, committed[key])
        assert parts.hostname == "github.com", (key, committed[key])
    text = MODULE_JSON.read_text()
    assert "http://" not in text
    assert not re.search(r"127\.0\.0\.1|localhost|\[::1\]", text)


def test_one_version_everywhere_and_the_changelog_has_its_heading() -> None:
    stated = versions()
    assert set(stated.by_file.values()) == {__version__}, stated.by_file
    changelog = (PROJECT_ROOT / "CHANGELOG.md").read_text()
    headings = re.findall(r"^## \[([^\]]+)\](?: - (\d{4}-\d{2}-\d{2}))?$", changelog, re.M)
    # [Unreleased] collects what the next version ships (a release refuses while it lists
    # anything); this version's heading, dated, is below it.
    assert headings[0] == ("Unreleased", "")
    assert headings[1][0] == __version__
    date.fromisoformat(headings[1][1])


# -- the release build -----------------------------------------------------------------------


def test_the_release_writes_the_zip_and_the_public_manifest(checkout: Path) -> None:
    result = release(checkout, "--repository", REPOSITORY + "/")
    assert result.returncode == 0, result
    out = checkout / "dist"
    manifest = json.loads((out / "module.json").read_text())
    assert manifest == json.loads(MODULE_JSON.read_text())
    archive = zipfile.ZipFile(out / ZIP_NAME)
    names = set(archive.namelist())
    assert json.loads(archive.read("fate-bridge/module.json")) == manifest
    shipped = {
        f"fate-bridge/{p.relative_to(checkout / 'foundry-module').as_posix()}"
        for p in (checkout / "foundry-module").rglob("*")
        if p.is_file()
    }
    assert shipped == names
    assert not any("vendor" in name for name in names)  # the same on every machine


def test_a_release_without_the_repository_refuses_naming_the_setting(checkout: Path) -> None:
    set_repository(checkout, None)
    line = refusal(release(checkout))
    assert REPOSITORY_SETTING in line and "https://" in line
    assert not (checkout / "dist").exists()


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://github.com/fate-bridge/fate-bridge", "must be https"),
        ("https://127.0.0.1:8765/fate-bridge", "127.0.0.1 is not a public host"),
        ("https://localhost/fate-bridge", "localhost is not a public host"),
        ("https://192.168.1.20/fate-bridge", "192.168.1.20 is not a public host"),
        ("https://[::1]/fate-bridge", "::1 is not a public host"),
        ("https://github.com", "name the repository itself"),
    ],
)
def test_a_release_with_a_url_no_hosted_foundry_reaches_refuses(
    checkout: Path, url: str, why: str
) -> None:
    set_repository(checkout, url)
    line = refusal(release(checkout))
    assert line.startswith(f"{REPOSITORY_SETTING} is {url}"), line
    assert why in line
    assert not (checkout / "dist").exists()


def test_a_release_from_another_repository_than_the_configured_one_refuses(
    checkout: Path,
) -> None:
    line = refusal(release(checkout, "--repository", "https://github.com/someone/fork"))
    assert "--repository https://github.com/someone/fork" in line
    assert REPOSITORY_SETTING in line and REPOSITORY in line
    line = refusal(release(checkout, "--repository", "http://127.0.0.1:8765"))
    assert line.startswith("--repository is http://127.0.0.1:8765")


def test_a_manifest_version_other_than_the_bridges_refuses(checkout: Path) -> None:
    edit_json(checkout / "foundry-module" / "module.json", version="9.9.9")
    line = refusal(release(checkout))
    assert f"bridge/__init__.py says {__version__}" in line
    assert "foundry-module/module.json says 9.9.9" in line
    assert not (checkout / "dist").exists()


def test_a_package_json_version_other_than_the_bridges_refuses(checkout: Path) -> None:
    edit_json(checkout / "package.json", version="0.0.1")
    line = refusal(release(checkout))
    assert "package.json says 0.0.1" in line
    assert "foundry-module/module.json" not in line  # only the file that disagrees is named


def test_a_changelog_without_the_versions_heading_refuses(checkout: Path) -> None:
    changelog = checkout / "CHANGELOG.md"
    changelog.write_text(changelog.read_text().replace(f"## [{__version__}]", "## [0.0.9]"))
    line = refusal(release(checkout))
    assert "CHANGELOG.md says 0.0.9" in line


def test_a_changelog_with_changes_under_unreleased_refuses(checkout: Path) -> None:
    changelog = checkout / "CHANGELOG.md"
    text = changelog.read_text()
    changelog.write_text(text.replace("## [Unreleased]\n", "## [Unreleased]\n\n- A fix.\n", 1))
    line = refusal(release(checkout))
    assert "CHANGELOG.md lists changes under [Unreleased]" in line
    assert f"'## [{__version__}] - DATE'" in line
    assert not (checkout / "dist").exists()


def test_a_committed_manifest_that_drifted_refuses_and_write_manifest_mends_it(
    checkout: Path,
) -> None:
    module_json = checkout / "foundry-module" / "module.json"
    edit_json(module_json, manifest="http://127.0.0.1:8765/module/module.json")
    line = refusal(release(checkout))
    assert "foundry-module/module.json is not the release's manifest" in line
    assert "--write-manifest" in line
    written = run_cli(None, "module", "--write-manifest", "--source", str(checkout))
    assert written.returncode == 0
    assert json.loads(module_json.read_text()) == json.loads(MODULE_JSON.read_text())
    assert release(checkout).returncode == 0


# -- the bridge's own manifest ------------------------------------------------------------------


def test_the_bridges_own_manifest_keeps_its_links_and_says_whom_it_is_for(
    bridge: Bridge,
) -> None:
    served = httpx.get(f"{bridge.url}/module/module.json").json()
    assert bridge.url.startswith("http://127.0.0.1:")
    for key in ("url", "manifest", "download", "readme", "license", "changelog"):
        assert served[key].startswith(bridge.url), (key, served[key])
    assert f"served by the Fate Bridge at {bridge.url}" in served["description"]
    assert "a Foundry on the bridge's own machine" in served["description"]
    assert f"{REPOSITORY}/releases/latest/download/module.json" in served["description"]
    zipped = httpx.get(served["download"])
    packed = zipfile.ZipFile(io.BytesIO(zipped.content))
    assert json.loads(packed.read("fate-bridge/module.json")) == served
