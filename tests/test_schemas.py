"""The committed JSON Schemas are exactly what the models generate (``make schemas``), and
each shape in them is written once: a shared model has its own ``defs/<Model>.json`` that the
message schemas refer to by a relative ``$ref``."""

from __future__ import annotations

import json
import posixpath
from pathlib import Path
from typing import Any

from bridge.schemas import SCHEMA_BASE, build_schemas, render

SCHEMAS = Path(__file__).resolve().parent.parent / "schemas"
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
