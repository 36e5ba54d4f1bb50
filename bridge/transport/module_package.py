"""Package the Foundry module: the manifest and the zip, for this bridge or for a release.

Two manifests come from the one ``foundry-module/module.json``:

- the release's (``public_manifest``), which is also the committed file: every link on the
  project's public repository, named once as ``[project.urls] Repository`` in pyproject.toml.
  Foundry's *server* fetches a manifest and its zip, so this is the one a hosted Foundry (The
  Forge, Molten, a friend's server) installs from;
- this bridge's own (``manifest``), served at ``/module/module.json``: its links point at the
  bridge that serves it, so only a Foundry on a machine that reaches that bridge (for the default
  loopback bridge, the bridge's own machine) can install from it.

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
import ipaddress
import json
import re
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from aiohttp import web

from bridge.service.webhooks.reach import is_public

# The ``bridge`` package folder (this file sits in ``bridge/transport/``).
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
# Where the project's public repository is named, the one place every release link derives from.
REPOSITORY_SETTING = "[project.urls] Repository in pyproject.toml"


class ReleaseError(ValueError):
    """A release cannot be built as asked; the message is one line naming what to fix."""


def _read_json(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text("utf-8"))
    return data


def release_manifest_url(module_dir: Path = MODULE_DIR) -> str | None:
    """The release's manifest URL the module's files carry (the one any Foundry installs
    from), or None when they carry no https one."""
    try:
        url = str(_read_json(module_dir / "module.json").get("manifest", ""))
    except FileNotFoundError:
        return None
    return url if url.startswith("https://") else None


def is_loopback_url(url: str) -> bool:
    """True when ``url``'s host is this machine's loopback (127.0.0.0/8, ::1, localhost)."""
    host = (urlsplit(url).hostname or "").lower().rstrip(".")
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


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
    data = _read_json(module_dir / "module.json")
    base = base_url.rstrip("/")
    data["description"] = _local_description(data, base)
    data["url"] = base
    data["manifest"] = f"{base}/module/module.json"
    data["download"] = f"{base}/module/{ZIP_NAME}"
    data["readme"] = f"{base}/module/README.md"
    data["bugs"] = f"{base}/module/README.md#{BUGS_ANCHOR}"
    data["license"] = f"{base}/module/LICENSE"
    data["changelog"] = f"{base}/module/CHANGELOG.md"
    return data


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


# -- the public release ------------------------------------------------------------------------


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
    data = _read_json(module_dir / "module.json")
    tag = f"v{data['version']}"
    data["url"] = repository
    data["manifest"] = f"{repository}/releases/latest/download/module.json"
    data["download"] = f"{repository}/releases/download/{tag}/{ZIP_NAME}"
    data["readme"] = f"{repository}/blob/{tag}/README.md"
    data["bugs"] = f"{repository}/issues"
    data["license"] = f"{repository}/blob/{tag}/LICENSE"
    data["changelog"] = f"{repository}/blob/{tag}/CHANGELOG.md"
    return data


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
    lock = _read_json(root / "package-lock.json")
    heading = _CHANGELOG_HEADING.search((root / "CHANGELOG.md").read_text("utf-8"))
    return Versions(
        {
            "bridge/__init__.py": found.group(1) if found else None,
            "package.json": _read_json(root / "package.json").get("version"),
            "package-lock.json": lock.get("version"),
            'package-lock.json packages[""]': lock.get("packages", {}).get("", {}).get("version"),
            "foundry-module/module.json": _read_json(root / "foundry-module" / "module.json").get(
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
    if data != _read_json(module_dir / "module.json"):
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
