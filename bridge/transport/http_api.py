"""``/api/v1``: the HTTP API for tools outside Foundry (bots, overlays, scripts).

Thin over the service: every route that reads or changes the game runs the socket
intent of the same name through :meth:`BridgeService.handle` (the intents exposed, and
their routes, are their rows' ``http`` in ``bridge.service.intent_table``), with a GM session for
the world whose key came as the bearer token, so validation, authorisation,
idempotency by ``request_id`` and the commit are the socket path's own; the intents
that carry an action on take its id from the path (``actions/{action_id}/<verb>``).
What it emits reaches the world's Foundry clients like any socket intent's. Webhook settings call
the service's webhook methods. The route table below is also the OpenAPI document's
source (``make schemas`` writes it to ``schemas/openapi.json``).
"""

from __future__ import annotations

import asyncio
import functools
import json
import secrets
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic.json_schema import JsonSchemaMode

from bridge.service import BridgeService, IntentError, Reply, Session, error, protocol
from bridge.service.auth import key_matches
from bridge.service.intent_table import TABLE, Declared, Http
from bridge.service.protocol.http import (
    CharacterList,
    WebhookCreate,
    WebhookCreated,
    WebhookList,
    WebhookRemoved,
    action_body,
)
from bridge.service.session import validation_error
from bridge.store import codec
from bridge.transport.codec import MAX_NESTING, nests_deeper_than
from bridge.transport.fan_out import RoomFanOut
from bridge.transport.ratelimit import TokenBucket

API_PREFIX = "/api/v1"
# The user the bridge records for HTTP requests: idempotency is per (world, user, request id).
API_USER = "api"
API_RATE_PER_SECOND = 10.0
API_MIN_BURST = 3.0
DELIVERIES_MAX = 200

# An ack's error code -> the HTTP status; any other code is a rule's refusal (409).
STATUS_OF_CODE = {
    "invalid": 422,
    "unknown_actor": 422,
    "unknown_event": 404,
    "not_found": 404,
    "too_large": 413,
    "rate_limited": 429,
    "forbidden": 403,
    "unbound": 403,
    "dev_dice_disabled": 403,
    "unauthorized": 401,
    "internal": 500,
}
RULE_REFUSAL_STATUS = 409
# aiohttp's own refusals under /api/, in the ack's codes (any other status is "invalid").
AIOHTTP_REFUSAL_CODES: dict[int, protocol.ErrorCode] = {404: "not_found", 413: "too_large"}


class ApiError(Exception):
    def __init__(self, status: int, ack: dict[str, Any]) -> None:
        super().__init__(ack["error"]["message"])
        self.status = status
        self.ack = ack


def _status(ack: dict[str, Any]) -> int:
    return STATUS_OF_CODE.get(ack["error"]["code"], RULE_REFUSAL_STATUS)


def error_response(
    status: int, code: protocol.ErrorCode, message: str, field: str | None = None
) -> web.Response:
    headers = {"WWW-Authenticate": 'Bearer realm="fate-bridge"'} if status == 401 else None
    return web.json_response(error(code, message, field), status=status, headers=headers)


@dataclass
class ApiCall:
    """One authenticated request: its world's GM session and what it sent."""

    request: web.Request
    service: BridgeService
    session: Session
    emit: Callable[[Reply], Awaitable[None]]
    body: object = None

    @property
    def world_id(self) -> str:
        return self.session.world_id

    async def intent(self, event: str, payload: object) -> dict[str, Any]:
        """Run a socket intent exactly as a GM's socket would; its data, or ApiError."""
        reply = await self.service.handle(self.session, event, payload)
        if not reply.ack["ok"]:
            raise ApiError(_status(reply.ack), reply.ack)
        await self.emit(reply)
        data: dict[str, Any] = reply.ack["data"]
        return data

    async def read(self, event: str) -> dict[str, Any]:
        """A read intent: it needs a request id but commits nothing, so any fresh one."""
        return await self.intent(event, {"request_id": f"http-{secrets.token_hex(8)}"})


Handler = Callable[[ApiCall], Awaitable[BaseModel | dict[str, Any]]]


@dataclass(frozen=True)
class Route:
    method: str
    path: str
    operation_id: str
    summary: str
    # A model or a view (a TypedDict of bridge.service.protocol): a type form
    # TypeAdapter reads.
    response: Any
    handler: Handler
    request: type[BaseModel] | None = None
    refusals: tuple[int, ...] = ()
    path_params: tuple[str, ...] = ()
    query: dict[str, dict[str, Any]] = field(default_factory=dict)


async def _characters(call: ApiCall) -> BaseModel:
    state = await call.read("world.state")
    return CharacterList.model_validate({"characters": state["characters"]})


async def _character(call: ApiCall) -> dict[str, Any]:
    wanted = call.request.match_info["character_id"]
    state = await call.read("world.state")
    found: dict[str, Any] | None = next((c for c in state["characters"] if c["id"] == wanted), None)
    if found is None:
        raise ApiError(404, error("not_found", f"The world has no character {wanted!r}."))
    return found


WORLD = "/worlds/{world_id}"


def _with_path_action(action_id: str, body: object) -> object:
    """The body as intent message on the action the path names: its ``action_id`` is the
    path's. A body naming another action is refused (422, field ``action_id``) rather than
    either id silently winning; a body that is no object goes on for the intent to refuse."""
    if not isinstance(body, dict):
        return body
    if "action_id" in body and body["action_id"] != action_id:
        raise ApiError(
            422,
            error(
                "invalid",
                "The body names another action than the path: leave action_id out, or match.",
                "action_id",
            ),
        )
    return {**body, "action_id": action_id}


# Query booleans as the OpenAPI route declares them; any other text goes on as text, which
# the intent's strict validation refuses.
QUERY_BOOLEANS = {"true": True, "false": False}


def _query_payload(call: ApiCall, names: Iterable[str]) -> dict[str, Any]:
    """A read's message from the query: a fresh request id, and each named parameter
    given. Numbers and booleans arrive as text; the intent's own validation judges them."""
    payload: dict[str, Any] = {"request_id": f"http-{secrets.token_hex(8)}"}
    for name in names:
        raw = call.request.query.get(name)
        if raw is not None:
            if raw in QUERY_BOOLEANS:
                payload[name] = QUERY_BOOLEANS[raw]
            else:
                number = _query_number(raw)
                payload[name] = raw if number is None else number
    return payload


def _query_number(raw: str) -> int | None:
    """A query's whole number: ASCII digits only (``str.isdigit`` takes superscripts and
    other scripts' digits too), at most 18 of them; None for anything else."""
    if raw.isascii() and raw.isdigit() and len(raw) < 19:
        return int(raw)
    return None


def intent_route(declared: Declared[Any], http: Http) -> Route:
    """The route of an intent the table exposes over HTTP (:class:`Http`): a ``get``
    reads its query, a ``post`` sends its body, on an action's path with the path's
    ``action_id``; the answer is the intent's result."""
    event, model = declared.event, declared.model
    if http.on_action:
        if not issubclass(model, protocol.ActionRef):
            raise TypeError(f"{event} names no action, so it has no route under an action's path")
        verb = event.removeprefix("action.").replace("_", "-")

        async def on_action(call: ApiCall) -> dict[str, Any]:
            message = _with_path_action(call.request.match_info["action_id"], call.body)
            return await call.intent(event, message)

        return Route(
            "post",
            f"{WORLD}/actions/{{action_id}}/{verb}",
            http.operation_id,
            f"{http.summary}; socket intent {event}, idempotent by request_id",
            model.__result__,
            on_action,
            request=action_body(model),
            # forbidden (403) too: even the GM may not, say, invoke for a character outside
            # the action.
            refusals=(403, 409),
            path_params=("action_id",),
        )
    if http.method == "get":

        async def read(call: ApiCall) -> dict[str, Any]:
            return await call.intent(event, _query_payload(call, http.query))

        return Route(
            "get",
            WORLD + http.path,
            http.operation_id,
            http.summary,
            model.__result__,
            read,
            query=dict(http.query),
        )

    async def send(call: ApiCall) -> dict[str, Any]:
        return await call.intent(event, call.body)

    return Route(
        "post",
        WORLD + http.path,
        http.operation_id,
        http.summary,
        model.__result__,
        send,
        request=model,
        refusals=(409,),
    )


async def _webhooks(call: ApiCall) -> BaseModel:
    limit = _query_number(call.request.query.get("limit", "50"))
    if limit is None or not 1 <= limit <= DELIVERIES_MAX:
        raise ApiError(
            422, error("invalid", f"limit is a whole number from 1 to {DELIVERIES_MAX}.", "limit")
        )
    return await call.service.webhook_settings.list_webhooks(call.world_id, limit)


async def _webhook_add(call: ApiCall) -> BaseModel:
    try:
        request = WebhookCreate.model_validate(call.body)
    except ValidationError as exc:
        raise ApiError(422, validation_error(exc)) from exc
    return await call.service.webhook_settings.add_webhook(call.world_id, request)


async def _webhook_remove(call: ApiCall) -> BaseModel:
    return await call.service.webhook_settings.remove_webhook(
        call.world_id, call.request.match_info["webhook_id"]
    )


ROUTES: tuple[Route, ...] = (
    *(intent_route(d, d.http) for d in TABLE if d.http is not None),
    Route("get", f"{WORLD}/characters", "listCharacters", "Every character the bridge holds",
          CharacterList, _characters),
    Route("get", f"{WORLD}/characters/{{character_id}}", "readCharacter", "One character",
          protocol.CharacterSummary, _character, path_params=("character_id",)),
    Route("get", f"{WORLD}/webhooks", "listWebhooks", "The world's webhooks (URLs shortened, "
          "never secrets) and its most recent deliveries and failures", WebhookList, _webhooks,
          query={"limit": {"type": "integer", "minimum": 1, "maximum": DELIVERIES_MAX}}),
    Route("post", f"{WORLD}/webhooks", "addWebhook", "Add a Discord or signed JSON webhook; a "
          "JSON webhook's signing secret is in this answer only", WebhookCreated, _webhook_add,
          request=WebhookCreate),
    Route("delete", f"{WORLD}/webhooks/{{webhook_id}}", "removeWebhook", "Remove a webhook",
          WebhookRemoved, _webhook_remove, path_params=("webhook_id",)),
)  # fmt: skip
"""Every route: the intents the table exposes (``Declared.http``), then the HTTP API's own."""


class HttpApi:
    """Authentication, rate limits, body limits and JSON errors around :data:`ROUTES`."""

    def __init__(
        self,
        service: BridgeService,
        sio: RoomFanOut,
        on_commit: Callable[[], None] | None = None,
        rate_per_second: float = API_RATE_PER_SECOND,
    ) -> None:
        self.service = service
        self.sio = sio
        self.on_commit = on_commit
        self.rate = rate_per_second
        # Bursts of three seconds' worth, and never fewer than three requests.
        self.burst = max(API_MIN_BURST, rate_per_second * 3)
        self._buckets: dict[str, TokenBucket] = {}

    def register(self, app: web.Application) -> None:
        app.router.add_get(f"{API_PREFIX}/openapi.json", self._openapi)
        for route in ROUTES:
            app.router.add_route(route.method.upper(), API_PREFIX + route.path, self._wrap(route))
        app.middlewares.append(self._json_errors)

    @staticmethod
    async def _openapi(_request: web.Request) -> web.Response:
        # Built on first request, off the loop (it takes a few hundred ms of schema
        # generation), not at every start-up: most bridges are never asked for it.
        body = await asyncio.to_thread(openapi_body)
        return web.Response(body=body, content_type="application/json")

    @web.middleware
    async def _json_errors(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        """aiohttp's own refusals (unknown path, wrong method) as JSON under /api/."""
        try:
            return await handler(request)
        except web.HTTPException as exc:
            if not request.path.startswith(API_PREFIX) or exc.status < 400:
                raise
            code = AIOHTTP_REFUSAL_CODES.get(exc.status, "invalid")
            response = error_response(exc.status, code, exc.reason)
            if "Allow" in exc.headers:
                response.headers["Allow"] = exc.headers["Allow"]
            return response

    def _bucket(self, key: str) -> TokenBucket:
        bucket = self._buckets.get(key)
        if bucket is None:
            if len(self._buckets) > 10_000:
                self._buckets.clear()  # bounded memory under a flood of distinct keys
            bucket = self._buckets[key] = TokenBucket(self.rate, self.burst, stamp=time.monotonic())
        return bucket

    async def _emit(self, reply: Reply) -> None:
        for emission in reply.emissions:
            await self.sio.emit(
                emission.event, emission.payload, room=emission.room, namespace=protocol.NAMESPACE
            )
        if reply.emissions and self.on_commit is not None:
            self.on_commit()

    async def _session(self, request: web.Request) -> Session:
        world_id = request.match_info["world_id"]
        header = request.headers.get("Authorization", "")
        scheme, _, key = header.partition(" ")
        world = await self.service.store.get_world(world_id)
        if (
            scheme.lower() != "bearer"
            or world is None
            or not key.strip()
            or not key_matches(key.strip(), world.key_hash)
        ):
            if not self._bucket(f"remote:{request.remote}").take(time.monotonic()):
                raise ApiError(429, error("rate_limited", "Too many requests; slow down."))
            raise ApiError(
                401,
                error(
                    "unauthorized",
                    "Send the world's GM key: Authorization: Bearer <key> "
                    "(unknown world or wrong key).",
                ),
            )
        if not self._bucket(f"world:{world.id}").take(time.monotonic()):
            raise ApiError(429, error("rate_limited", "Too many requests; slow down."))
        return Session(f"http:{secrets.token_hex(4)}", world.id, API_USER, "gm", bound=True)

    @staticmethod
    async def _body(request: web.Request) -> object:
        """The whole body as JSON, however many segments it came in; 413 past
        MAX_MESSAGE_BYTES, 400 when it is not JSON or nests past MAX_NESTING."""
        limit = protocol.MAX_MESSAGE_BYTES
        too_large = ApiError(413, error("too_large", f"The body is over {limit} bytes."))
        if request.content_length is not None and request.content_length > limit:
            raise too_large
        raw = bytearray()
        # read(n) answers with what has arrived so far: read on until the end.
        while chunk := await request.content.read(limit + 1 - len(raw)):
            raw += chunk
            if len(raw) > limit:
                raise too_large
        too_deep = ApiError(
            400, error("invalid", f"The body nests deeper than {MAX_NESTING} levels.")
        )
        try:
            body = codec.loads(bytes(raw))
        except codec.TooDeep as exc:
            raise too_deep from exc
        except ValueError as exc:  # UnicodeDecodeError too
            raise ApiError(400, error("invalid", "The body is not JSON.")) from exc
        if raw.count(b"[") + raw.count(b"{") > MAX_NESTING and nests_deeper_than(body, MAX_NESTING):
            raise too_deep
        return body

    def _wrap(self, route: Route) -> Callable[[web.Request], Awaitable[web.Response]]:
        async def handle(request: web.Request) -> web.Response:
            try:
                session = await self._session(request)
                body = await self._body(request) if route.request is not None else None
                call = ApiCall(request, self.service, session, self._emit, body)
                result = await route.handler(call)
            except ApiError as exc:
                headers = (
                    {"WWW-Authenticate": 'Bearer realm="fate-bridge"'} if exc.status == 401 else {}
                )
                if exc.status == 429:
                    headers["Retry-After"] = "1"
                return web.json_response(exc.ack, status=exc.status, headers=headers)
            except IntentError as exc:
                ack = error(exc.code, exc.message, exc.field, exc.params)
                return web.json_response(ack, status=_status(ack))
            data = result.model_dump(mode="json") if isinstance(result, BaseModel) else result
            return web.json_response(data)

        return handle


def _error_response(description: str) -> dict[str, Any]:
    return {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/AckError"}}},
    }


@functools.cache
def openapi_body() -> bytes:
    """:func:`openapi_document` encoded as JSON, built once per process."""
    return json.dumps(openapi_document()).encode()


def openapi_document() -> dict[str, Any]:
    """The OpenAPI 3.1 document of the whole HTTP surface (API, health, module)."""
    wanted: list[tuple[Any, JsonSchemaMode, TypeAdapter[Any]]] = [
        (model, "serialization", TypeAdapter(model))
        for model in (protocol.Health, protocol.AckError)
    ]
    for route in ROUTES:
        wanted.append((route.response, "serialization", TypeAdapter(route.response)))
        if route.request is not None:
            wanted.append((route.request, "validation", TypeAdapter(route.request)))
    refs, definitions = TypeAdapter.json_schemas(
        wanted, ref_template="#/components/schemas/{model}"
    )
    paths: dict[str, Any] = {}
    for route in ROUTES:
        parameters: list[dict[str, Any]] = [
            {
                "name": name,
                "in": "path",
                "required": True,
                "schema": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 64,
                    "pattern": r"^[A-Za-z0-9_.:\-]+$",
                },
            }
            for name in ("world_id", *route.path_params)
        ]
        parameters += [
            {"name": name, "in": "query", "required": False, "schema": schema}
            for name, schema in route.query.items()
        ]
        responses: dict[str, Any] = {
            "200": {
                "description": "Done",
                "content": {
                    "application/json": {"schema": refs[(route.response, "serialization")]}
                },
            },
            "401": {
                **_error_response("No or wrong GM key for this world"),
                "headers": {"WWW-Authenticate": {"schema": {"type": "string"}}},
            },
            "404": _error_response("No such thing in this world"),
            "429": {
                **_error_response("Too many requests"),
                "headers": {"Retry-After": {"schema": {"type": "string"}}},
            },
        }
        if route.request is not None:
            responses["400"] = _error_response(
                f"The body is not JSON, or nests deeper than {MAX_NESTING} levels"
            )
            responses["413"] = _error_response("The body is too large")
            responses["422"] = _error_response("The body breaks the schema (ack error 'invalid')")
        for status in route.refusals:
            responses[str(status)] = _error_response("Refused by the rules; nothing changed")
        if route.query:
            responses["422"] = _error_response("A query parameter is out of range")
        operation: dict[str, Any] = {
            "operationId": route.operation_id,
            "summary": route.summary,
            "security": [{"gmKey": []}],
            "parameters": parameters,
            "responses": responses,
        }
        if route.request is not None:
            operation["requestBody"] = {
                "required": True,
                "content": {"application/json": {"schema": refs[(route.request, "validation")]}},
            }
        paths.setdefault(API_PREFIX + route.path, {})[route.method] = operation
    paths["/healthz"] = {
        "get": {
            "operationId": "health",
            "summary": "Is the bridge serving",
            "responses": {
                "200": {
                    "description": "Serving",
                    "content": {
                        "application/json": {"schema": refs[(protocol.Health, "serialization")]}
                    },
                }
            },
        }
    }
    paths["/module/module.json"] = {
        "get": {
            "operationId": "moduleManifest",
            "summary": "The Foundry module manifest, pointing at this bridge",
            "responses": {
                "200": {
                    "description": "Manifest",
                    "content": {"application/json": {"schema": {"type": "object"}}},
                }
            },
        }
    }
    paths["/module/fate-bridge.zip"] = {
        "get": {
            "operationId": "moduleZip",
            "summary": "The installable module",
            "responses": {
                "200": {
                    "description": "Zip",
                    "content": {"application/zip": {"schema": {"type": "string"}}},
                },
                "503": {"description": "The socket.io-client build is missing"},
            },
        }
    }
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Fate Bridge HTTP API",
            "version": str(protocol.PROTOCOL_VERSION),
            "description": "For tools outside Foundry: the GM key of a world as a bearer token. "
            "Bodies are the socket protocol's own messages (the JSON Schemas beside this "
            "file); errors are its ack errors, with an HTTP status. Play from Foundry happens "
            f"over Socket.IO namespace {protocol.NAMESPACE}.",
        },
        "paths": paths,
        "components": {
            "schemas": definitions["$defs"],
            "securitySchemes": {
                "gmKey": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "The world's GM key (`fate-bridge world rotate-key`)",
                }
            },
        },
    }
