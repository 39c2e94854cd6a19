"""Experience memory on every surface: CLI, the agent toolkit, MCP and LangChain tools."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from graphmem import GraphMemory, HashEmbedder
from graphmem.cli import cli
from graphmem.integrations import MemoryToolkit


def _cli(store: Path, *args: str) -> Result:
    return CliRunner().invoke(
        cli, ["--store", str(store), "--group", "arm", *args], catch_exceptions=False
    )


def test_cli_add_and_recall(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    state = tmp_path / "state.json"
    state.write_text(json.dumps({"object": "red cube", "object_pos": [0.1, 0.2, 0.0]}))
    first = _cli(db, "experience", "add", "push the red cube", "--state", f"@{state}",
                 "--params", '{"force": 3.5}', "--success", "--run-id", "r1", "--episode", "1",
                 "--payload", '{"trajectory": [[0, 0], [0.1, 0.2]]}', "--meta", '{"seed": 4}')
    assert first.exit_code == 0, first.output
    assert first.output.startswith("recorded ep_")
    second = _cli(db, "experience", "add", "push the blue puck", "--state",
                  '{"object": "blue puck", "object_pos": [0.9, 0.9, 0.0]}',
                  "--params", '{"force": 2}', "--failure", "--json")
    assert json.loads(second.stdout)["status"] == "extracted"
    table = _cli(db, "experience", "recall", "red cube", "--state",
                 '{"object_pos": [0.1, 0.2, 0.0]}', "-k", "1")
    assert table.exit_code == 0, table.output
    assert "[success] push the red cube" in table.output and "blue" not in table.output
    assert '"force": 3.5' in table.output
    found = json.loads(_cli(db, "experience", "recall", "--filter", "params.force<3",
                            "--json").stdout)
    assert [e["task"] for e in found] == ["push the blue puck"]
    assert found[0]["payload"] is None
    with_payload = json.loads(_cli(db, "experience", "recall", "--filter", "meta.seed=4",
                                   "--payload", "--json").stdout)
    assert with_payload[0]["payload"] == {"trajectory": [[0, 0], [0.1, 0.2]]}
    only = json.loads(_cli(db, "experience", "recall", "--outcome", "failure_only",
                           "--json").stdout)
    assert [e["success"] for e in only] == [False]
    # Another group sees nothing.
    other = CliRunner().invoke(cli, ["--store", str(db), "experience", "recall", "red cube"])
    assert "no experiences in group 'default'" in other.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["add", "t", "--state", "[1, 2]"], "must be a JSON object, got list"),
        (["add", "t", "--params", "{oops"], "is not valid JSON"),
        (["add", "t", "--state", "@/nonexistent/x.json"], "cannot read"),
        (["add", "", "--success"], "task must be a non-empty string"),
        (["recall", "--filter", "params.force~3"], "--filter"),
        (["recall", "--state", '{"pos": "far"}'], "list of numbers"),
    ],
)
def test_cli_bad_input_is_a_clear_error(tmp_path: Path, args: list[str], message: str) -> None:
    assert CliRunner().invoke(cli, ["--store", str(tmp_path / "m.db"), "init"]).exit_code == 0
    result = CliRunner().invoke(cli, ["--store", str(tmp_path / "m.db"), "experience", *args])
    assert result.exit_code == 2  # invalid input, in every command
    assert message in result.output
    assert "Traceback" not in result.output


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[GraphMemory]:
    with GraphMemory(tmp_path / "m.db", embedder=HashEmbedder(64)) as mem:
        yield mem


def test_toolkit_record_and_recall(memory: GraphMemory) -> None:
    kit = MemoryToolkit(memory, group_id="arm")
    said = kit.record_experience(
        "push the red cube",
        state='{"object": "red cube", "object_pos": [0.1, 0.2, 0.0]}',  # JSON text is fine
        params={"force": 3.5},
        success=True,
        run_id="r1",
        episode=1,
    )
    assert said.startswith("Recorded experience ep_") and "2 new fact(s)" in said
    # The same attempt again is a second attempt (its facts are already known).
    again = kit.record_experience("push the red cube", state={"object": "red cube",
                                  "object_pos": [0.1, 0.2, 0.0]}, params={"force": 3.5},
                                  success=True, run_id="r1", episode=1)
    assert again.startswith("Recorded experience") and "0 new fact(s)" in again
    kit.record_experience("push the blue puck", params={"force": 1.0}, success=False)
    text = kit.recall_experiences("red cube", state={"object_pos": [0.1, 0.2, 0.0]}, k=2)
    lines = text.splitlines()
    assert lines[0] == "2 past attempt(s), best match first:"  # k=2: both red-cube attempts
    assert lines[1].startswith("1. [success] push the red cube (run r1 episode 1,")
    assert 'params: {"force": 3.5}' in text
    assert "[failure] push the blue puck" in kit.recall_experiences("puck", k=1)
    assert kit.recall_experiences("cube", filters={"state.object": "green"}) == (
        "No past attempts found."
    )
    from graphmem import InputError

    with pytest.raises(InputError, match="outcome must be one of"):
        kit.recall_experiences("cube", outcome="best")
    with pytest.raises(InputError, match="state is not valid JSON"):
        kit.record_experience("x", state="{nope")


def test_mcp_tools(memory: GraphMemory) -> None:
    pytest.importorskip("mcp")
    from mcp import Client

    from graphmem.integrations import mcp as graphmem_mcp

    server = graphmem_mcp.build_server(memory, group_id="arm")

    async def go() -> tuple[dict[str, Any], str, str, Any]:
        async with Client(server) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            stored = await client.call_tool(
                "record_experience",
                {"task": "push the red cube", "state": {"object_pos": [0.1, 0.2, 0.0]},
                 "params": {"force": 3.5}, "success": True, "run_id": "r1", "episode": 1},
            )
            found = await client.call_tool(
                "recall_experiences", {"query": "red cube", "state": {"object_pos": [0, 0, 0]}}
            )
            bad = await client.call_tool("recall_experiences", {"state": {"pos": "far"}})
            return tools, stored.content[0].text, found.content[0].text, bad

    tools, stored, found, bad = asyncio.run(go())
    assert {"record_experience", "recall_experiences"} <= set(tools)
    assert tools["record_experience"].input_schema["required"] == ["task"]
    recall_schema = tools["recall_experiences"].input_schema["properties"]
    assert recall_schema["outcome"]["enum"] == [
        "any", "success_first", "success_only", "failure_only"
    ]
    assert tools["recall_experiences"].annotations.read_only_hint is True
    assert stored.startswith("Recorded experience")
    assert "1. [success] push the red cube" in found
    assert bad.is_error and "list of numbers" in bad.content[0].text


def test_langchain_tools(memory: GraphMemory) -> None:
    pytest.importorskip("langchain_core")
    from graphmem.integrations.langchain import make_experience_tools

    record, recall = make_experience_tools(memory, group_id="arm")
    assert (record.name, recall.name) == ("record_experience", "recall_experiences")
    out = record.invoke({"task": "pour water", "params": {"angle": 30}, "success": True})
    assert out.startswith("Recorded experience")
    assert "1. [success] pour water" in recall.invoke({"query": "pour"})
    assert "outcome" in recall.args and recall.args["k"]["maximum"] == 50
    error = recall.invoke({"query": "pour", "filters": {"params.angle": {"$near": 1}}})
    assert "unknown operator" in error  # an argument error is the tool's answer
    assert "1. [success]" in asyncio.run(recall.ainvoke({"query": "pour"}))
