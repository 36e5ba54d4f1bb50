"""The README's HTTP walkthrough runs as printed against a fresh bridge: its ``curl`` commands,
read from the README itself (a change there that breaks them fails here), in order, with the
GM key the first start prints, each answering 2xx with the protocol's ``ok`` body."""

from __future__ import annotations

import contextlib
import io
import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from tests.bridge_process import PROJECT_ROOT
from tests.in_process import InProcessBridge, serving_in_thread

README = PROJECT_ROOT / "README.md"
SECTION = "## HTTP API for tools outside Foundry"
PRINTED_URL = "http://127.0.0.1:8765"


@dataclass(frozen=True)
class Curl:
    method: str
    url: str
    headers: dict[str, str]
    body: Any


def _commands(script: str) -> list[list[str]]:
    """The shell commands of ``script`` as words: lines joined where a backslash continues
    one or a quote is still open, comments dropped."""
    commands: list[list[str]] = []
    pending = ""
    for line in script.replace("\\\n", " ").splitlines():
        pending = f"{pending}\n{line}" if pending else line
        try:
            words = shlex.split(pending, comments=True)
        except ValueError:  # a quote spans the line break
            continue
        pending = ""
        if words:
            commands.append(words)
    assert not pending, f"unclosed quote in the README: {pending!r}"
    return commands


def walkthrough() -> list[Curl]:
    """The curl commands of the README's HTTP section's first ``sh`` block, in order."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index(SECTION) :]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block is not None, "the HTTP section has no sh block"
    calls = []
    for words in _commands(block.group(1)):
        if words[:1] != ["curl"]:
            continue
        headers: dict[str, str] = {}
        body: Any = None
        url = ""
        method = "GET"
        rest = iter(words[1:])
        for word in rest:
            if word == "-s":
                continue
            if word == "-H":
                name, _, value = next(rest).partition(":")
                headers[name.strip()] = value.strip()
            elif word == "-d":
                body = json.loads(next(rest))
                method = "POST"
            elif word == "-X":
                method = next(rest)
            else:
                url = word
        calls.append(Curl(method, url, headers, body))
    return calls


def test_the_readme_http_walkthrough_runs_as_printed_on_a_fresh_bridge(tmp_path: Path) -> None:
    calls = walkthrough()
    assert len(calls) >= 8 and all(c.url.startswith(PRINTED_URL) for c in calls)
    banner = io.StringIO()
    # A fresh data folder, served as `make run` serves it: the default world is made on the
    # first start, whose banner shows its GM key once.
    with contextlib.redirect_stdout(banner), serving_in_thread(InProcessBridge(tmp_path)) as bridge:
        found = re.search(r"GM key:\s+(\S+)", banner.getvalue())
        assert found is not None, banner.getvalue()
        key = found.group(1)
        answers = []
        for call in calls:
            headers = {k: v.replace("$KEY", key) for k, v in call.headers.items()}
            url = call.url.replace(PRINTED_URL, bridge.url)
            answer = httpx.request(call.method, url, headers=headers, json=call.body)
            assert answer.status_code == 200, (call.method, call.url, answer.text)
            answers.append(answer.json())
    by_url = {c.url.removeprefix(PRINTED_URL): a for c, a in zip(calls, answers, strict=True)}
    world = "/api/v1/worlds/default"
    assert [c["name"] for c in by_url[f"{world}/characters"]["characters"]] == ["Zird"]
    # The action the README carries on is the one it started, as it says (a1).
    started = by_url[f"{world}/actions"]
    assert started["card"]["action_id"] == "a1"
    invoked = by_url[f"{world}/actions/a1/invoke"]["card"]
    assert invoked["invokes"][0]["invoker_name"] == "Zird"
    assert invoked["actor"]["invoke_bonus"] == 2
    passed = by_url[f"{world}/actions/a1/pass"]["card"]
    assert passed["state"] != "invoking"
    # Resolved (a tie or a fail leaves the actor a choice first): the history lists it.
    history = [e["action_id"] for e in by_url[f"{world}/history?limit=20"]["entries"]]
    assert history == (["a1"] if passed["state"] == "resolved" else [])
