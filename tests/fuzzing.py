"""Hypothesis profiles: derandomized by default, so every clean clone (and CI) passes or
fails the same way; ``make fuzz`` selects the "fuzz" profile for long random runs. Whatever
a fuzz run finds becomes an @example on its test."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

FUZZ_EXAMPLES = 5_000
# A test that sets its own count runs this many times more of them under `make fuzz`.
FUZZ_FACTOR = 20

settings.register_profile(
    "ci", max_examples=200, derandomize=True, database=None, print_blob=True, deadline=None
)
settings.register_profile(
    "fuzz",
    max_examples=FUZZ_EXAMPLES,
    derandomize=False,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
settings.load_profile(PROFILE)


def examples(count: int) -> int:
    """A test's own example count: ``count`` in CI, many more under `make fuzz`."""
    return count * FUZZ_FACTOR if PROFILE == "fuzz" else count
