"""The MCP server, in-process through the SDK's own client: tool list, JSON schemas, answers."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

pytest.importorskip("mcp")

from mcp import Client

from graphmem import ConfigError, GraphMemory, HashEmbedder
from graphmem.integrations import mcp as graphmem_mcp

T = TypeVar("T")


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[GraphMemory]:
    with GraphMemory(tmp_path / "m.db", embedder=HashEmbedder(64)) as mem:
        yield mem


def _with_client(memory: GraphMemory, body: Callable[[Client], Awaitable[T]], **kw: Any) -> T:
    server = graphmem_mcp.build_server(memory, group_id="maya", **kw)

    async def go() -> T:
        async with Client(server) as client:
            return await body(client)

    return asyncio.run(go())


def _text(result: Any) -> str:
    return "".join(block.text for block in result.content)


def test_tools_and_schemas(memory: GraphMemory) -> None:
    async def body(client: Client) -> Any:
        return (await client.list_tools()).tools

    tools = {tool.name: tool for tool in _with_client(memory, body)}
    assert set(tools) == {
        "remember", "recall", "history", "forget", "record_experience", "recall_experiences",
        "pin", "unpin", "feedback",
    }
    remember = tools["remember"].input_schema
    assert remember["type"] == "object" and remember["required"] == ["text"]
    assert set(remember["properties"]) == {"text", "speaker", "reference_time"}
    assert remember["properties"]["text"]["type"] == "string"
    recall = tools["recall"].input_schema
    assert recall["required"] == ["query"]
    assert recall["properties"]["k"] == {
        "default": 8, "description": "How many facts at most.", "maximum": 100, "minimum": 1,
        "title": "K", "type": "integer",
    }
    assert tools["history"].input_schema["required"] == ["entity"]
    assert "required" not in tools["forget"].input_schema
    assert tools["recall"].annotations.read_only_hint is True
    assert tools["forget"].annotations.destructive_hint is True
    assert all(tool.description for tool in tools.values())


def test_call_each_tool(memory: GraphMemory) -> None:
    async def body(client: Client) -> list[Any]:
        calls = [
            ("remember", {"text": "I live in Lisbon.", "reference_time": "2024-01-08"}),
            ("remember", {"text": "I moved to Porto.", "reference_time": "2024-03-01T09:00:00Z"}),
            ("remember", {"text": "I live in Braga.", "speaker": "Leo"}),
            ("recall", {"query": "Where does Maya live?", "k": 3}),
            ("recall", {"query": "Where does Maya live?", "as_of": "2024-02-01"}),
            ("history", {"entity": "Maya", "predicate": "lives_in"}),
            ("forget", {"entity": "Leo"}),
            ("recall", {"query": "Braga"}),
        ]
        return [await client.call_tool(name, args) for name, args in calls]

    results = _with_client(memory, body, speaker="Maya")
    assert not any(r.is_error for r in results)
    texts = [_text(r) for r in results]
    assert texts[0].startswith("Remembered episode ep_") and "1 new fact" in texts[0]
    assert "- replaced (update): Maya lives in Lisbon. -> Maya lives in Porto." in texts[1]
    assert "1 new fact" in texts[2]
    assert "- Maya lives in Porto. [2024-03-01 → now]" in texts[3]
    assert "replaced: Maya lives in Lisbon." in texts[3]
    assert "Maya lives in Lisbon. [2024-01-08 → 2024-03-01]" in texts[4]
    assert texts[5].splitlines()[1:] == [
        "- [2024-01-08 → 2024-03-01] Maya lives in Lisbon. (replaced: update)",
        "- [2024-03-01 → now] Maya lives in Porto. (current)",
    ]
    assert texts[6].startswith("Forgot entity Leo: 1 fact(s)")
    assert "Leo lives in Braga." not in texts[7]
    # the group is the server's: nothing leaked into "default"
    assert memory.facts(group_id="default") == []


def test_errors_are_tool_errors_not_crashes(memory: GraphMemory) -> None:
    async def body(client: Client) -> list[Any]:
        return [
            await client.call_tool("remember", {"text": "I like tea.",
                                                "reference_time": "2024-01-01T10:00"}),
            await client.call_tool("forget", {}),
            await client.call_tool("recall", {"query": "tea", "k": 0}),
            await client.call_tool("history", {"entity": "Maya"}),
        ]

    naive, forget, bad_k, ok = _with_client(memory, body)
    assert naive.is_error and "no timezone" in _text(naive)
    assert forget.is_error and "exactly one of episode_id or entity" in _text(forget)
    assert bad_k.is_error
    assert not ok.is_error and _text(ok) == "Nothing remembered about Maya."


def test_missing_sdk_is_a_config_error(
    monkeypatch: pytest.MonkeyPatch, memory: GraphMemory
) -> None:
    import builtins

    real_import = builtins.__import__

    def fake_import(name: str, *args: Any, **kwargs: Any) -> Any:
        if name.startswith("mcp"):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    with pytest.raises(ConfigError, match=r"pip install 'graphmem\[mcp\]'"):
        graphmem_mcp.build_server(memory)


def test_main_reports_a_bad_store(capsys: pytest.CaptureFixture[str]) -> None:
    assert graphmem_mcp.main(["--store", "nosuch://x"]) == 1
    assert "graphmem mcp: error:" in capsys.readouterr().err


def test_docs_and_command_line_help_name_every_tool_the_server_serves(
    memory: GraphMemory,
) -> None:
    """docs/mcp.md's tool table, ``graphmem mcp --help`` and the server agree, in order."""
    import re

    from click.testing import CliRunner

    from graphmem.cli import cli

    async def body(client: Client) -> Any:
        return (await client.list_tools()).tools

    served = [tool.name for tool in _with_client(memory, body)]
    docs = (Path(__file__).resolve().parents[2] / "docs" / "mcp.md").read_text()
    table = docs.split("## Tools", 1)[1].split("\n\n## ", 1)[0]
    documented = re.findall(r"^\| `(\w+)` \|", table, flags=re.MULTILINE)
    assert documented == served
    help_text = " ".join(CliRunner().invoke(cli, ["mcp", "--help"]).output.split())
    listed = help_text.split("Tools: ", 1)[1].split(".", 1)[0]
    assert [name.strip() for name in listed.split(",")] == served
    module_doc = graphmem_mcp.__doc__ or ""
    assert [name for name in served if f"``{name}(" not in module_doc] == []
