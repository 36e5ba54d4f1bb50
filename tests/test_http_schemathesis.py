"""schemathesis over the live HTTP API of a real bridge process: generated requests
(valid and not) against the served OpenAPI document find no 5xx and no answer that
breaks the document. Bounded so CI stays fast: derandomized, few examples each.

A process, not a bridge served in the test's: Hypothesis watches the global ``random``
while it draws a request, and a bridge on a thread of this process uses it meanwhile."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis.checks import not_a_server_error
from schemathesis.core.result import Ok
from schemathesis.generation.modes import GenerationMode
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.bridge_process import BridgeProcess, add_world
from tests.in_process import run_cli

pytestmark = pytest.mark.process

EXAMPLES = 10
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]


@pytest.fixture
def live(tmp_path: Path) -> Iterator[tuple[BridgeProcess, str]]:
    """A bridge with a world, a character and a webhook, and a rate limit generous enough
    that most generated requests reach the service."""
    process = BridgeProcess(tmp_path).start("--api-rate", "1000")
    try:
        key = add_world(process, "table")
        run_cli(
            process, "world", "webhooks", "add", "table", "json", "http://127.0.0.1:9/hook",
            "--webhook-allow", "127.0.0.1",
        )  # fmt: skip
        yield process, key
    finally:
        process.stop()


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_the_live_api_keeps_its_document(live: tuple[BridgeProcess, str], mode: Any) -> None:
    """Every operation of the served document, with valid and with invalid requests."""
    bridge, key = live
    schema = schemathesis.openapi.from_url(f"{bridge.url}/api/v1/openapi.json")
    operations = []
    for result in schema.get_all_operations():
        # Every operation of the document parses (an Err would be an invalid schema).
        assert isinstance(result, Ok), result.err()
        operations.append(result.ok())
    assert len(operations) >= 12
    exercised: list[str] = []
    for operation in operations:
        fixed = {"world_id": "table"} if "{world_id}" in operation.path else None
        # Aim the requests at the real world with its key, so they reach the service.
        strategy = operation.as_strategy(
            mode, path_parameters=fixed, headers={"Authorization": f"Bearer {key}"}
        )

        @given(case=strategy)
        @settings(
            max_examples=EXAMPLES,
            derandomize=True,
            deadline=None,
            database=None,
            phases=[Phase.explicit, Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        def run(case: Any) -> None:
            case.call_and_validate(base_url=bridge.url, checks=CHECKS)

        try:
            run()
        except Unsatisfiable:
            # Nothing of this operation can be made invalid (no body, query or free path
            # parameter: health, module, the fixed-world reads).
            assert mode is GenerationMode.NEGATIVE, operation.label
            continue
        exercised.append(operation.label)
    assert len(exercised) >= (len(operations) if mode is GenerationMode.POSITIVE else 6), exercised
