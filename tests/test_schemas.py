"""The committed JSON Schemas are exactly what the models generate (``make schemas``), and
each shape in them is written once: a shared model has its own ``defs/<Model>.json`` that the
message schemas refer to by a relative ``$ref``. The module's JSDoc types of the wire
(``foundry-module/scripts/wire-types.mjs``) come from the same schemas and are checked alike."""

from __future__ import annotations

import json
import posixpath
import re
from pathlib import Path
from typing import Any

from bridge.cli.schemas import (
    SCHEMA_BASE,
    WIRE_TYPES,
    build_schemas,
    build_wire_types,
    render,
    write_schemas,
)

ROOT = Path(__file__).resolve().parent.parent
SCHEMAS = ROOT / "schemas"
MODULE_SCRIPTS = ROOT / "foundry-module" / "scripts"
NOT_SCHEMAS = {"index.json", "openapi.json"}


def test_committed_schemas_match_the_models() -> None:
    expected = {rel: render(schema) for rel, schema in build_schemas().items()}
    committed = {
        path.relative_to(SCHEMAS).as_posix(): path.read_text("utf-8")
        for path in SCHEMAS.rglob("*.json")
    }
    stale = sorted(
        rel for rel in expected.keys() | committed.keys() if expected.get(rel) != committed.get(rel)
    )
    assert not stale, f"schemas/ is stale, run `make schemas`: {stale}"


def _references(node: Any) -> list[str]:
    """Every ``$ref`` and discriminator mapping target under ``node``."""
    found: list[str] = []
    if isinstance(node, dict):
        if isinstance(node.get("$ref"), str):
            found.append(node["$ref"])
        mapping = node.get("discriminator", {}).get("mapping", {})
        if isinstance(mapping, dict):
            found += [ref for ref in mapping.values() if isinstance(ref, str)]
        for value in node.values():
            found += _references(value)
    elif isinstance(node, list):
        for value in node:
            found += _references(value)
    return found


def _target(rel: str, ref: str) -> str:
    return posixpath.normpath(posixpath.join(posixpath.dirname(rel), ref))


def test_every_schema_has_its_id_and_every_reference_is_a_shared_file() -> None:
    files = build_schemas()
    referred: set[str] = set()
    for rel, schema in files.items():
        if rel in NOT_SCHEMAS:
            continue
        assert schema["$id"] == SCHEMA_BASE + rel, rel
        assert "$defs" not in schema, f"{rel} embeds definitions instead of referring to defs/"
        for ref in _references(schema):
            target = _target(rel, ref)
            assert target.startswith("defs/") and target in files, f"{rel}: {ref}"
            referred.add(target)
    defs = {rel for rel in files if rel.startswith("defs/")}
    assert referred == defs, f"unused definitions: {sorted(defs - referred)}"
    assert json.loads(render(files["index.json"]))["defs"] == {
        rel.removeprefix("defs/").removesuffix(".json"): rel for rel in sorted(defs)
    }


def test_each_shape_is_written_once() -> None:
    # The 19 action results and card emits once embedded the whole ActionCard each.
    files = build_schemas()
    titled = [
        schema["title"]
        for rel, schema in files.items()
        if rel.startswith("defs/") and "title" in schema
    ]
    assert len(titled) == len(set(titled))
    holders = [
        rel
        for rel, schema in files.items()
        if rel not in NOT_SCHEMAS and '"title": "ActionCard"' in json.dumps(schema)
    ]
    assert holders == ["defs/ActionCard.json"]


def _resolved(files: dict[str, dict[str, Any]], rel: str) -> dict[str, Any]:
    schema = files[rel]
    while set(schema) - {"$id", "$schema", "title", "description"} == {"$ref"}:
        rel = _target(rel, schema["$ref"])
        schema = files[rel]
    return schema


def test_inbound_schemas_forbid_unknown_fields() -> None:
    files = build_schemas()
    for rel in files:
        if rel.startswith("client/") or rel == "auth.json":
            assert _resolved(files, rel)["additionalProperties"] is False, rel


# -- the module's JSDoc types -----------------------------------------------------------------

TYPEDEF = re.compile(r"^ \* @typedef \{(.+)\} (\w+)$", re.MULTILINE)


def _typedefs(text: str) -> dict[str, str]:
    """Each typedef's name -> its comment block, in ``text``."""
    named: dict[str, str] = {}
    for block in text.split("/**")[1:]:
        match = TYPEDEF.search(block)
        if match:
            assert match.group(2) not in named, match.group(2)
            named[match.group(2)] = block.split("*/")[0]
    return named


def test_committed_wire_types_match_the_models() -> None:
    committed = (ROOT / WIRE_TYPES).read_text("utf-8")
    assert committed == build_wire_types(), f"{WIRE_TYPES} is stale, run `make schemas`"


def test_wire_types_type_every_definition_and_every_property() -> None:
    files = build_schemas()
    typedefs = _typedefs(build_wire_types(files))
    for rel, schema in files.items():
        if not rel.startswith("defs/"):
            continue
        name = rel.removeprefix("defs/").removesuffix(".json")
        assert name in typedefs, name
        required = set(schema.get("required", []))
        for prop in schema.get("properties", {}):
            label = prop if prop in required else f"[{prop}]"
            assert re.search(
                rf"@property \{{.+\}} {re.escape(label)}(  |$)", typedefs[name], re.M
            ), f"{name}.{prop}"
    # Every message the module sends or reads has a type: its definition's or its own.
    assert {"Ack", "Auth", "ActionStart", "ConnectRefusal", "CardEmit", "ActorPatch"} <= set(
        typedefs
    )
    # Every name a type refers to is a typedef of the file.
    words: set[str] = set()
    for block in typedefs.values():
        for expr in re.findall(r"@(?:typedef|property) \{(.+)\}", block):
            words |= set(re.findall(r"\b[A-Z]\w*", re.sub(r'"[^"]*"', "", expr)))
    assert words <= set(typedefs) | {"Object", "Array"}, sorted(words - set(typedefs))


def test_wire_types_map_json_schema_to_jsdoc() -> None:
    typedefs = _typedefs(build_wire_types())
    card = typedefs["ActionCard"]
    assert "@property {CardSide} actor\n" in card  # $ref -> the definition's typedef
    assert '@property {"passive"|"active"} opposition_kind' in card  # enum
    assert '@property {"action"} [kind]' in card  # const, optional
    assert "@property {number|null} shifts" in card  # anyOf with null
    assert "@property {Object<string, number>} fate_points" in card  # a map
    assert "@property {CardInvoke[]} invokes" in card  # an array
    # A tuple of enums, or null:
    assert "@property {[-1|0|1, -1|0|1, -1|0|1, -1|0|1]|null} dice" in typedefs["CardSide"]
    assert "@typedef {AckOk|AckError} Ack" in typedefs["Ack"]


def test_the_module_names_only_generated_wire_types() -> None:
    typedefs = _typedefs((ROOT / WIRE_TYPES).read_text("utf-8"))
    used = {
        name
        for path in MODULE_SCRIPTS.rglob("*.mjs")
        if path.name != "wire-types.mjs"
        for name in re.findall(
            r'import\("(?:\./|\.\./)+wire-types\.mjs"\)\.(\w+)', path.read_text()
        )
    }
    assert {"ActionCard", "CardSide", "CardEmit", "ActorPatch", "ActorData", "Ack"} <= used
    assert used <= set(typedefs), sorted(used - set(typedefs))
    protocol = (MODULE_SCRIPTS / "protocol.mjs").read_text("utf-8")
    assert "@typedef {object}" not in protocol, "protocol.mjs writes a wire shape by hand"


def test_write_schemas_writes_the_module_types_beside_the_schemas(tmp_path: Path) -> None:
    (tmp_path / WIRE_TYPES).parent.mkdir(parents=True)
    written = write_schemas(tmp_path / "schemas")
    assert tmp_path / WIRE_TYPES in written
    assert (tmp_path / WIRE_TYPES).read_text("utf-8") == (ROOT / WIRE_TYPES).read_text("utf-8")
    alone = tmp_path / "alone"
    assert all(path.suffix == ".json" for path in write_schemas(alone / "schemas"))
    assert not (alone / "foundry-module").exists()
