"""``graphmem.integrations.MemoryToolkit``: the text-in, text-out operations behind the LangChain
and MCP tools, and the promise that ``import graphmem`` needs neither langchain nor mcp."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from graphmem import GraphMemory, HashEmbedder, InputError, NaiveDatetimeError
from graphmem.integrations import MemoryToolkit, parse_time


@pytest.fixture
def kit(tmp_path: Path) -> Iterator[MemoryToolkit]:
    with GraphMemory(tmp_path / "m.db", embedder=HashEmbedder(64)) as memory:
        yield MemoryToolkit(memory, group_id="g", speaker="Maya", k=5)


def test_parse_time() -> None:
    assert parse_time(None, "t") is None
    assert parse_time("  ", "t") is None
    assert parse_time("2024-05-01", "t") == datetime(2024, 5, 1, tzinfo=UTC)
    assert parse_time("2024-05-01T12:00:00+02:00", "t") == datetime(2024, 5, 1, 10, tzinfo=UTC)
    aware = datetime(2024, 5, 1, 12, tzinfo=timezone(timedelta(hours=2)))
    assert parse_time(aware, "t") == datetime(2024, 5, 1, 10, tzinfo=UTC)
    with pytest.raises(NaiveDatetimeError, match="reference_time"):
        parse_time("2024-05-01T10:00:00", "reference_time")
    with pytest.raises(InputError):
        parse_time(20240501, "t")  # type: ignore[arg-type]


def test_remember_reports_new_replaced_duplicate(kit: MemoryToolkit) -> None:
    first = kit.remember("I live in Lisbon and I prefer coffee.", reference_time="2024-01-08")
    assert first.startswith("Remembered episode ep_") and first.endswith("2 new facts.")
    assert kit.remember("I live in Lisbon and I prefer coffee.", reference_time="2024-01-08") == (
        first.split(":")[0].replace("Remembered episode", "Already remembered (episode")
        + "); nothing changed."
    )
    same = kit.remember("I live in Lisbon.", reference_time="2024-01-09")
    assert "0 new facts, 1 already known" in same
    moved = kit.remember("I moved to Porto.", reference_time="2024-03-01")
    assert moved.splitlines()[1] == (
        "- replaced (update): Maya lives in Lisbon. -> Maya lives in Porto."
    )
    other = kit.remember("I live in Braga.", speaker="Leo", reference_time="2024-03-01")
    assert "1 new fact" in other
    assert "Leo lives in Braga." in kit.recall("Where does Leo live?")


def test_remember_reports_conflicts(kit: MemoryToolkit) -> None:
    when = datetime(2024, 4, 2, tzinfo=UTC)
    kit.memory.add_fact("Leo", "lives_in", "Braga", group_id="g", valid_from=when)
    result = kit.memory.add_fact("Leo", "lives_in", "Porto", group_id="g", valid_from=when)
    assert kit.describe_ingest(result).splitlines()[1] == (
        "- CONFLICT: Leo lives in Porto. vs Leo lives in Braga. (unresolved)"
    )


def test_recall_as_of_and_k(kit: MemoryToolkit) -> None:
    kit.remember("I live in Lisbon.", reference_time="2024-01-08")
    kit.remember("I moved to Porto.", reference_time="2024-03-01")
    kit.remember("I like hiking, cooking and jazz.", reference_time="2024-03-02")
    now = kit.recall("Where does Maya live?")
    assert now.startswith("Memory for: Where does Maya live?")
    assert "- Maya lives in Porto. [2024-03-01 → now]" in now
    then = kit.recall("Where does Maya live?", as_of="2024-02-01")
    assert then.startswith("Memory as of 2024-02-01 for:")
    assert "Maya lives in Lisbon. [2024-01-08 → 2024-03-01]" in then
    one = kit.recall("Maya", k=1)
    assert len([line for line in one.splitlines() if line.startswith("- ")]) == 1
    before = kit.recall("Maya", known_at="2000-01-01")
    assert "(nothing relevant remembered)" in before


def test_history_marks_replaced_withdrawn_ended(kit: MemoryToolkit) -> None:
    kit.remember("I live in Lisbon.", reference_time="2024-01-08")
    kit.remember("I moved to Porto.", reference_time="2024-03-01")
    kit.remember("I prefer coffee.", reference_time="2024-01-08")
    kit.remember("Actually, I prefer tea, not coffee.", reference_time="2024-01-09")
    kit.remember("I work at Atlas Robotics.", reference_time="2024-01-08")
    kit.remember("I left Atlas Robotics.", reference_time="2024-06-01")
    lines = kit.history("Maya").splitlines()
    assert lines[0] == "History of Maya, oldest first:"
    assert "- [2024-01-08 → 2024-03-01] Maya lives in Lisbon. (replaced: update)" in lines
    assert "- [2024-03-01 → now] Maya lives in Porto. (current)" in lines
    withdrawn = next(line for line in lines if "Maya prefers coffee." in line)
    assert "(withdrawn on " in withdrawn and withdrawn.endswith(": correction)")
    ended = next(line for line in lines if "Atlas Robotics" in line)
    assert ended.startswith("- [2024-01-08 → 2024-06-01]") and "(ended" in ended
    assert kit.history("Maya", predicate="prefers").startswith("History of Maya (prefers)")
    assert kit.history("Nobody") == "Nothing remembered about Nobody."


def test_forget_episode_and_entity(kit: MemoryToolkit) -> None:
    said = kit.remember("I live in Lisbon.", reference_time="2024-01-08")
    episode = said.split()[2].rstrip(":")
    kit.remember("I live in Lisbon.", reference_time="2024-02-08")
    kept = kit.forget(episode_id=episode)
    assert kept.startswith(f"Forgot episode {episode}: 0 fact(s)")
    assert "1 episode(s) removed" in kept and "1 fact(s) kept" in kept
    kit.remember("I live in Braga.", speaker="Leo", reference_time="2024-01-08")
    gone = kit.forget(entity="Leo")
    assert gone.startswith("Forgot entity Leo: 1 fact(s)")
    assert "Leo lives" not in kit.recall("Where does Leo live?")
    with pytest.raises(InputError, match="exactly one"):
        kit.forget()
    with pytest.raises(InputError, match="exactly one"):
        kit.forget(episode_id=episode, entity="Maya")
    with pytest.raises(InputError, match="no entity"):
        kit.forget(entity="Nobody")


def test_remember_rejects_empty_text(kit: MemoryToolkit) -> None:
    with pytest.raises(InputError, match="non-empty"):
        kit.remember("   ")


@pytest.mark.integration
def test_import_graphmem_needs_neither_langchain_nor_mcp() -> None:
    code = (
        "import sys, graphmem, graphmem.integrations\n"
        "heavy = ('langchain_core', 'mcp', 'pandas', 'matplotlib')\n"
        "heavy = [m for m in heavy if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
