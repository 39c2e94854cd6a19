"""The MCP server as a host runs it: a subprocess on stdio, driven by the SDK's own client.

Starts ``python -m graphmem.integrations.mcp --store PATH --group G`` (the same server as
``graphmem mcp``), lists the tools and calls each one.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.integration

pytest.importorskip("mcp")

from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

from graphmem import GraphMemory  # noqa: E402


def _text(result: Any) -> str:
    return "".join(block.text for block in result.content)


async def _session(store: Path, errlog: Any) -> list[Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GRAPHMEM_", "OPENAI_"))}
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "graphmem.integrations.mcp", "--store", str(store), "--group", "maya",
              "--speaker", "Maya"],
        env=env,
    )
    async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(
        read, write
    ) as session:
        await session.initialize()
        listed = await session.list_tools()
        out: list[Any] = [listed]
        for name, args in [
            ("remember", {"text": "I live in Lisbon.", "reference_time": "2024-01-08"}),
            ("remember", {"text": "I moved to Porto.", "reference_time": "2024-03-01"}),
            ("recall", {"query": "Where does Maya live?"}),
            ("history", {"entity": "Maya"}),
            ("remember", {"text": "I live in Braga.", "speaker": "Leo"}),
            ("forget", {"entity": "Leo"}),
            ("remember", {"text": "I like tea.", "reference_time": "yesterday"}),
        ]:
            out.append(await asyncio.wait_for(session.call_tool(name, args), timeout=60))
        return out


def test_stdio_server_with_the_sdk_client(tmp_path: Path) -> None:
    store = tmp_path / "mcp.db"
    with (tmp_path / "server.log").open("w") as errlog:
        listed, *results = asyncio.run(asyncio.wait_for(_session(store, errlog), timeout=120))
    tools = {tool.name: tool for tool in listed.tools}
    assert set(tools) == {
        "remember", "recall", "history", "forget", "record_experience", "recall_experiences",
        "pin", "unpin", "feedback",
    }
    for tool in tools.values():
        assert tool.input_schema["type"] == "object" and tool.input_schema["properties"]
    lisbon, porto, recall, history, leo, forget, bad = results
    assert not any(r.is_error for r in (lisbon, porto, recall, history, leo, forget))
    assert _text(lisbon).startswith("Remembered episode ep_")
    assert "replaced (update): Maya lives in Lisbon. -> Maya lives in Porto." in _text(porto)
    assert "- Maya lives in Porto. [2024-03-01 → now]" in _text(recall)
    assert "replaced: Maya lives in Lisbon." in _text(recall)
    assert "(current)" in _text(history) and "(replaced: update)" in _text(history)
    assert _text(forget).startswith("Forgot entity Leo")
    assert bad.is_error and "is not a date" in _text(bad)
    # the server wrote to the store it was given, in its group, and stdout carried only MCP
    with GraphMemory(store) as memory:
        assert [f.statement for f in memory.facts(group_id="maya")] == ["Maya lives in Porto."]
