"""The committed JSON Schemas are exactly what the models generate (``make schemas``)."""

from __future__ import annotations

from pathlib import Path

from bridge.schemas import build_schemas, render

SCHEMAS = Path(__file__).resolve().parent.parent / "schemas"


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


def test_inbound_schemas_forbid_unknown_fields() -> None:
    for rel, schema in build_schemas().items():
        if rel.startswith("client/") or rel == "auth.json":
            assert schema["additionalProperties"] is False, rel
