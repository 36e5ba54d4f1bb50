"""Generate the JSON Schemas in ``schemas/`` from the protocol models."""

from __future__ import annotations

import json
import posixpath
import re
import textwrap
from collections import Counter
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaMode, JsonSchemaValue
from pydantic_core import core_schema

from bridge.service import protocol
from bridge.service.intent_table import DECLARED
from bridge.service.protocol.http import WebhookCardEvent


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
    for event, declared in DECLARED.items():
        messages[f"client/{_filename(event)}"] = (declared.model, event)
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
        "client": {e: f"client/{_filename(e)}" for e in DECLARED},
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
    from bridge.transport.http_api import openapi_document

    return openapi_document()


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def write_schemas(out: Path, wire_types: Path | None = None) -> list[Path]:
    """Write every schema under ``out``, removing stale ones, and the module's JSDoc types of
    them to ``wire_types`` (by default the source tree's module beside ``out``, when there is
    one: ``WIRE_TYPES`` under ``out``'s parent); return the written paths."""
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
    if wire_types is None and (out.parent / WIRE_TYPES).parent.is_dir():
        wire_types = out.parent / WIRE_TYPES
    if wire_types is not None:
        wire_types.write_text(build_wire_types(files), encoding="utf-8")
        written.append(wire_types)
    return written


# -- the module's JSDoc types -----------------------------------------------------------------

#: The module's generated JSDoc typedefs of the wire, relative to the project's root (the
#: folder holding ``schemas/``).
WIRE_TYPES = "foundry-module/scripts/wire-types.mjs"
#: Message schemas the module does not read or send (the HTTP webhook's body).
_NOT_MODULE = ("webhooks/",)
_WIDTH = 100
_PRIMITIVES = {
    "string": "string",
    "integer": "number",
    "number": "number",
    "boolean": "boolean",
    "null": "null",
}

_HEADER = """\
// GENERATED by `make schemas` (python -m bridge schemas --out schemas) from the bridge's
// protocol models, like schemas/: do not edit. Change the model, then run `make schemas`.
/**
 * JSDoc types of the wire: one `@typedef` per shared shape in schemas/defs/ and per message
 * schema the module reads or sends, each property typed from its JSON Schema. Import a type
 * with `import("./wire-types.mjs").Name`; protocol.mjs aliases the ones the module names.
 * @module wire-types
 */

export {};
"""


def _typedef_name(ref: str) -> str:
    """The typedef a (relocated, relative) ``$ref`` names: its definition file's model."""
    return posixpath.basename(ref).removesuffix(".json")


def _top_level_union(expr: str) -> bool:
    depth = 0
    for char in expr:
        if char in "{[(<":
            depth += 1
        elif char in "}])>":
            depth -= 1
        elif char == "|" and depth == 0:
            return True
    return False


def _union(parts: list[str]) -> str:
    unique = list(dict.fromkeys(parts))
    return "*" if "*" in unique else "|".join(unique)


def _literal(value: Any) -> str:
    return json.dumps(value)


def _object_type(node: dict[str, Any]) -> str:
    properties = node.get("properties")
    if isinstance(properties, dict) and properties:
        required = set(node.get("required", []))
        fields = (
            f"{name}{'' if name in required else '?'}: {_js_type(schema)}"
            for name, schema in properties.items()
        )
        return "{" + ", ".join(fields) + "}"
    extra = node.get("additionalProperties", True)
    return f"Object<string, {_js_type(extra) if isinstance(extra, dict) else '*'}>"


def _js_type(node: Any) -> str:
    """The JSDoc type expression of a JSON Schema (as the generated files hold it)."""
    if not isinstance(node, dict):
        return "*"
    if isinstance(node.get("$ref"), str):
        return _typedef_name(node["$ref"])
    if "const" in node:
        return _literal(node["const"])
    if isinstance(node.get("enum"), list):
        return _union([_literal(value) for value in node["enum"]])
    for key in ("anyOf", "oneOf"):
        if isinstance(node.get(key), list):
            return _union([_js_type(part) for part in node[key]])
    if isinstance(node.get("allOf"), list) and len(node["allOf"]) == 1:
        return _js_type(node["allOf"][0])
    kind = node.get("type")
    if isinstance(kind, list):
        return _union([_js_type({**node, "type": one}) for one in kind])
    if kind in _PRIMITIVES:
        return _PRIMITIVES[kind]
    if kind == "array":
        if isinstance(node.get("prefixItems"), list):
            return "[" + ", ".join(_js_type(item) for item in node["prefixItems"]) + "]"
        if isinstance(node.get("items"), dict):
            item = _js_type(node["items"])
            return f"({item})[]" if _top_level_union(item) else f"{item}[]"
        return "Array<*>"
    if kind == "object" or "properties" in node:
        return _object_type(node)
    return "*"


def _prose(text: str) -> str:
    """A docstring as one JSDoc paragraph: reST literals as Markdown, no comment end."""
    return " ".join(text.replace("``", "`").replace("*/", "*\\/").split())


def _wrap(text: str, lead: str) -> list[str]:
    return textwrap.wrap(
        text,
        width=_WIDTH,
        initial_indent=lead,
        subsequent_indent=" *   ",
        break_long_words=False,
        break_on_hyphens=False,
    )


def _comment_lines(first: str, description: str) -> list[str]:
    """The line `` * first`` (a tag is never broken) then ``description``, wrapped."""
    line = f" * {first}"
    if not description:
        return [line]
    words = _prose(description)
    if len(line) + 2 + len(words.split(" ", 1)[0]) > _WIDTH:
        return [line, *_wrap(words, " *   ")]
    lead = " " * (len(line) + 2)
    first_line, *rest = _wrap(words, lead)
    return [line + "  " + first_line.removeprefix(lead), *rest]


def _typedef(name: str, rel: str, schema: dict[str, Any]) -> str:
    lines = ["/**"]
    lines += _comment_lines(f"schemas/{rel}", str(schema.get("description", "")))
    properties = schema.get("properties")
    if isinstance(properties, dict) and properties:
        lines.append(f" * @typedef {{object}} {name}")
        required = set(schema.get("required", []))
        for prop, sub in properties.items():
            label = prop if prop in required else f"[{prop}]"
            tag = f"@property {{{_js_type(sub)}}} {label}"
            description = sub.get("description", "") if isinstance(sub, dict) else ""
            lines += _comment_lines(tag, str(description))
    else:
        lines.append(f" * @typedef {{{_js_type(schema)}}} {name}")
    lines.append(" */")
    return "\n".join(lines) + "\n"


def _message_name(model: Any, title: str) -> str:
    if isinstance(model, type):
        return model.__name__
    return "".join(word.capitalize() for word in re.split(r"[^A-Za-z0-9]+", title) if word)


def _section(title: str) -> str:
    line = f"// -- {title} "
    return line + "-" * (_WIDTH - len(line)) + "\n"


def build_wire_types(files: dict[str, dict[str, Any]] | None = None) -> str:
    """The module's ``wire-types.mjs``: a JSDoc ``@typedef`` per shared definition and per
    message schema of the module's own shape (a message that is one definition is that
    definition's typedef), sorted, from the schemas ``build_schemas`` makes."""
    files = build_schemas() if files is None else files
    typedefs: dict[str, tuple[str, dict[str, Any]]] = {}
    for rel, schema in files.items():
        if rel.startswith(f"{DEFS}/"):
            typedefs[_typedef_name(rel)] = (rel, schema)
    messages: dict[str, tuple[str, dict[str, Any]]] = {}
    for rel, (model, title) in sorted(_messages().items()):
        schema = files[rel]
        if rel.startswith(_NOT_MODULE) or set(schema) - {"$id", "$schema", "title"} == {"$ref"}:
            continue
        name = _message_name(model, title)
        if name in typedefs or name in messages:
            raise ValueError(f"two wire types are named {name}: {rel}")
        messages[name] = (rel, schema)
    parts = [_HEADER]
    parts.append(_section("shared definitions (schemas/defs/)"))
    parts += [_typedef(name, rel, schema) for name, (rel, schema) in sorted(typedefs.items())]
    parts.append(_section("messages"))
    ordered = sorted(messages.items(), key=lambda item: item[1][0])
    parts += [_typedef(name, rel, schema) for name, (rel, schema) in ordered]
    return "\n".join(parts)
