"""The bridge's HTTP routes and its command line. The commands run through their entry
function in the test's process (``tests.in_process.run_cli``), the help also as a real
``python -m bridge`` process, and the first start's banner comes from a real bridge
process; the routes are served in the test's process."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import httpx
import pytest

from bridge import __version__
from bridge.service.protocol import PROTOCOL_VERSION
from bridge.store.sqlite_schema import connect_readable
from tests.bridge_process import BridgeProcess, add_world
from tests.conftest import Connect
from tests.in_process import run_cli
from tests.log_forgery import rewrite_event
from tests.seats import Seat, queue, start_action


def test_healthz(bridge: BridgeProcess) -> None:
    response = httpx.get(f"{bridge.url}/healthz")
    assert response.status_code == 200
    assert response.json()["protocol"] == PROTOCOL_VERSION


def test_the_bridge_serves_its_module_for_install_by_url(bridge: BridgeProcess) -> None:
    manifest = httpx.get(f"{bridge.url}/module/module.json").json()
    assert manifest["id"] == "fate-bridge"
    # The module moves with the bridge (its protocol too): a new bridge's module is a
    # newer version, so Foundry offers the GM the update.
    assert manifest["version"] == __version__
    assert manifest["manifest"] == f"{bridge.url}/module/module.json"
    assert manifest["download"] == f"{bridge.url}/module/fate-bridge.zip"
    assert manifest["compatibility"]["minimum"] == "13"
    zipped = httpx.get(manifest["download"])
    assert zipped.status_code == 200
    archive = zipfile.ZipFile(io.BytesIO(zipped.content))
    names = set(archive.namelist())
    assert {
        "fate-bridge/module.json",
        "fate-bridge/scripts/main.mjs",
        "fate-bridge/scripts/vendor/socket.io.esm.min.js",
        "fate-bridge/lang/en.json",
    } <= names
    packed = json.loads(archive.read("fate-bridge/module.json"))
    assert packed["download"] == manifest["download"]
    # Every file the manifest loads is in the zip.
    for path in packed["esmodules"] + packed["styles"] + [x["path"] for x in packed["languages"]]:
        assert f"fate-bridge/{path}" in names


def test_cli_help_documents_every_command() -> None:
    # The process's own --help (python -m bridge): test_cli_startup.
    out = run_cli(None, "--help").stdout
    for command in ("serve", "world", "schemas", "module"):
        assert command in out
    world = run_cli(None, "world", "--help").stdout
    for command in ("add", "list", "verify", "rotate-key", "webhooks"):
        assert command in world


def test_world_commands(tmp_path: Path) -> None:
    key = add_world(tmp_path, "campaign", ruleset="fate-condensed")
    assert len(key) >= 32
    listed = json.loads(run_cli(tmp_path, "world", "list", "--json").stdout)
    assert listed == [{"id": "campaign", "name": "campaign", "ruleset": "fate-condensed"}]
    again = run_cli(tmp_path, "world", "add", "campaign", check=False)
    assert again.returncode == 1 and "already exists" in again.stderr
    bad = run_cli(tmp_path, "world", "add", "no spaces", check=False)
    assert bad.returncode == 2
    rotated = json.loads(run_cli(tmp_path, "world", "rotate-key", "campaign", "--json").stdout)
    assert rotated["key"] != key


async def test_old_key_stops_working_after_rotation(
    bridge: BridgeProcess, connect: Connect
) -> None:
    key = add_world(bridge, "rot")
    new_key = json.loads(run_cli(bridge, "world", "rotate-key", "rot", "--json").stdout)["key"]
    gm = Seat(await connect("rot", key=new_key))
    assert (await gm.ok("hello"))["role"] == "gm"
    with pytest.raises(Exception):  # noqa: B017 - the refusal itself is tested elsewhere
        await connect("rot", key=key)


async def test_world_verify_detects_a_tampered_log(
    bridge: BridgeProcess, world: tuple[str, str], gm: Seat
) -> None:
    await queue(gm, [1, 1, 0, 0])
    card = await start_action(gm, rating=4)
    await gm.card("action.pass", action_id=card["action_id"], side="actor")
    ok = run_cli(bridge, "world", "verify", world[0])
    assert ok.stdout.startswith("OK:")
    with connect_readable(bridge.data_dir / "bridge.sqlite3") as db:
        # Rewrite history: the first roll becomes four pluses.
        seq, payload = db.execute(
            "SELECT seq, payload FROM events WHERE world_id = ? AND type = 'action.put' "
            "ORDER BY seq LIMIT 1",
            (world[0],),
        ).fetchone()
        event = json.loads(payload)
        event["action"]["actor"]["roll"]["dice"] = [1, 1, 1, 1]
        rewrite_event(db, world[0], seq, event)
    tampered = run_cli(bridge, "world", "verify", world[0], check=False)
    assert tampered.returncode == 2 and "BROKEN" in tampered.stderr


@pytest.mark.process
def test_first_start_registers_a_default_world_and_prints_what_a_gm_needs(
    tmp_path: Path,
) -> None:
    bridge = BridgeProcess(tmp_path, dev_dice=False)
    bridge.start()
    try:
        banner = bridge.log_text()
    finally:
        bridge.stop()
    assert "World id:      default" in banner
    assert f"Bridge URL:    {bridge.url}" in banner
    assert f"{bridge.url}/module/module.json" in banner
    key_line = next(line for line in banner.splitlines() if "GM key:" in line)
    assert len(key_line.split("GM key:")[1].split()[0]) >= 32
    # A second start shows no key (it is stored hashed) and makes no new world.
    bridge.start()
    try:
        second = bridge.log_text()[len(banner) :]
    finally:
        bridge.stop()
    assert "shown when the world was created" in second
    listed = json.loads(run_cli(tmp_path, "world", "list", "--json").stdout)
    assert [w["id"] for w in listed] == ["default"]
