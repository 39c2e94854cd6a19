"""Cost at rest (issue 14, item 10): embeddings stored compactly (int8 with a per-vector scale,
sparse when smaller; float16 on request), stores written before (raw float32 blobs) still read,
and a default store's size budget on a fixed corpus."""

from __future__ import annotations

import json
import sqlite3
import struct
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import graphmem.store._vectors as vectors
from graphmem import GraphMemory, HashEmbedder
from graphmem.store._vectors import (
    FORMATS,
    Format,
    blob_dim,
    decode_rows,
    from_blob,
    quantize,
    to_blob,
)

ROOT = Path(__file__).resolve().parents[2]
RNG_SEED = 14


def unit_rows(n: int, dim: int, seed: int = RNG_SEED) -> np.ndarray:
    rows = np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    return rows


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


@pytest.fixture
def forced(request: pytest.FixtureRequest) -> Iterator[None]:
    """Stores written inside the test use the format given by ``request.param``."""
    saved = vectors.DEFAULT_FORMAT
    vectors.DEFAULT_FORMAT = request.param
    try:
        yield
    finally:
        vectors.DEFAULT_FORMAT = saved


# ------------------------------------------------------------------------------ blob formats
@pytest.mark.parametrize("dim", [1, 7, 8, 64, 384, 1536])
@pytest.mark.parametrize("fmt", FORMATS)
def test_round_trip_of_each_format(fmt: Format, dim: int) -> None:
    for v in unit_rows(20, dim):
        blob = to_blob(v, fmt)
        assert blob is not None and blob_dim(blob) == dim
        back = from_blob(blob)
        assert back is not None and back.dtype == np.float32 and back.shape == (dim,)
        if fmt == "float32":
            assert len(blob) == 4 * dim and np.array_equal(back, v)
        elif fmt == "float16":
            assert len(blob) == 6 + 2 * dim
            assert np.allclose(back, v, atol=1e-3) and cosine(back, v) > 0.99999
        else:
            assert len(blob) <= 10 + dim  # dense int8, or sparse when smaller
            assert np.abs(back - v).max() <= np.abs(v).max() / 254 + 1e-7  # half a step
            assert cosine(back, v) > 0.9999 if dim >= 64 else cosine(back, v) > 0.999


def test_hashed_vectors_are_stored_sparse() -> None:
    """The default embedder's vectors have a few dozen non-zero slots: a bitmap and those."""
    embedder = HashEmbedder(384)
    (fact, turn) = embedder.embed(
        ["Maya lives in Porto.", "Hey Mel! I went to a support group yesterday, so powerful."]
    )
    for v in (fact, turn):
        blob = to_blob(v)
        assert blob is not None
        nnz = int(np.count_nonzero(v))
        assert blob[0] == vectors.SPARSE_INT8 and len(blob) == 10 + 48 + nnz
        assert np.array_equal(np.flatnonzero(from_blob(blob)), np.flatnonzero(v))
    assert len(to_blob(fact) or b"") < 100  # beside 1,536 bytes as float32
    (dense,) = unit_rows(1, 384)
    blob = to_blob(dense)
    assert blob is not None and blob[0] == vectors.INT8 and len(blob) == 394


@pytest.mark.parametrize("fmt", FORMATS)
def test_storing_a_stored_vector_again_changes_nothing(fmt: Format) -> None:
    """Export → import → export is exact: re-encoding a decoded vector gives the same bytes."""
    rows = np.vstack(
        [
            unit_rows(300, 384),
            np.zeros((2, 384), dtype=np.float32),
            HashEmbedder(384).embed([f"robot {i} grip force {i / 7:.3f}" for i in range(50)]),
            unit_rows(50, 384, seed=5) * 37.5,  # not unit vectors
        ]
    ).astype(np.float32)
    for v in rows:
        blob = to_blob(v, fmt)
        once = from_blob(blob)
        assert to_blob(once, fmt) == blob
        assert np.array_equal(quantize(once, fmt), once)


def test_vectors_no_compact_format_can_hold_stay_float32() -> None:
    nan = np.array([0.5, np.nan, 0.1], dtype=np.float32)
    huge = np.array([1e6, -3.0, 2.0], dtype=np.float32)
    for v, fmt in ((nan, "int8"), (nan, "float16"), (huge, "float16")):
        blob = to_blob(v, fmt)  # type: ignore[arg-type]
        assert blob == v.astype("<f4").tobytes()
        assert np.array_equal(from_blob(blob), v, equal_nan=True)
    zero = np.zeros(384, dtype=np.float32)
    for fmt in FORMATS:
        assert np.array_equal(from_blob(to_blob(zero, fmt)), zero)
    assert to_blob(None) is None and from_blob(None) is None
    with pytest.raises(ValueError, match="unknown embedding format"):
        to_blob(zero, "int4")  # type: ignore[arg-type]


def test_old_float32_blobs_still_read() -> None:
    """Every store before compact blobs holds the raw little-endian floats: read as before."""
    v = unit_rows(1, 384)[0]
    old = v.astype("<f4").tobytes()
    assert blob_dim(old) == 384 and np.array_equal(from_blob(old), v)
    matrix, keep = decode_rows([old, old], 384)
    assert keep.all() and np.array_equal(matrix, np.vstack([v, v]))


def test_decode_rows_mixes_formats_and_leaves_out_other_dimensions() -> None:
    rows = unit_rows(12, 384)
    hashed = HashEmbedder(384).embed([f"turn {i} about the red mug" for i in range(6)])
    blobs: list[bytes] = []
    for i, v in enumerate(np.vstack([rows, hashed])):
        blobs.append(to_blob(v, FORMATS[i % 3]) or b"")
    expected = np.vstack([from_blob(b) for b in blobs])
    other = to_blob(unit_rows(1, 64)[0]) or b""
    cut = blobs[2][:-1]  # a damaged int8 blob (one byte short)
    header = bytes((vectors.SPARSE_INT8,)) + b"\x8f\xc3\x7f" + struct.pack("<H", 384)
    bad_sparse = header + b"\0\0\0\0" + b"\xff" * 48  # bits set, values missing
    mixed = [*blobs[:5], other, cut, bad_sparse, *blobs[5:]]
    matrix, keep = decode_rows(mixed, 384)
    assert keep.tolist() == [True] * 5 + [False, False, False] + [True] * (len(blobs) - 5)
    assert np.array_equal(matrix, expected)
    empty, none = decode_rows([], 384)
    assert empty.shape == (0, 384) and none.shape == (0,)
    for damaged in (cut, bad_sparse, header):  # read one at a time: an error, not garbage
        with pytest.raises(ValueError, match="corrupt embedding blob"):
            from_blob(damaged)


def test_neo4j_stores_the_values_sqlite_keeps() -> None:
    pytest.importorskip("neo4j")
    from graphmem.store.neo4j.rows import stored_list as _stored_list

    v = unit_rows(1, 384)[0]
    assert _stored_list(v) == [float(x) for x in quantize(v)]  # type: ignore[union-attr]
    assert _stored_list(None) is None


# ------------------------------------------------------------------------------ stores
def blob_lengths(db: Path, table: str) -> list[int]:
    con = sqlite3.connect(db)
    try:
        return [n for (n,) in con.execute(
            f"SELECT length(embedding) FROM {table} WHERE embedding IS NOT NULL"
        )]
    finally:
        con.close()


@pytest.mark.parametrize("forced", ["float32"], indirect=True)
def test_store_written_with_float32_blobs_reads_searches_and_grows(
    tmp_path: Path, forced: None
) -> None:
    """A store written before compact blobs (raw float32, forced here) opens under the new
    default: recall and vector search read its blobs exactly, new writes are compact, and one
    search covers both."""
    db = tmp_path / "old.db"
    embedder = HashEmbedder(64)
    with GraphMemory(db, embedder=embedder) as mem:
        mem.add_episode("I live in Lisbon.", metadata={"speaker": "Maya"})
        mem.add_fact("gripper", "grip_force_for", value=12.5)
    assert set(blob_lengths(db, "facts")) == {64 * 4}
    vectors.DEFAULT_FORMAT = "int8"
    with GraphMemory(db, embedder=embedder) as mem:
        (query,) = embedder.embed(["Maya lives in Lisbon."])
        ((_, score), *_) = mem.store.vector_facts("default", query, 5)
        assert score == pytest.approx(1.0, abs=1e-6)  # float32 read exactly
        assert mem.recall("Where does Maya live?").facts[0].statement == "Maya lives in Lisbon."
        mem.add_fact("rover", "lives_in", "Mars")
        (mars,) = embedder.embed(["rover lives in Mars."])
        ((best, best_score), *_) = mem.store.vector_facts("default", mars, 5)
        assert best == mem.history("rover")[0].id and best_score > 0.99
        exported = [r for r in mem.export() if r["type"] == "fact" and r["embedding"]]
        assert len(exported) == 3
    lengths = blob_lengths(db, "facts")
    assert 64 * 4 in lengths and any(n < 64 + 10 for n in lengths)


def chat_turns(n: int) -> list[dict[str, Any]]:
    """A fixed chat: two speakers, ~100-byte turns, an hour apart."""
    subjects = ["the garden", "my new job", "the red mug", "our trip to Porto", "the robot arm",
                "a support group", "painting class", "the kids' school", "a long run"]
    verbs = ["loved", "finished", "started", "talked about", "worried about", "photographed"]
    start = datetime(2024, 1, 1, 9, tzinfo=UTC)
    out = []
    for i in range(n):
        who = "Maya" if i % 2 else "Leo"
        text = (f"Yesterday I {verbs[i % 6]} {subjects[i % 9]} and then {verbs[(i * 5) % 6]} "
                f"{subjects[(i * 7) % 9]} with a friend, turn {i}.")
        out.append({"content": text, "kind": "message", "source": f"session_{i // 40}",
                    "reference_time": start + timedelta(hours=i),
                    "metadata": {"speaker": who}})
    return out


def _link_bytes(db: Path) -> int:
    """The pages of the turn-link tables and their indexes (SQLite's dbstat)."""
    con = sqlite3.connect(db)
    try:
        (total,) = con.execute(
            "SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name IN ('episode_links', "
            "'episode_links_dst', 'episode_terms', 'episode_terms_episode')"
        ).fetchone()
        return int(total)
    finally:
        con.close()


def jsonl_bytes(items: list[dict[str, Any]]) -> int:
    return sum(
        len(json.dumps({**it, "reference_time": it["reference_time"].isoformat()}).encode()) + 1
        for it in items
    )


def test_chat_store_stays_within_ten_times_its_input(tmp_path: Path) -> None:
    """Size budget (deterministic bytes, no timings): 1,000 chat turns with the default
    embedder hold at most 10x their JSONL input, vectors included; the same store with float32
    blobs was about twice the size."""
    items = chat_turns(1000)
    size: dict[str, int] = {}
    for fmt in ("float32", "int8"):
        saved = vectors.DEFAULT_FORMAT
        vectors.DEFAULT_FORMAT = fmt
        try:
            db = tmp_path / f"{fmt}.db"
            with GraphMemory(db) as mem:  # HashEmbedder(384), the default
                mem.add_episodes(items)
            size[fmt] = db.stat().st_size
        finally:
            vectors.DEFAULT_FORMAT = saved
    assert size["int8"] <= 10 * jsonl_bytes(items)
    # The vector format halves what it stores; the links between turns and their terms are the
    # same bytes in both stores (this chat repeats its words with a turn number, so every turn
    # updates the one before: here they take about half of the store), bounded structurally:
    # each turn keeps at most two links.
    links = {fmt: _link_bytes(tmp_path / f"{fmt}.db") for fmt in size}
    assert size["float32"] - links["float32"] >= 1.8 * (size["int8"] - links["int8"])
    con = sqlite3.connect(tmp_path / "int8.db")
    try:
        (most,) = con.execute(
            "SELECT max(n) FROM (SELECT count(*) AS n FROM episode_links GROUP BY src)"
        ).fetchone()
    finally:
        con.close()
    assert most <= 2
    per_vector = blob_lengths(tmp_path / "int8.db", "episodes")
    assert len(per_vector) == 1000 and max(per_vector) <= 10 + 48 + 200


def test_examples_store_vectors_within_budget(tmp_path: Path) -> None:
    """The bundled examples (chats, a transcript, robot records) as `graphmem ingest` reads
    them: every vector is stored in at most 10 + 384 bytes and on average under 120 (the hashed
    vectors are sparse); they were 1,536 each."""
    from graphmem import load_episodes

    items = load_episodes([ROOT / "examples" / "data"])
    db = tmp_path / "examples.db"
    with GraphMemory(db) as mem:
        mem.add_episodes(items)
    lengths = [n for table in ("facts", "entities", "episodes") for n in blob_lengths(db, table)]
    assert len(lengths) > 400
    assert max(lengths) <= 10 + 384
    assert sum(lengths) / len(lengths) < 120
