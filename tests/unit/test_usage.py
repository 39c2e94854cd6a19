"""Pinned facts, usage feedback and the forgetting curve (issue 16) on SQLite; the same
scenarios run on Bolt in tests/integration/test_neo4j_usage.py."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from graphmem import GraphMemory, HashEmbedder, InputError, RetrievalConfig
from graphmem.cli.app import cli
from graphmem.integrations import MemoryToolkit
from tests.helpers import usage_scenarios as s

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[GraphMemory]:
    with GraphMemory(tmp_path / "m.db", embedder=HashEmbedder(64),
                     predicates=s.PREDICATES) as mem:
        yield mem


def test_pins_follow_the_timeline(memory: GraphMemory) -> None:
    s.pins_follow_the_timeline(memory, "g")


def test_usage_episodes_are_bookkeeping(memory: GraphMemory) -> None:
    s.usage_episodes_are_bookkeeping(memory, "g")


def test_feedback_and_decay_change_rank_not_truth(memory: GraphMemory) -> None:
    s.feedback_and_decay_change_rank_not_truth(memory, "g")


def test_pins_survive_export_and_import(memory: GraphMemory, tmp_path: Path) -> None:
    with GraphMemory(tmp_path / "copy.db", embedder=HashEmbedder(64)) as target:
        s.pins_survive_export_and_import(memory, "g", target)


def test_a_forgotten_fact_leaves_no_pin(memory: GraphMemory) -> None:
    result = memory.add_fact("Alice", "likes", "tea", group_id="g", pinned=True)
    assert len(memory.pins("g")) == 1
    memory.forget(group_id="g", episode_id=result.episode_id)
    assert memory.pins("g") == []
    assert memory.recall("tea", group_id="g").pinned == []


def test_ended_pin_says_so(memory: GraphMemory) -> None:
    memory.add_fact("Alice", "likes", "tea", group_id="g", valid_from=s.T, pinned=True)
    memory.add_fact("Alice", "likes", "tea", group_id="g", negated=True,
                    valid_from=s.T + s.timedelta(days=5))
    assert "- Alice likes tea. (no longer true)" in memory.recall("x", group_id="g").to_context()


@pytest.mark.parametrize(
    ("field", "value"),
    [("feedback_weight", 2), ("decay_half_life", 0), ("decay_floor", -1),
     ("min_relative_score", 1.5), ("pinned_limit", -1)],
)
def test_bad_usage_settings_are_input_errors(tmp_path: Path, field: str, value: float) -> None:
    config = RetrievalConfig(**{field: value})
    with GraphMemory(tmp_path / "m.db", retrieval=config) as mem, pytest.raises(
        InputError, match=field
    ):
        mem.recall("anything")


def test_cli_pin_unpin_pins_feedback(tmp_path: Path) -> None:
    db = str(tmp_path / "c.db")
    with GraphMemory(db) as mem:
        fact_id = mem.add_fact("Alice", "lives_in", "Paris").episode_id
        fact_id = mem.facts()[0].id
    run = CliRunner().invoke
    out = run(cli, ["--store", db, "pin", fact_id])
    assert out.exit_code == 0 and "pinned: Alice lives in Paris." in out.output
    assert "Alice lives in Paris." in run(cli, ["--store", db, "pins"]).output
    assert "pinned:" in run(cli, ["--store", db, "recall", "unrelated"]).output
    out = run(cli, ["--store", db, "feedback", fact_id, "--not-useful", "--note", "stale"])
    assert out.exit_code == 0 and "not useful" in out.output
    assert run(cli, ["--store", db, "unpin", fact_id]).output.startswith("unpinned")
    assert "no pinned facts" in run(cli, ["--store", db, "pins"]).output
    bad = run(cli, ["--store", db, "pin", "fact_nope"])
    assert bad.exit_code != 0 and "no fact 'fact_nope'" in bad.output
    assert run(cli, ["--store", db, "feedback", fact_id]).exit_code == 2  # --useful needed


def test_toolkit_pin_rule_and_feedback_by_statement(memory: GraphMemory) -> None:
    kit = MemoryToolkit(memory, group_id="g", speaker="Maya")
    kit.remember("I live in Lisbon.")
    assert kit.pin(rule="Never force-push to main.").startswith("Pinned the rule")
    context = kit.recall("anything at all")
    assert context.startswith("Standing rules (pinned):\n- Never force-push to main.")
    line = next(x for x in kit.recall("Where does Maya live?").splitlines() if "Lisbon" in x)
    assert kit.feedback(line, True).startswith("Noted: fact_")
    assert kit.pin(line).startswith("Pinned: Maya lives in Lisbon")
    assert "Unpinned" in kit.unpin(line)
    with pytest.raises(InputError, match="no current fact"):
        kit.feedback("Maya lives on the Moon.", False)
    with pytest.raises(InputError, match="exactly one"):
        kit.pin()


def test_memory_usage_doc_snippet_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = (ROOT / "docs" / "memory-usage.md").read_text(encoding="utf-8")
    code = re.findall(r"```python\n(.*?)```", text, re.S)[0]
    monkeypatch.chdir(tmp_path)
    scope: dict[str, object] = {}
    exec(compile(code, "memory-usage.md", "exec"), scope)  # the asserts in it must hold


class _ContextRecorder:
    """An extractor that wants context (as the LLM extractor does) and keeps what it got."""

    name = "recorder"
    needs_context = True

    def __init__(self) -> None:
        self.previous: list[str] = []

    def extract(self, episode: object, context: object) -> object:
        from graphmem._models import Extraction

        self.previous = [p.kind for p in context.previous]  # type: ignore[attr-defined]
        return Extraction()


def test_pins_and_feedback_are_never_extraction_context(memory: GraphMemory) -> None:
    first = memory.add_episode("I live in Porto.")  # no source, like the pin below
    fact = memory.facts()[0]
    memory.pin(fact.id)
    memory.feedback(first.episode_id, True)
    recorder = _ContextRecorder()
    memory.add_episode("I still live in Porto.", extractor=recorder)  # type: ignore[arg-type]
    assert recorder.previous == ["message"]
