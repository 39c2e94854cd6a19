"""``examples/agent_loop.py``: offline, deterministic, and memory visibly changes across turns."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

pytest.importorskip("langchain_core")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "agent_loop.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("graphmem_example_agent_loop", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _turns(output: str) -> dict[int, str]:
    blocks = output.split("\n=== turn ")[1:]
    return {int(block.split(" ", 1)[0]): block for block in blocks}


def test_agent_loop_shows_memory_changing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    example = _load()
    example.main(["--store", str(tmp_path / "agent.db")])
    output = capsys.readouterr().out
    turns = _turns(output)
    assert sorted(turns) == [1, 2, 3, 4, 5]
    assert "(nothing relevant remembered)" in turns[1]
    # turn 2 recalls what turn 1 stated
    assert "- Maya prefers coffee. [2024-01-08 → now]" in turns[2]
    assert "- Maya lives in Lisbon. [2024-01-08 → now]" in turns[2]
    # the correction and the move, as the remember tool reports them
    assert "replaced (correction): Maya prefers coffee. -> Maya prefers tea." in turns[3]
    assert "replaced (update): Maya lives in Lisbon. -> Maya lives in Porto." in turns[4]
    # the last turn answers from the new address, with the replaced one marked
    last = turns[5].split("assistant:")[0]
    assert "- Maya lives in Porto. [2024-02-13 → now]" in last
    assert "replaced: Maya lives in Lisbon. [2024-01-08 → 2024-02-13, update]" in last
    assert "- Maya prefers tea." in last and "replaced: Maya prefers coffee." in last
    assert "assistant: You live in Porto now" in turns[5]
    assert "- [2024-01-08 → 2024-02-13] Maya lives in Lisbon. (replaced: update)" in output
    assert "- [2024-02-13 → now] Maya lives in Porto. (current)" in output


def test_agent_loop_is_deterministic(capsys: pytest.CaptureFixture[str]) -> None:
    example = _load()
    example.main([])
    first = capsys.readouterr().out
    example.main([])
    assert capsys.readouterr().out == first
