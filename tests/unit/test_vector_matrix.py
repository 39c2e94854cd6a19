"""The SQLite store's in-memory vector matrix: one preallocated buffer, filled in place."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from graphmem import GraphMemory, HashEmbedder
from graphmem.store._vectors import VectorMatrix


def rows(start: int, count: int, dim: int) -> list[tuple[int, str, bytes]]:
    data = np.arange(start * dim, (start + count) * dim, dtype=np.float32).reshape(count, dim)
    return [(start + i + 1, f"f{start + i}", data[i].tobytes()) for i in range(count)]


def test_appends_fill_the_reserved_buffer_in_place() -> None:
    cache = VectorMatrix(dim=4)
    cache.reserve(5000)
    buffer = cache.matrix().base
    cache.append(rows(0, 3000, 4))
    cache.append(rows(3000, 2000, 4))
    matrix = cache.matrix()
    assert matrix.shape == (5000, 4)
    assert matrix.base is buffer  # no copy was made while loading
    expected = np.arange(5000 * 4, dtype=np.float32).reshape(5000, 4)
    assert np.array_equal(matrix, expected)
    assert cache.ids[:2] == ["f0", "f1"] and len(cache.ids) == 5000
    assert cache.high_rowid == 5000


def test_growth_keeps_rows_and_earlier_views() -> None:
    cache = VectorMatrix(dim=2)
    cache.append(rows(0, 10, 2))
    before = cache.matrix()
    copy = before.copy()
    for start in range(10, 5000, 700):  # past the first capacity several times
        cache.append(rows(start, min(700, 5000 - start), 2))
    assert np.array_equal(before, copy)  # a view handed out earlier never changes
    assert np.array_equal(
        cache.matrix(), np.arange(5000 * 2, dtype=np.float32).reshape(5000, 2)
    )
    assert cache.matrix().shape[0] == len(cache.ids) == 5000


def test_empty_matrix() -> None:
    assert VectorMatrix(dim=8).matrix().shape == (0, 8)


def test_vector_search_sees_rows_added_after_the_first_load(tmp_path: Path) -> None:
    embedder = HashEmbedder(64)
    with GraphMemory(tmp_path / "m.db", embedder=embedder) as mem:
        for i in range(30):
            mem.add_fact(f"robot{i}", "has_status", value=f"state {i}")
        (probe,) = embedder.embed(["robot7 has status state 7."])
        assert mem.store.vector_facts("default", probe, 30)  # the first load
        mars = mem.add_fact("rover", "lives_in", "Mars")
        (query,) = embedder.embed(["rover lives in Mars."])
        ((best, score),) = mem.store.vector_facts("default", query, 1)
        (fact,) = mem.history("rover")
        assert mars.facts_added == 1 and best == fact.id and score > 0.99
