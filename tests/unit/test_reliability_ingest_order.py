"""The final graph must not depend on the order episodes arrive in (DESIGN.md §3).

Concurrent and resumed ingests only reproduce a sequential run if this holds, so the
reliability suite checks it on its own: shuffled corpora, and the small timelines where it
broke. Each permutation is ingested into its own group of one store (groups are isolated), so
the tests run on every store of the ``memory`` fixture.
"""

from __future__ import annotations

import itertools
import json
import random
from datetime import UTC, datetime

import pytest

from graphmem import GraphMemory
from tests.helpers.reliability import canonical, corpus, diff_canonical, ingest, per_group

pytestmark = pytest.mark.timeout(120)


def t(year: int) -> datetime:
    return datetime(year, 1, 1, tzinfo=UTC)


def timelines(
    mem: GraphMemory, predicate: str, steps: list[tuple[str, int]], label: str
) -> dict[str, list[tuple[int, ...]]]:
    """Ingest ``steps`` in every order, one group per order; group the orders by result."""
    results: dict[str, list[tuple[int, ...]]] = {}
    for number, order in enumerate(itertools.permutations(range(len(steps)))):
        group = f"{label}-{number}"
        for index in order:
            target, year = steps[index]
            mem.add_fact("Alice", predicate, target, valid_from=t(year), source=f"s{index}",
                         group_id=group)
        rows = sorted(
            (f.target, f.valid_from.year, f.valid_to.year if f.valid_to else None,
             f.expired_at is None)
            for f in mem.facts(group_id=group, include_history=True)
        )
        results.setdefault(repr(rows), []).append(order)
    return results


@pytest.mark.parametrize("seed", [11, 12])
def test_shuffled_corpus_gives_the_same_graph(memory: GraphMemory, seed: int) -> None:
    episodes = corpus(seed, 90)
    graphs = []
    for shuffle in range(3):
        group = f"order-{seed}-{shuffle}"
        order = [dict(e, group_id=group) for e in episodes]
        random.Random(seed * 10 + shuffle).shuffle(order)
        ingest(memory, order, bulk=45, chunk=10)
        graphs.append(per_group(memory, group))
    assert graphs[1] == graphs[0]
    assert graphs[2] == graphs[0]


def test_multi_valued_value_stated_again_later(memory: GraphMemory) -> None:
    """likes: jazz (2019), tea (2020), jazz again (2021) - one jazz fact from 2019 in any order.

    Was a bug: a late-arriving earlier statement only extended a later fact of the same value
    when no *other* value started in between, which matters for one-value predicates only.
    """
    results = timelines(memory, "likes", [("jazz", 2019), ("tea", 2020), ("jazz", 2021)], "mv")
    assert len(results) == 1, results
    (rows,) = results
    assert rows == repr([("jazz", 2019, None, True), ("tea", 2020, None, True)])


def test_multi_valued_list_from_structured_records(memory: GraphMemory) -> None:
    """A robot record listing two tags, logged three times, ingested newest first."""
    records = [
        (t(2024 + i), json.dumps({"episode": 7, "tags": ["grasp", "lift"], "attempt": i}))
        for i in range(3)
    ]
    for when, content in records:
        memory.add_episode(content, kind="json", reference_time=when, group_id="forward")
    for when, content in reversed(records):
        memory.add_episode(content, kind="json", reference_time=when, group_id="backward")
    assert per_group(memory, "forward") == per_group(memory, "backward")
    tags = sorted(
        (f.target, f.valid_from.year)
        for f in memory.facts(group_id="backward", include_history=True)
        if f.predicate == "tags"
    )
    assert tags == [("grasp", 2024), ("lift", 2024)]


def test_functional_value_that_returns_after_a_change(memory: GraphMemory) -> None:
    results = timelines(
        memory, "lives_in", [("Paris", 2019), ("Berlin", 2020), ("Paris", 2021)], "aba"
    )
    assert len(results) == 1, results
    (rows,) = results
    assert rows == repr(
        [("Berlin", 2020, 2021, True), ("Paris", 2019, 2020, True), ("Paris", 2021, None, True)]
    )


def test_shuffled_corpus_diff_is_readable(memory: GraphMemory) -> None:
    """The diff helper names what differs (used by the crash and concurrency tests)."""
    memory.add_fact("Alice", "lives_in", "Paris", valid_from=t(2020), group_id="a")
    memory.add_fact("Alice", "lives_in", "Rome", valid_from=t(2020), group_id="b")
    left = canonical(memory.export(group_id="a"))
    right = canonical(memory.export(group_id="b"))
    text = diff_canonical(left, right)
    assert "paris" in text and "rome" in text
