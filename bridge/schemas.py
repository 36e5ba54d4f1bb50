"""Generate the JSON Schemas in ``schemas/`` from the protocol models."""

from __future__ import annotations

import json
import posixpath
from collections import Counter
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaMode, JsonSchemaValue
from pydantic_core import core_schema

from bridge import protocol
from bridge.protocol.http import WebhookCardEvent


class _BridgeJsonSchema(GenerateJsonSchema):
    """Pydantic's generator, but a dict's key pattern stays a constraint on the keys.

    Pydantic turns a key ``pattern`` into ``patternProperties``, which leaves keys that do not
    match unchecked instead of refused; ``propertyNames`` refuses them (readable names, H18).
    """

    def dict_schema(self, schema: core_schema.DictSchema) -> JsonSchemaValue:
        json_schema = super().dict_schema(schema)
        patterns = json_schema.pop("patternProperties", None)
        if patterns:
            ((pattern, values),) = patterns.items()
            json_schema["additionalProperties"] = values
            json_schema.setdefault("propertyNames", {})["pattern"] = pattern
        return json_schema


SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
#: The base of every schema's ``$id``: an identifier, not a location (``.invalid`` never
#: resolves). Files refer to each other by relative URIs, so a validator loads ``schemas/``
#: from anywhere: register the ``defs/`` files first, then compile the message schemas.
SCHEMA_BASE = "https://fate-bridge.invalid/schemas/"
DEFS = "defs"
_LOCAL = "#/$defs/"


def _filename(event: str) -> str:
    return event.replace(".", "_") + ".json"


def _messages() -> dict[str, tuple[Any, str]]:
    """Map relative file path -> (type, title) for every message schema."""
    messages: dict[str, tuple[Any, str]] = {
        "auth.json": (protocol.Auth, "auth"),
        "connect_refusal.json": (protocol.ConnectRefusal, "connect_refusal"),
        "ack.json": (protocol.Ack, "ack"),
        # Not a wire message: the chat-log export `world verify --chat-log` reads.
        "history_anchors.json": (protocol.HistoryAnchors, "history_anchors"),
    }
    for event, intent in protocol.INTENTS.items():
        messages[f"client/{_filename(event)}"] = (intent, event)
    for event, result in protocol.RESULTS.items():
        messages[f"results/{_filename(event)}"] = (result, f"{event} result")
    for event, emit in protocol.EMITS.items():
        messages[f"server/{_filename(event)}"] = (emit, event)
    messages["webhooks/card.json"] = (WebhookCardEvent, "json webhook body")
    return messages


def _refs(node: Any) -> list[str]:
    """The local definition names ``node`` refers to, once per reference."""
    found: list[str] = []
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(_LOCAL):
            found.append(ref.removeprefix(_LOCAL))
        for value in node.values():
            found += _refs(value)
    elif isinstance(node, list):
        for value in node:
            found += _refs(value)
    return found


def _relocate(node: Any, rel: str) -> Any:
    """``node`` with every local reference (``$ref`` and discriminator mappings) turned into
    a URI relative to the file ``rel`` that points at the definition's own file."""
    here = posixpath.dirname(rel) or "."

    def target(ref: Any) -> Any:
        if isinstance(ref, str) and ref.startswith(_LOCAL):
            return posixpath.relpath(f"{DEFS}/{ref.removeprefix(_LOCAL)}.json", here)
        return ref

    if isinstance(node, list):
        return [_relocate(value, rel) for value in node]
    if not isinstance(node, dict):
        return node
    out = {key: _relocate(value, rel) for key, value in node.items()}
    if "$ref" in out:
        out["$ref"] = target(out["$ref"])
    discriminator = out.get("discriminator")
    if isinstance(discriminator, dict) and isinstance(discriminator.get("mapping"), dict):
        mapping = {key: target(ref) for key, ref in discriminator["mapping"].items()}
        out["discriminator"] = {**discriminator, "mapping": mapping}
    return out


def _file(schema: dict[str, Any], rel: str, title: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = _relocate(schema, rel)
    out["$schema"] = SCHEMA_DIALECT
    out["$id"] = SCHEMA_BASE + rel
    if title is not None:
        out["title"] = title
    return out


def _shared_schemas() -> dict[str, dict[str, Any]]:
    """Every message schema and every shared definition, each shape written once.

    One generation over all messages names each model once; each model gets its own
    ``defs/<Model>.json``, referred to by ``$ref``, except a message's own model that nothing
    else uses, which stays inline in its file (an intent's fields read where it is).
    """
    messages = _messages()
    inputs: list[tuple[str, JsonSchemaMode, TypeAdapter[Any]]] = [
        (rel, "validation", TypeAdapter(model)) for rel, (model, _title) in messages.items()
    ]
    keyed, definitions = TypeAdapter.json_schemas(
        inputs, ref_template=_LOCAL + "{model}", schema_generator=_BridgeJsonSchema
    )
    defs: dict[str, dict[str, Any]] = dict(definitions.get("$defs", {}))
    roots = {rel: keyed[(rel, "validation")] for rel in messages}
    uses = Counter(name for schema in (*roots.values(), *defs.values()) for name in _refs(schema))
    files: dict[str, dict[str, Any]] = {}
    for rel, schema in roots.items():
        name = schema.get("$ref", "").removeprefix(_LOCAL) if set(schema) == {"$ref"} else ""
        if name in defs and uses[name] == 1:
            schema = defs.pop(name)
        files[rel] = _file(dict(schema), rel, messages[rel][1])
    for name, schema in sorted(defs.items()):
        rel = f"{DEFS}/{name}.json"
        files[rel] = _file(schema, rel)
    return files


def build_schemas() -> dict[str, dict[str, Any]]:
    """Map relative file path -> schema for every wire message and shared definition."""
    files = _shared_schemas()
    files["openapi.json"] = openapi()
    files["index.json"] = {
        "protocol": protocol.PROTOCOL_VERSION,
        "namespace": protocol.NAMESPACE,
        "client": {e: f"client/{_filename(e)}" for e in protocol.INTENTS},
        "results": {e: f"results/{_filename(e)}" for e in protocol.RESULTS},
        "server": {e: f"server/{_filename(e)}" for e in protocol.EMITS},
        "webhooks": {"card": "webhooks/card.json"},
        "http": "openapi.json",
        # The shared definitions the files above refer to (``$ref``), by model name.
        "defs": {
            rel.removeprefix(f"{DEFS}/").removesuffix(".json"): rel
            for rel in files
            if rel.startswith(f"{DEFS}/")
        },
    }
    return files


def openapi() -> dict[str, Any]:
    """The HTTP API's OpenAPI 3.1 document (also served at ``/api/v1/openapi.json``)."""
    from bridge.http_api import openapi_document

    return openapi_document()


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def write_schemas(out: Path) -> list[Path]:
    """Write every schema under ``out``, removing stale ones; return the written paths."""
    files = build_schemas()
    written: list[Path] = []
    for rel, schema in files.items():
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render(schema), encoding="utf-8")
        written.append(path)
    for stale in out.rglob("*.json"):
        if stale not in written:
            stale.unlink()
    return written
