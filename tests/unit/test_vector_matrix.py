"""The SQLite store's in-memory vector matrix: one preallocated buffer, filled in place."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from graphmem import GraphMemory, HashEmbedder
from graphmem.store._vectors import VectorMatrix, quantize, to_blob


def unit(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms > 0, norms, 1)


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
    expected = unit(np.arange(5000 * 4, dtype=np.float32).reshape(5000, 4))
    assert np.allclose(matrix, expected, atol=1e-6)
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
    assert np.allclose(
        cache.matrix(), unit(np.arange(5000 * 2, dtype=np.float32).reshape(5000, 2)), atol=1e-6
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


def test_rows_are_unit_vectors_whatever_their_rounding() -> None:
    # A unit vector stored as int8 is a unit vector only up to its rounding; the matrix holds
    # the unit rows, so that a product is the cosine the Neo4j store's index gives.
    rng = np.random.default_rng(3)
    vectors = unit(rng.normal(size=(50, 384))).astype(np.float32)
    stored = np.stack([quantize(v) for v in vectors])
    assert np.abs(np.linalg.norm(stored, axis=1) - 1).max() > 1e-4  # the rounding is there
    cache = VectorMatrix(dim=384)
    cache.append([(i + 1, f"f{i}", to_blob(v)) for i, v in enumerate(vectors)])
    assert np.allclose(np.linalg.norm(cache.matrix(), axis=1), 1, atol=1e-6)
    assert np.allclose(cache.matrix(), unit(stored), atol=1e-6)
    # A zero row stays a zero row (no division by zero).
    cache.append([(51, "zero", np.zeros(384, dtype=np.float32).tobytes())])
    assert not cache.matrix()[-1].any()


class _Fixed:
    """Unit vectors drawn per text, seeded by the text (a fake model)."""

    name = "fixed"
    dim = 384

    def embed(self, texts: list[str]) -> np.ndarray:
        out = [np.random.default_rng(sum(map(ord, t))).normal(size=self.dim) for t in texts]
        return unit(np.stack(out)).astype(np.float32)


def test_sqlite_vector_scores_are_cosines(tmp_path: Path) -> None:
    embedder = _Fixed()
    with GraphMemory(tmp_path / "m.db", embedder=embedder) as mem:
        for i in range(20):
            mem.add_fact(f"robot{i}", "has_status", value=f"state {i}")
        statements = {f.id: f.statement for i in range(20) for f in mem.history(f"robot{i}")}
        (query,) = embedder.embed(["where is robot 3?"])
        hits = mem.store.vector_facts("default", query, 20)
        assert len(hits) == 20
        for fid, score in hits:
            row = quantize(embedder.embed([statements[fid]])[0])
            assert row is not None
            cosine = float(row @ query / np.linalg.norm(row))
            assert score == pytest.approx(cosine, abs=1e-5)
        assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
