"""`brain mcp` over a real stdio subprocess, driven by the MCP SDK's own client."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters


ROOT = Path(__file__).resolve().parents[2]
TOOLS = {"search", "context", "show", "cite", "links", "recent", "index"}


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("mcp") / "nadia"
    subprocess.run([sys.executable, "-m", "dream.cli", "demo", str(root)], check=True, capture_output=True, cwd=ROOT,
                   env={**os.environ, "DREAM_NOW": "2026-07-15T02:00:00Z"})
    return root


def _params(root: Path) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "brain.cli", "mcp", "--brain", str(root), "--embedder", "none"],
                                 cwd=str(ROOT), env={"PYTHONPATH": str(ROOT)})


def _text(result) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


async def _session(root: Path, calls: list[tuple[str, dict]]) -> tuple[set[str], list, str]:
    async with Client(_params(root), read_timeout_seconds=60) as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        results = [await client.call_tool(name, args) for name, args in calls]
        resource = await client.read_resource("brain://index")
    return tools, results, "".join(getattr(c, "text", "") for c in resource.contents)


def test_every_tool_answers_in_text_an_agent_can_use(demo: Path):
    calls = [("index", {}), ("search", {"query": "Kyoto workshop", "limit": 5}),
             ("context", {"question": "What does Nadia prefer for figures?", "budget": 800}),
             ("show", {"page": "nadia-rahman"}), ("cite", {"page": "nadia-rahman", "n": 1}),
             ("links", {"page": "nadia-rahman"}), ("recent", {"limit": 3})]
    tools, results, resource = anyio.run(_session, demo, calls)
    assert tools == TOOLS
    assert all(not r.is_error for r in results), [(_text(r)) for r in results if r.is_error]
    index, search, context, show, cite, links, recent = map(_text, results)
    assert index.startswith("# Index") and "[[nadia-rahman" in index and resource.startswith("# Index")
    assert search.startswith("1. ") and "Kyoto" in search
    assert "# Context" in context and "## Why each item is here" in context and "admitted ·" in context
    assert show.startswith("---\ntitle: Nadia Rahman")
    assert cite.startswith("session:") and "#t" in cite
    assert "## nadia-rahman links to" in links and "## Linking to nadia-rahman" in links
    assert "Dream" in recent


def test_bad_arguments_are_tool_errors_with_a_reason_and_the_server_goes_on(demo: Path):
    calls = [("show", {"page": "no-such-page"}), ("cite", {"page": "nadia-rahman", "n": 999}),
             ("search", {"query": "  "}), ("context", {"question": "x", "budget": 5}), ("show", {"page": "kyoto"})]
    _, results, _ = anyio.run(_session, demo, calls)
    assert [r.is_error for r in results] == [True, True, True, True, False]
    assert "no-such-page" in _text(results[0]) and "999" in _text(results[1])
    assert "non-empty query" in _text(results[2]) and "budget from 100" in _text(results[3])


def test_a_brain_that_changes_under_the_server_is_seen_on_the_next_call(demo: Path, tmp_path: Path):
    root = tmp_path / "copy"
    shutil.copytree(demo, root, symlinks=True)

    async def scenario() -> tuple[str, str, str, str]:
        async with Client(_params(root), read_timeout_seconds=60) as client:
            before = _text(await client.call_tool("show", {"page": "kyoto"}))
            found_before = _text(await client.call_tool("search", {"query": "zeppelin hangar"}))
            page = root / "knowledge/places/kyoto.md"
            page.write_text(page.read_text(encoding="utf-8") + "\nThe owner visited the zeppelin hangar.\n", encoding="utf-8")
            subprocess.run(["git", "-c", "user.name=O", "-c", "user.email=o@x", "commit", "-qam", "a line"], cwd=root, check=True)
            after = _text(await client.call_tool("show", {"page": "kyoto"}))
            found_after = _text(await client.call_tool("search", {"query": "zeppelin hangar"}))
        return before, after, found_before, found_after

    before, after, found_before, found_after = anyio.run(scenario)
    assert "zeppelin" not in before and "The owner visited the zeppelin hangar." in after
    assert "zeppelin" not in found_before and "knowledge/places/kyoto.md" in found_after
