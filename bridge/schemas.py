"""Generate the JSON Schemas in ``schemas/`` from the protocol models."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, TypeAdapter
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
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


def _schema(model: type[BaseModel] | Any, title: str) -> dict[str, Any]:
    adapter: TypeAdapter[Any] = TypeAdapter(model)
    schema = adapter.json_schema(schema_generator=_BridgeJsonSchema)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = title
    return schema


def _filename(event: str) -> str:
    return event.replace(".", "_") + ".json"


def build_schemas() -> dict[str, dict[str, Any]]:
    """Map relative file path -> schema for every wire message."""
    files: dict[str, dict[str, Any]] = {
        "auth.json": _schema(protocol.Auth, "auth"),
        "connect_refusal.json": _schema(protocol.ConnectRefusal, "connect_refusal"),
        "ack.json": _schema(protocol.Ack, "ack"),
        # Not a wire message: the chat-log export `world verify --chat-log` reads.
        "history_anchors.json": _schema(protocol.HistoryAnchors, "history_anchors"),
    }
    for event, intent in protocol.INTENTS.items():
        files[f"client/{_filename(event)}"] = _schema(intent, event)
    for event, result in protocol.RESULTS.items():
        files[f"results/{_filename(event)}"] = _schema(result, f"{event} result")
    for event, emit in protocol.EMITS.items():
        files[f"server/{_filename(event)}"] = _schema(emit, event)
    files["webhooks/card.json"] = _schema(WebhookCardEvent, "json webhook body")
    files["openapi.json"] = openapi()
    files["index.json"] = {
        "protocol": protocol.PROTOCOL_VERSION,
        "namespace": protocol.NAMESPACE,
        "client": {e: f"client/{_filename(e)}" for e in protocol.INTENTS},
        "results": {e: f"results/{_filename(e)}" for e in protocol.RESULTS},
        "server": {e: f"server/{_filename(e)}" for e in protocol.EMITS},
        "webhooks": {"card": "webhooks/card.json"},
        "http": "openapi.json",
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
