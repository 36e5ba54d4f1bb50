"""Starting the bridge as a GM would: each start-up failure is one line on stderr and exit
status 2 (``--debug`` adds the traceback), a ``world`` command creates no database, the
commands the bridge prints work from any folder, and the wheel installs a ``fate-bridge``
that serves the Foundry module without Node or the source tree.

What is the process's (its start, its output, its working folder, the installed command)
runs real processes (``@pytest.mark.process``); the ``world`` commands' refusals run the
command's entry function in the test's process (``run_cli``)."""

from __future__ import annotations

import io
import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import venv
import zipfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from bridge import __version__
from tests.bridge_process import (
    PROJECT_ROOT,
    Bridge,
    BridgeProcess,
    add_world,
    cli,
    free_port,
)
from tests.in_process import run_cli

FAILS = 2
MODULE_FILES = (
    "module.json",
    "README.md",
    "MACROS.md",
    "scripts/main.mjs",
    "scripts/adapters/index.mjs",
    "lang/en.json",
    "templates/action-card.hbs",
    "styles/fate-bridge.css",
)


def refused(result: subprocess.CompletedProcess[str]) -> str:
    """The one line a failure prints; asserts exit 2, nothing else on stderr, no traceback."""
    assert result.returncode == FAILS, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    return lines[0]


def serve(target: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``serve`` expected to fail at once (a bridge that starts would run until the timeout)."""
    return cli(
        target, "serve", "--host", "127.0.0.1", "--port", str(free_port()), *args, check=False
    )


# -- start-up failures --------------------------------------------------------------------


@pytest.mark.process
def test_a_port_in_use_is_one_line_and_makes_no_key(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = cli(tmp_path, "serve", "--host", "127.0.0.1", "--port", str(port), check=False)
    line = refused(result)
    assert f"port {port} is already in use" in line and "--port" in line
    # The default world (and its GM key, shown once) waits for the port: none was made.
    assert json.loads(cli(tmp_path, "world", "list", "--json").stdout) == []
    listed = cli(tmp_path, "world", "list")
    assert listed.stdout == "" and "No worlds yet" in listed.stderr


@pytest.mark.process
def test_the_debug_flag_shows_the_traceback(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        result = cli(
            tmp_path, "--debug", "serve", "--host", "127.0.0.1", "--port", port, check=False
        )
    assert result.returncode == FAILS
    assert "Traceback" in result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith("error: port ")


@pytest.mark.process
def test_a_data_folder_under_a_file_is_one_line(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    line = refused(serve(blocker / "sub"))
    assert "cannot create the data folder" in line and "is a file, not a folder" in line
    line = refused(serve(blocker))
    assert "is a file, not a folder" in line
    line = refused(run_cli(blocker / "sub", "world", "add", "w", check=False))
    assert "is a file, not a folder" in line
    line = refused(run_cli(blocker, "world", "list", check=False))
    assert "is a file, not a folder" in line


@pytest.mark.process
def test_a_data_folder_whose_parent_is_missing_is_one_line_and_not_created(
    tmp_path: Path,
) -> None:
    line = refused(serve(tmp_path / "missing" / "data"))
    assert "does not exist" in line and str(tmp_path / "missing") in line
    assert not (tmp_path / "missing").exists()
    # A missing data folder itself is made when its parent is there.
    made = tmp_path / "data"
    add_world(made, "w")
    assert (made / "bridge.sqlite3").is_file()


@pytest.mark.process
@pytest.mark.skipif(os.name != "posix", reason="read-only bind of a folder via chmod: POSIX")
def test_an_unwritable_data_folder_is_one_line(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if os.access(locked, os.W_OK):
            # root writes anyway: chmod cannot make a folder unwritable for it.
            probe = locked / "probe"
            probe.write_text("")
            probe.unlink()
            pytest.skip("this user writes in any folder (root)")
        line = refused(serve(locked))
        assert "is not writable" in line
    finally:
        locked.chmod(0o700)


@pytest.mark.process
def test_a_second_bridge_on_the_same_sqlite_file_is_refused_naming_the_first(
    tmp_path: Path,
) -> None:
    first = BridgeProcess(tmp_path, dev_dice=False).start()
    try:
        assert first.process is not None
        line = refused(serve(tmp_path))
        assert f"another bridge (process {first.process.pid})" in line
        assert str((tmp_path / "bridge.sqlite3").absolute()) in line
        # A world command still works beside the running bridge.
        assert "default" in run_cli(tmp_path, "world", "list").stdout
    finally:
        first.stop()
    # Once the first has stopped, the file is free again.
    BridgeProcess(tmp_path, dev_dice=False).start().stop()


@pytest.mark.process
@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("redis://127.0.0.1:1/0", "cannot reach Redis at redis://127.0.0.1:1/0"),
        ("notaurl", "is not a Redis URL"),
        ("redis://127.0.0.1:notaport/0", "is not a valid Redis URL"),
    ],
)
@pytest.mark.parametrize("command", [("serve", "--port", "0"), ("world", "list")])
def test_a_bad_or_unreachable_redis_is_one_line(
    tmp_path: Path, url: str, says: str, command: tuple[str, ...]
) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "bridge", "--redis", url, *command],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert says in refused(result)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.process
def test_a_password_in_a_redis_url_is_not_printed(tmp_path: Path) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "bridge",
            "--redis",
            "redis://:s3cret@127.0.0.1:1/0",
            "world",
            "list",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    line = refused(result)
    assert "s3cret" not in line and "redis://:PASSWORD@127.0.0.1:1/0" in line


@pytest.mark.parametrize(
    "command",
    [
        ("world", "rotate-key", "nowhere"),
        ("world", "verify", "nowhere"),
        ("world", "webhooks", "list", "nowhere"),
        ("world", "webhooks", "add", "nowhere", "json", "https://example.invalid/hook"),
        ("world", "webhooks", "remove", "nowhere", "w1"),
    ],
)
def test_an_unknown_world_is_one_line_naming_the_known_ones(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    add_world(tmp_path, "campaign")
    line = refused(run_cli(tmp_path, *command, check=False))
    assert "no world 'nowhere'" in line and "campaign" in line
    assert "world add nowhere" in line


@pytest.mark.parametrize(
    "command",
    [
        ("world", "list"),
        ("world", "rotate-key", "default"),
        ("world", "verify", "default"),
        ("world", "webhooks", "list", "default"),
    ],
)
def test_a_world_command_without_a_database_says_so_and_creates_nothing(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    line = refused(run_cli(empty, *command, check=False))
    assert f"no bridge database in {empty}" in line and "--data-dir" in line
    assert list(empty.iterdir()) == []
    missing = tmp_path / "missing"
    refused(run_cli(missing, *command, check=False))
    assert not missing.exists()


@pytest.mark.parametrize(
    ("command", "env", "said"),
    [
        (("serve", "--port", "99999"), {}, "--port: a port is a number from 0 to 65535, not 99999"),
        (("serve", "--port", "http"), {}, "--port: a port is a number from 0 to 65535, not 'http'"),
        (("serve",), {"FATE_BRIDGE_PORT": "eighty"}, "--port: a port is a number"),
        (("serve", "--bind-timeout", "0"), {}, "--bind-timeout: a number above 0, not 0"),
        (("serve", "--max-connections-per-address", "-1"), {}, "a whole number of 0 or more"),
        (("serv",), {}, "invalid choice: 'serv'"),
        (("serve", "--public-url", "bridge.example.org"), {}, "--public-url: an http:// or"),
        (("world", "add", "my world"), {}, "world add: argument id: use 1-64 letters"),
        (("world", "verify"), {}, "world verify: the following arguments are required: id"),
        (("world", "webhooks", "list", "w", "--limit", "many"), {}, "--limit: a whole number"),
        (("world", "list", "--nope"), {}, "unrecognized arguments: --nope"),
        ((), {}, "the following arguments are required: COMMAND"),
    ],
)
def test_every_command_line_mistake_is_one_line_without_usage_or_traceback(
    tmp_path: Path, command: tuple[str, ...], env: dict[str, str], said: str
) -> None:
    # A mistake on the command line (a port out of range, a mistyped command, a world id
    # with a space) is the one line that says what to fix: no usage block, no traceback.
    environment = {**os.environ, **env} if env else None
    line = refused(run_cli(tmp_path, *command, check=False, env=environment))
    assert said in line, line
    assert line.endswith("--help)") and "usage:" not in line
    assert list(tmp_path.iterdir()) == []  # nothing opened, nothing made


# -- what the bridge prints -----------------------------------------------------------------


@pytest.mark.process
def test_the_printed_rotate_key_command_works_from_any_folder(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    bridge = BridgeProcess(data, dev_dice=False).start()
    bridge.stop()
    banner = bridge.log_text()
    found = re.search(r"`([^`]*world rotate-key default)`", banner)
    assert found is not None, banner
    printed = shlex.split(found.group(1))
    assert Path(printed[0]).name == "fate-bridge"
    assert printed[1:3] == ["--data-dir", str(data.absolute())]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    program = printed[0] if os.sep in printed[0] else shutil.which(printed[0])
    if program is None or not Path(program).exists():
        pytest.skip("no fate-bridge script installed beside this Python (pip install -e .)")
    result = subprocess.run(
        printed, cwd=elsewhere, capture_output=True, text=True, timeout=60, check=True
    )
    assert result.stdout.startswith("GM key: ")
    assert list(elsewhere.iterdir()) == []


def test_the_data_folder_defaults_to_the_users_data_directory(tmp_path: Path) -> None:
    if sys.platform != "linux":
        pytest.skip("XDG_DATA_HOME names the user's data directory on Linux")
    env = {k: v for k, v in os.environ.items() if k != "FATE_BRIDGE_DATA"}
    env["XDG_DATA_HOME"] = str(tmp_path / "xdg")  # missing: its parents are made
    result = run_cli(None, "world", "add", "w", "--json", env=env)
    assert json.loads(result.stdout)["id"] == "w"
    assert (tmp_path / "xdg" / "fate-bridge" / "bridge.sqlite3").is_file()
    # The environment variable wins over the default, and --data-dir over both.
    env["FATE_BRIDGE_DATA"] = str(tmp_path / "from-env")
    run_cli(None, "world", "add", "e", env=env)
    add_world(tmp_path / "flag", "f")
    listed = {
        folder: [
            w["id"]
            for w in json.loads(run_cli(tmp_path / folder, "world", "list", "--json").stdout)
        ]
        for folder in ("xdg/fate-bridge", "from-env", "flag")
    }
    assert listed == {"xdg/fate-bridge": ["w"], "from-env": ["e"], "flag": ["f"]}


@pytest.mark.process
def test_listening_on_every_interface_prints_the_addresses(tmp_path: Path) -> None:
    bridge = BridgeProcess(tmp_path, dev_dice=False).start("--host", "0.0.0.0")
    bridge.stop()
    banner = bridge.log_text()
    assert "this machine can be reached at:" in banner
    assert f"http://127.0.0.1:{bridge.port}" in banner
    assert "0.0.0.0" not in banner


@pytest.mark.process
def test_the_help_names_the_command_and_the_debug_flag() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "bridge", "--help"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    assert out.startswith("usage: fate-bridge ")
    assert "--debug" in out


# -- the manifest's links -----------------------------------------------------------------------


# One version everywhere and the committed (release) manifest: tests/test_release.py.


def test_the_manifest_links_to_documents_the_bridge_serves(bridge: Bridge) -> None:
    served = httpx.get(f"{bridge.url}/module/module.json").json()
    assert served["url"] == bridge.url
    for key in ("readme", "license", "changelog", "bugs"):
        response = httpx.get(served[key])
        assert response.status_code == 200, (key, served[key])
    assert served["bugs"].endswith("#reporting-problems")
    readme = httpx.get(served["readme"]).text
    assert "## Reporting problems" in readme and "--debug" in readme
    assert "MIT License" in httpx.get(served["license"]).text


# -- the wheel ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``pip wheel`` of a copy of the working tree (tracked and new files, nothing ignored),
    so no build folder lands in the checkout."""
    source = tmp_path_factory.mktemp("source")
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=PROJECT_ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        path = PROJECT_ROOT / name
        if path.is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, source / name)
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(out), "."],
        cwd=source,
        check=True,
        timeout=300,
    )
    (built,) = out.glob("fate_bridge-*.whl")
    return built


@pytest.mark.process
def test_the_wheel_holds_the_module_the_documents_and_the_command(wheel: Path) -> None:
    archive = zipfile.ZipFile(wheel)
    names = set(archive.namelist())
    shipped = {
        path.relative_to(PROJECT_ROOT / "foundry-module").as_posix()
        for path in (PROJECT_ROOT / "foundry-module").rglob("*")
        if path.is_file() and "vendor" not in path.parts
    }
    assert set(MODULE_FILES) <= shipped
    assert {f"bridge/_module/{name}" for name in shipped} <= names
    assert not any("vendor" in name for name in names)
    assert {"bridge/_docs/README.md", "bridge/_docs/LICENSE", "bridge/_docs/CHANGELOG.md"} <= names
    info = f"fate_bridge-{__version__}.dist-info"
    entry_points = archive.read(f"{info}/entry_points.txt").decode()
    assert re.search(r"^fate-bridge = bridge\.cli:main$", entry_points, re.MULTILINE)
    metadata = archive.read(f"{info}/METADATA").decode()
    runtime = [
        line.split(":", 1)[1].strip()
        for line in metadata.splitlines()
        if line.startswith("Requires-Dist:") and "extra ==" not in line
    ]
    names_only = {re.split(r"[<>=!~ \[;]", r, maxsplit=1)[0].lower() for r in runtime}
    assert "platformdirs" in names_only and "aiohttp" in names_only
    assert not names_only & {"mypy", "ruff", "hypothesis", "schemathesis", "pytest"}
    assert "License-Expression: MIT" in metadata


@pytest.fixture
def installed(wheel: Path, tmp_path: Path) -> Iterator[Path]:
    """A fresh venv with the wheel installed (its dependencies from the package index, or
    pip's cache): the venv's folder. The venv gets no pip of its own (ensurepip costs more
    than the install): this interpreter's pip installs into it (``pip --python``)."""
    home = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(home)
    python = home / ("Scripts" if os.name == "nt" else "bin") / "python"
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet",
         "--disable-pip-version-check", "--no-compile", str(wheel)],
        check=True,
        timeout=240,
    )  # fmt: skip
    yield home


@pytest.mark.process
def test_an_installed_bridge_serves_the_module_from_any_folder(
    installed: Path, tmp_path: Path
) -> None:
    scripts = installed / ("Scripts" if os.name == "nt" else "bin")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    # The installed package, not the source tree, is what runs.
    where = subprocess.run(
        [str(scripts / "python"), "-c", "import bridge; print(bridge.__file__)"],
        cwd=elsewhere,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert Path(where).is_relative_to(installed)
    data = tmp_path / "data"
    data.mkdir()
    bridge = BridgeProcess(
        data, dev_dice=False, program=(str(scripts / "fate-bridge"),), cwd=elsewhere
    ).start()
    try:
        served = httpx.get(f"{bridge.url}/module/module.json").json()
        assert served["version"] == __version__
        assert served["download"] == f"{bridge.url}/module/fate-bridge.zip"
        zipped = httpx.get(served["download"])
        assert zipped.status_code == 200
        packed = zipfile.ZipFile(io.BytesIO(zipped.content))
        assert {f"fate-bridge/{name}" for name in MODULE_FILES} <= set(packed.namelist())
        assert json.loads(packed.read("fate-bridge/module.json"))["url"] == bridge.url
        assert httpx.get(served["license"]).status_code == 200
    finally:
        bridge.stop()
    # The banner's command is the installed one, and names the data folder.
    assert f"--data-dir {data.absolute()} world rotate-key default" in bridge.log_text()
    assert list(elsewhere.iterdir()) == []
