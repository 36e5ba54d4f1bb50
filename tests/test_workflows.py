"""The release workflow does what the README says a release is, with no more privilege than
each job needs (``make lint`` runs actionlint and zizmor on the same files): a ``v*`` tag runs
the test suite, builds the module against this repository, the wheel and sdist and the three
executables, releases all of them, and publishes to PyPI by trusted publishing."""

from __future__ import annotations

import re
from typing import Any

import yaml  # type: ignore[import-untyped]

from tests.bridge_process import PROJECT_ROOT

WORKFLOWS = PROJECT_ROOT / ".github" / "workflows"
PINNED = re.compile(r"^[\w.-]+/[\w.-]+@[0-9a-f]{40} # v\d+(\.\d+)*$")


def load(name: str) -> dict[Any, Any]:
    data: dict[Any, Any] = yaml.safe_load((WORKFLOWS / name).read_text())
    return data


def steps(job: dict[str, Any]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = job.get("steps", [])
    return found


def test_a_tag_releases_after_the_suite_and_every_build() -> None:
    release = load("release.yml")
    # PyYAML reads the key `on` as True (YAML 1.1).
    assert release[True] == {"push": {"tags": ["v*"]}}
    assert release["permissions"] == {}
    jobs = release["jobs"]
    assert jobs["test"]["uses"] == "./.github/workflows/ci.yml"
    assert "bash .ci/run" in [s.get("run") for s in steps(load("ci.yml")["jobs"]["test"])]
    assert set(jobs["release"]["needs"]) == {"test", "build", "executable"}
    assert jobs["pypi"]["needs"] == ["release"]
    assert jobs["executable"]["strategy"]["matrix"]["os"] == [
        "ubuntu-latest",
        "macos-latest",
        "windows-latest",
    ]
    build = "\n".join(str(s.get("run", "")) for s in steps(jobs["build"]))
    assert 'module --release --repository "$REPOSITORY"' in build
    assert "python -m build" in build
    module_step = next(s for s in steps(jobs["build"]) if "--release" in str(s.get("run")))
    assert module_step["env"]["REPOSITORY"] == "${{ github.server_url }}/${{ github.repository }}"
    executable = "\n".join(str(s.get("run", "")) for s in steps(jobs["executable"]))
    assert "packaging/fate-bridge.spec" in executable


def test_each_job_has_only_the_permission_it_needs() -> None:
    jobs = load("release.yml")["jobs"]
    assert {name: job["permissions"] for name, job in jobs.items()} == {
        "test": {"contents": "read"},
        "build": {"contents": "read"},
        "executable": {"contents": "read"},
        "release": {"contents": "write"},
        "pypi": {"id-token": "write"},
    }
    assert jobs["pypi"]["environment"]["name"] == "pypi"
    assert load("ci.yml")["permissions"] == {}


def test_every_action_is_pinned_by_commit_and_no_checkout_keeps_credentials() -> None:
    for path in sorted(WORKFLOWS.glob("*.yml")):
        text = path.read_text()
        for line in text.splitlines():
            used = re.match(r"^\s*-?\s*uses: (.+)$", line)
            if not used or used.group(1).startswith("./"):
                continue
            assert PINNED.match(used.group(1)), (path.name, line)
        for job in yaml.safe_load(text)["jobs"].values():
            for step in steps(job):
                if str(step.get("uses", "")).startswith("actions/checkout@"):
                    assert step["with"]["persist-credentials"] is False, path.name
        # No expression is expanded into a shell script: values reach `run` through `env`.
        for job in yaml.safe_load(text)["jobs"].values():
            for step in steps(job):
                assert "${{" not in str(step.get("run", "")), (path.name, step)
