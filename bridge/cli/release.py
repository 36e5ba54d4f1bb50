"""The public release of the Foundry module: its ``fate-bridge.zip`` and ``module.json``
(``fate-bridge module --release``), every link on the project's public repository, named
once as ``[project.urls] Repository`` in pyproject.toml.

The release's manifest is also the committed ``foundry-module/module.json``. Foundry's
*server* fetches a manifest and its zip, so this is the one a hosted Foundry (The Forge,
Molten, a friend's server) installs from; a bridge serves its own copy
(:mod:`bridge.transport.module_package`), for a Foundry that reaches that bridge. A release
is built only from a checkout whose versions agree and whose committed manifest is the
release's.
"""

from __future__ import annotations

import ipaddress
import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from bridge.service.module_files import MODULE_DIR, PROJECT_ROOT
from bridge.service.webhooks.reach import is_public
from bridge.transport.module_package import (
    ZIP_NAME,
    read_json,
    with_links,
    zip_module,
)

# Where the project's public repository is named, the one place every release link derives from.
REPOSITORY_SETTING = "[project.urls] Repository in pyproject.toml"


class ReleaseError(ValueError):
    """A release cannot be built as asked; the message is one line naming what to fix."""


def release_manifest_url(module_dir: Path = MODULE_DIR) -> str | None:
    """The release's manifest URL the module's files carry (the one any Foundry installs
    from), or None when they carry no https one."""
    try:
        url = str(read_json(module_dir / "module.json").get("manifest", ""))
    except FileNotFoundError:
        return None
    return url if url.startswith("https://") else None


def configured_repository(root: Path = PROJECT_ROOT) -> str | None:
    """``[project.urls] Repository`` of the checkout at ``root``; None when its
    pyproject.toml names none."""
    urls = tomllib.loads((root / "pyproject.toml").read_text("utf-8"))
    value = urls.get("project", {}).get("urls", {}).get("Repository")
    return str(value) if value else None


def _is_private_host(host: str) -> bool:
    """True for a name or address that only one machine or one network reaches."""
    name = host.lower().rstrip(".")
    if name == "localhost" or name.endswith((".localhost", ".local", ".internal", ".home.arpa")):
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return "." not in name  # a bare machine name
    return not is_public(address)


def public_repository(url: str | None, setting: str = REPOSITORY_SETTING) -> str:
    """``url`` without a trailing slash, when it is a public https URL with a host and a path
    (``https://github.com/OWNER/NAME``).

    Raises ``ReleaseError`` naming ``setting`` when it is missing, not https, on a loopback or
    private host, or carries a query, fragment, credentials or port."""
    if not url or not url.strip():
        raise ReleaseError(
            f"a release needs the project's public repository: set {setting} "
            "(e.g. https://github.com/OWNER/NAME)"
        )
    url = url.strip().rstrip("/")
    parts = urlsplit(url)
    if parts.scheme != "https":
        raise ReleaseError(
            f"{setting} is {url}: a release's URLs must be https (Foundry's server fetches "
            "the manifest and the zip from the public internet)"
        )
    host = parts.hostname or ""
    if not host or _is_private_host(host):
        raise ReleaseError(
            f"{setting} is {url}: {host or 'no host'} is not a public host; a hosted Foundry "
            "would fetch the module from its own machine or network"
        )
    if parts.query or parts.fragment or parts.username or parts.port or not parts.path.strip("/"):
        raise ReleaseError(
            f"{setting} is {url}: name the repository itself, https://HOST/OWNER/NAME"
        )
    return url


def public_manifest(repository: str, module_dir: Path = MODULE_DIR) -> dict[str, Any]:
    """The release's module.json: ``manifest`` at the repository's latest release,
    ``download`` at this version's zip, and ``url``, ``bugs``, ``readme``, ``license`` and
    ``changelog`` on the repository, the documents as tagged for this version."""
    data = read_json(module_dir / "module.json")
    tag = f"v{data['version']}"
    return with_links(
        data,
        home=repository,
        manifest=f"{repository}/releases/latest/download/module.json",
        download=f"{repository}/releases/download/{tag}/{ZIP_NAME}",
        documents=f"{repository}/blob/{tag}",
        bugs=f"{repository}/issues",
    )


# The manifest's links, which differ between the release's manifest and a bridge's.
LINKS = ("url", "manifest", "download", "readme", "bugs", "license", "changelog")
_BRIDGE_VERSION = re.compile(r'^__version__\s*=\s*"([^"]+)"', re.MULTILINE)
_CHANGELOG_HEADING = re.compile(r"^## \[(\d[^\]]*)\]", re.MULTILINE)


@dataclass(frozen=True)
class Versions:
    """The version each file of a checkout states, by file (CHANGELOG.md: its newest version
    heading, None when it has none)."""

    by_file: dict[str, str | None]

    @property
    def bridge(self) -> str | None:
        return self.by_file["bridge/__init__.py"]

    def disagreeing(self) -> dict[str, str | None]:
        """The files whose version is not the bridge's."""
        return {name: v for name, v in self.by_file.items() if v != self.bridge}


def versions(root: Path = PROJECT_ROOT) -> Versions:
    """What each versioned file of the checkout at ``root`` says: the bridge's
    ``__version__``, package.json, package-lock.json (its own version, both places),
    foundry-module/module.json and the CHANGELOG's newest version heading."""
    found = _BRIDGE_VERSION.search((root / "bridge" / "__init__.py").read_text("utf-8"))
    lock = read_json(root / "package-lock.json")
    heading = _CHANGELOG_HEADING.search((root / "CHANGELOG.md").read_text("utf-8"))
    return Versions(
        {
            "bridge/__init__.py": found.group(1) if found else None,
            "package.json": read_json(root / "package.json").get("version"),
            "package-lock.json": lock.get("version"),
            'package-lock.json packages[""]': lock.get("packages", {}).get("", {}).get("version"),
            "foundry-module/module.json": read_json(root / "foundry-module" / "module.json").get(
                "version"
            ),
            "CHANGELOG.md": heading.group(1) if heading else None,
        }
    )


def check_versions(root: Path = PROJECT_ROOT) -> str:
    """The one version every file of the checkout states.

    Raises ``ReleaseError`` naming each file that says otherwise."""
    stated = versions(root)
    wrong = stated.disagreeing()
    if stated.bridge is None or wrong:
        listed = ", ".join(f"{name} says {value or 'nothing'}" for name, value in wrong.items())
        raise ReleaseError(
            f"versions disagree: bridge/__init__.py says {stated.bridge or 'nothing'}, "
            f"{listed}; give them one version (and the CHANGELOG a '## [VERSION]' heading)"
        )
    return stated.bridge


def unreleased_entries(root: Path = PROJECT_ROOT) -> str:
    """What the checkout's CHANGELOG.md lists under ``## [Unreleased]`` (stripped; empty
    when nothing, or no such heading)."""
    text = (root / "CHANGELOG.md").read_text("utf-8")
    _, found, after = text.partition("## [Unreleased]")
    if not found:
        return ""
    following = _CHANGELOG_HEADING.search(after)
    return (after[: following.start()] if following else after).strip()


def build_release(
    out: Path, repository: str | None = None, root: Path = PROJECT_ROOT
) -> tuple[Path, Path]:
    """Write the release's ``fate-bridge.zip`` and ``module.json`` into ``out`` from the
    checkout at ``root``, every link on the public repository that ``root``'s pyproject.toml
    names; the paths written.

    ``repository``, when given (the CI's own repository), must be the configured one. The zip
    leaves out the socket.io-client fallback whatever npm installed, so a release is the same
    on every machine (Foundry's page has its own ``io``).

    Raises ``ReleaseError`` when the repository is missing, not a public https URL, or
    differs from ``repository``; when the checkout's versions disagree or its CHANGELOG lists
    changes under [Unreleased]; and when the committed module.json is not the release's
    manifest."""
    if not (root / "pyproject.toml").is_file():
        raise ReleaseError(
            f"a release is built from the project's checkout, and {root} has no "
            "pyproject.toml: pass --source DIR"
        )
    configured = public_repository(configured_repository(root))
    if repository is not None:
        given = public_repository(repository, "--repository")
        if given != configured:
            raise ReleaseError(
                f"--repository {given} is not {REPOSITORY_SETTING} ({configured}): release "
                "from the repository the project names, or change that setting"
            )
    version = check_versions(root)
    if unreleased_entries(root):
        raise ReleaseError(
            f"CHANGELOG.md lists changes under [Unreleased]: what ships in {version} goes under "
            f"its '## [{version}] - DATE' heading (keep the [Unreleased] heading, empty)"
        )
    module_dir = root / "foundry-module"
    data = public_manifest(configured, module_dir)
    if data != read_json(module_dir / "module.json"):
        raise ReleaseError(
            "foundry-module/module.json is not the release's manifest for "
            f"{REPOSITORY_SETTING} ({configured}): run `fate-bridge module --release "
            "--write-manifest` and commit it"
        )
    out.mkdir(parents=True, exist_ok=True)
    archive, manifest_file = out / ZIP_NAME, out / "module.json"
    archive.write_bytes(zip_module(data, module_dir, socket_io_esm=None))
    manifest_file.write_text(json.dumps(data, indent=2) + "\n", "utf-8")
    return archive, manifest_file


def write_public_manifest(root: Path = PROJECT_ROOT) -> Path:
    """Rewrite the checkout's foundry-module/module.json as the release's manifest for the
    repository its pyproject.toml names (what ``build_release`` then checks); its path.

    Raises ``ReleaseError`` when the repository is missing or not a public https URL."""
    repository = public_repository(configured_repository(root))
    path = root / "foundry-module" / "module.json"
    data = public_manifest(repository, root / "foundry-module")
    text = path.read_text("utf-8")
    # Each link's value is replaced where it stands, so the file keeps its layout and a
    # change elsewhere in it (a language added) merges cleanly.
    for key in LINKS:
        pattern = re.compile(rf'("{key}"\s*:\s*)"[^"]*"')
        value = json.dumps(data[key]).replace("\\", "\\\\")
        text, count = pattern.subn(rf"\g<1>{value}", text)
        if count != 1:
            text = json.dumps(data, indent=2) + "\n"
            break
    path.write_text(text, "utf-8")
    return path
