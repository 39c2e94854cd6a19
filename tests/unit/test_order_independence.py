"""One believed timeline whatever the arrival order (docs/temporal.md, "Arrival order").

For any arrival order of the same episodes, what memory believes once all have arrived (the
unexpired facts with their valid time; facts at any ``as_of``) is identical. Negations,
corrections, kinship corrections, re-affirmations and manager returns apply by the times the
episodes state. Each order is ingested into its own group of one store (groups are isolated and
ties break by content hash, which is the same in every group), so the tests run on every store
of the ``memory`` fixture (SQLite; Bolt when configured).
"""

from __future__ import annotations

import itertools
import random
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphmem import GraphMemory, HashEmbedder
from tests.helpers.histories import believed, chat_turns, fact_steps, timeline_at

pytestmark = pytest.mark.timeout(600)

_groups = itertools.count()


def t(month: int, day: int = 1) -> datetime:
    return datetime(2024, month, day, tzinfo=UTC)


def _say(mem: GraphMemory, group: str, turns: list[tuple[str, datetime]]) -> None:
    for content, when in turns:
        mem.add_episode(content, reference_time=when, metadata={"speaker": "Ana"}, group_id=group)


def _orders(mem: GraphMemory, turns: list[tuple[str, datetime]], label: str) -> set[Any]:
    seen = set()
    for order in itertools.permutations(turns):
        group = f"{label}-{next(_groups)}"
        _say(mem, group, list(order))
        seen.add((believed(mem, group), timeline_at(mem, group, t(2, 15))))
    return seen


def _times(facts: tuple[tuple[Any, ...], ...]) -> list[tuple[Any, ...]]:
    return [row[:5] for row in facts]


# ---------------------------------------------------------------- the reported reproductions
def test_a_negation_that_arrives_first_still_ends_the_fact(memory: GraphMemory) -> None:
    """ "I no longer live in Lisbon" (February) before "I live in Lisbon" (January): the
    negation was lost and Lisbon stayed current."""
    turns = [("I live in Lisbon.", t(1)), ("I no longer live in Lisbon.", t(2))]
    results = _orders(memory, turns, "neg")
    assert len(results) == 1, results
    ((facts, mid_february),) = results
    assert _times(facts) == [("Ana", "lives_in", "Lisbon", t(1).isoformat(), t(2).isoformat())]
    assert mid_february == ()
    assert [f.target for f in memory.facts(group_id=f"neg-{next(_groups) - 1}")] == []


def test_a_negation_alone_leaves_nothing_to_read(memory: GraphMemory) -> None:
    """Kept (on a placeholder) for a statement that may arrive later, but never read back."""
    _say(memory, "alone", [("I no longer live in Lisbon.", t(2))])
    assert memory.facts(group_id="alone") == []
    assert memory.facts(group_id="alone", include_history=True) == []
    assert memory.history("Ana", group_id="alone") == []
    graph = memory.to_networkx(group_id="alone", include_history=True)
    assert [n for n, data in graph.nodes(data=True) if data.get("kind") == "Fact"] == []


def test_three_corrections_give_one_answer_in_all_six_orders(memory: GraphMemory) -> None:
    turns = [
        ("I prefer coffee.", t(1)),
        ("Actually, I prefer tea.", t(2)),
        ("Actually, I prefer juice.", t(3)),
    ]
    results = _orders(memory, turns, "corr")
    assert len(results) == 1, results
    ((facts, mid_february),) = results
    # Each correction applies to what was stated before it: juice replaced tea, which
    # replaced coffee ("it was never coffee"), so juice holds from January.
    assert _times(facts) == [("Ana", "prefers", "juice", t(1).isoformat(), None)]
    assert mid_february == (("Ana", "prefers", "juice"),)


def test_generated_chat_in_order_shuffled_and_reversed(memory: GraphMemory) -> None:
    """The third reproduction, scaled down (it was 3,000 turns: 29 of 195 current functional
    facts differed): the same turns in order, shuffled and reversed."""
    turns = chat_turns(3, 150 if memory.store.url.startswith("sqlite") else 60)
    ordered = sorted(turns, key=lambda e: e["reference_time"])
    shuffled = list(turns)
    random.Random(5).shuffle(shuffled)
    graphs = []
    for label, order in (("in", ordered), ("shuffled", shuffled), ("rev", ordered[::-1])):
        group = f"chat-{label}"
        memory.add_episodes([dict(e, group_id=group) for e in order[: len(order) // 2]])
        for episode in order[len(order) // 2 :]:
            memory.add_episode(**episode, group_id=group)
        graphs.append((believed(memory, group), timeline_at(memory, group, t(1, 3))))
    assert graphs[1] == graphs[0]
    assert graphs[2] == graphs[0]


# ---------------------------------------------------------------- scenarios by name
SCENARIOS = {
    "negation then re-affirmation": [
        ("I live in Ghent.", t(1)),
        ("I no longer live in Ghent.", t(2)),
        ("I live in Ghent again.", t(3)),
    ],
    "negated employer": [("I work at Kelmor.", t(1)), ("I don't work at Kelmor anymore.", t(2))],
    "job change then negation": [
        ("I work at Kelmor.", t(1)),
        ("I work at Ostavel.", t(2)),
        ("I don't work at Ostavel anymore.", t(3)),
    ],
    "kinship correction": [
        ("Maya is my sister.", t(1)),
        ("Maya is my cousin, not my sister.", t(2)),
    ],
    "manager returns": [
        ("Rui is my manager.", t(1)),
        ("Marta is my manager.", t(2)),
        ("Rui is my manager again.", t(3)),
    ],
    "correction chain with a value": [
        ("I live in Porto.", t(1)),
        ("I live in Braga, not Porto.", t(2)),
        ("I moved to Lisbon.", t(3)),
    ],
}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_named_scenarios_give_one_timeline(memory: GraphMemory, name: str) -> None:
    results = _orders(memory, SCENARIOS[name], name.replace(" ", "_"))
    assert len(results) == 1, results


def test_negation_then_re_affirmation_timeline(memory: GraphMemory) -> None:
    results = _orders(memory, SCENARIOS["negation then re-affirmation"], "ghent")
    ((facts, _),) = results
    assert _times(facts) == [
        ("Ana", "lives_in", "Ghent", t(1).isoformat(), t(2).isoformat()),
        ("Ana", "lives_in", "Ghent", t(3).isoformat(), None),
    ]


# ---------------------------------------------------------------- generated histories
def _store_budget(memory: GraphMemory) -> int:
    return 25 if memory.store.url.startswith("sqlite") else 6


@given(data=st.data())
@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_generated_fact_histories_in_random_orders(memory: GraphMemory, data: Any) -> None:
    """``add_fact`` statements, negations, corrections and kinship changes with random stated
    times (ties included), ingested in three random orders."""
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    if seed % 25 >= _store_budget(memory):
        return
    rng = random.Random(seed)
    steps = fact_steps(rng, data.draw(st.integers(2, 7), label="steps"))
    seen = set()
    for _ in range(3):
        order = list(steps)
        rng.shuffle(order)
        group = f"facts-{next(_groups)}"
        for step in order:
            memory.add_fact(**step, group_id=group)
        seen.add(believed(memory, group))
    assert len(seen) == 1, (steps, seen)


@given(data=st.data())
@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_generated_chat_histories_in_random_orders(memory: GraphMemory, data: Any) -> None:
    """Chat turns through the rules extractor: statements, negations, "actually",
    "X, not Y", "again", kinship corrections and manager changes, in three random orders."""
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    if seed % 25 >= _store_budget(memory):
        return
    turns = chat_turns(seed, data.draw(st.integers(2, 8), label="turns"), days=4)
    rng = random.Random(seed)
    seen = set()
    for _ in range(3):
        order = list(turns)
        rng.shuffle(order)
        group = f"chat-{next(_groups)}"
        for turn in order:
            memory.add_episode(**turn, group_id=group)
        seen.add((believed(memory, group), timeline_at(memory, group, t(1, 3))))
    assert len(seen) == 1, ([(e["content"], e["reference_time"]) for e in turns], seen)


def test_a_kept_negation_survives_export_and_import(memory: GraphMemory, tmp_path: Any) -> None:
    """The placeholder that keeps a negation travels with the export: the statement it ends,
    arriving after the import, is still ended."""
    _say(memory, "src", [("I no longer live in Lisbon.", t(2))])
    rows = list(memory.export(group_id="src"))
    with GraphMemory(f"{tmp_path}/copy.db", embedder=HashEmbedder(64)) as copy:
        copy.import_rows(rows)
        _say(copy, "src", [("I live in Lisbon.", t(1))])
        assert copy.facts(group_id="src") == []
        (fact,) = copy.facts(group_id="src", as_of=t(1, 15))
        assert fact.target == "Lisbon"


class _FailsSome:
    """The rules extractor, except that it fails the turns named in ``failing`` (the fault is
    gone when ``reprocess`` runs with the plain rules extractor)."""

    name = "flaky"
    needs_context = False

    def __init__(self, failing: set[str]) -> None:
        from graphmem.extract.rules.extractor import RulesExtractor

        self.failing = failing
        self.rules = RulesExtractor()

    def extract(self, episode: Any, context: Any) -> Any:
        from graphmem import ExtractionError

        if episode.content in self.failing:
            raise ExtractionError("flaky")
        return self.rules.extract(episode, context)


def test_reprocess_reconciles_by_stated_order(memory: GraphMemory) -> None:
    """Episodes that failed and are reprocessed later (arriving after what they preceded)
    give the timeline an in-order ingest gives."""
    turns = [
        ("I live in Lisbon.", t(1)),
        ("I no longer live in Lisbon.", t(2)),
        ("I prefer coffee.", t(1)),
        ("Actually, I prefer tea.", t(2)),
        ("Maya is my sister.", t(1)),
        ("Maya is my cousin, not my sister.", t(3)),
    ]
    _say(memory, "in-order", sorted(turns, key=lambda turn: turn[1]))
    flaky = _FailsSome({"I live in Lisbon.", "I prefer coffee.", "Maya is my sister."})
    for content, when in turns:
        memory.add_episode(
            content,
            reference_time=when,
            metadata={"speaker": "Ana"},
            group_id="retried",
            extractor=flaky,
        )
    assert memory.stats(group_id="retried")["episodes_failed"] == 3
    assert all(
        r.status == "extracted" for r in memory.reprocess(group_id="retried", extractor="rules")
    )
    assert believed(memory, "retried") == believed(memory, "in-order")
