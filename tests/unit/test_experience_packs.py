"""A new process reads a large group's experience columns as packs (SQLite): the ranking is
the same as from the rows one by one, a removal drops the packs and a reader that began before
it writes none, a read-only store ranks without writing; the packed value column keeps every
value; the in-process columns are held within a byte cap, the group in use included."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphmem import GraphMemory, HashEmbedder
from graphmem.experience import index as experience_index
from graphmem.store._experience import ValueColumn, pack_values, unpack_values
from graphmem.store.sqlite import experience as sqlite_experience

T0 = datetime(2025, 3, 1, tzinfo=UTC)
OBJECTS = ("red cube", "blue puck", "green cylinder")


def _add(mem: GraphMemory, i: int, pos: list[float], success: bool, obj: str = "red cube",
         group: str = "default") -> str:
    return mem.add_experience(
        f"push the {obj}",
        state={"object": obj, "object_pos": pos},
        params={"force": 1.0 + i / 10},
        outcome={"success": success},
        run_id="r",
        episode=i,
        group_id=group,
        occurred_at=T0 + timedelta(minutes=i),
    ).episode_id


def _packs(path: Path) -> dict[str, int]:
    with sqlite3.connect(path) as conn:
        return dict(conn.execute("SELECT name, upto FROM experience_packs"))


def _drop_packs(path: Path) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute("DELETE FROM experience_packs")


QUERIES: list[dict[str, Any]] = [
    {"query": "push the red cube", "state": {"object_pos": [0.4, 0.3]}, "k": 4,
     "outcome": "success_only"},
    {"state": {"object_pos": [0.1, 0.9]}, "k": 5},
    {"query": "blue puck", "k": 3, "filters": {"state.object": "blue puck"}},
    {"state": {"object_pos": [0.5, 0.5]}, "k": 6, "outcome": "success_first",
     "filters": {"params.force": {"$gt": 1.5}, "state.object_pos.0": {"$lt": 0.8}}},
]


def _answers(path: Path) -> list[list[tuple[str | None, float]]]:
    """What a new process returns for each query."""
    with GraphMemory(str(path), embedder=HashEmbedder(32)) as mem:
        return [[(e.episode, round(e.score, 12)) for e in mem.recall_experiences(**q)]
                for q in QUERIES]


def _fill(path: Path, points: list[tuple[float, float]], start: int = 0) -> None:
    with GraphMemory(str(path), embedder=HashEmbedder(32)) as mem:
        for i, (x, y) in enumerate(points, start):
            _add(mem, i, [x, y], success=i % 3 != 1, obj=OBJECTS[i % 3])


def test_a_new_process_reads_the_packs_and_ranks_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_experience, "PACK_MIN", 5)
    rng = np.random.default_rng(3)
    path = tmp_path / "m.db"
    _fill(path, [tuple(p) for p in rng.uniform(0, 1, (30, 2)).round(3).tolist()])
    assert _packs(path) == {}
    first = _answers(path)  # reads rows one by one, then packs what it read
    packs = _packs(path)
    assert {"rows", "v:state.object_pos", "v:state.object", "t:red"} <= set(packs)
    assert _answers(path) == first  # from the packs
    _fill(path, [(0.41, 0.31), (0.11, 0.89)], start=30)  # fewer than PACK_MIN after the packs
    with_tail = _answers(path)
    assert _packs(path) == packs  # the two new rows were read after the packs, not packed
    _drop_packs(path)
    assert _answers(path) == with_tail  # the same from the rows one by one


@settings(max_examples=10, deadline=None)
@given(
    points=st.lists(st.tuples(st.integers(0, 9), st.integers(0, 9)), min_size=1, max_size=16),
    more=st.lists(st.tuples(st.integers(0, 9), st.integers(0, 9)), max_size=6),
    pack_min=st.integers(1, 8),
)
def test_packed_and_row_by_row_reads_rank_alike(
    tmp_path_factory: pytest.TempPathFactory,
    points: list[tuple[int, int]],
    more: list[tuple[int, int]],
    pack_min: int,
) -> None:
    path = tmp_path_factory.mktemp("packs") / "m.db"
    saved = sqlite_experience.PACK_MIN
    sqlite_experience.PACK_MIN = pack_min
    try:
        scaled = [(x / 10, y / 10) for x, y in points]
        _fill(path, scaled)
        _answers(path)  # packs what it read (when enough rows)
        _fill(path, [(x / 10, y / 10) for x, y in more], start=len(points))
        packed = _answers(path)
        _drop_packs(path)
        assert _answers(path) == packed
    finally:
        sqlite_experience.PACK_MIN = saved


def test_forget_drops_the_packs_of_the_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_experience, "PACK_MIN", 1)
    path = tmp_path / "m.db"
    with GraphMemory(str(path), embedder=HashEmbedder(32)) as mem:
        nearest = _add(mem, 0, [0.0, 0.0], success=True)
        for i in range(1, 6):
            _add(mem, i, [i / 10, 0.0], success=True)
        _add(mem, 9, [0.0, 0.0], success=True, group="other")
    for group in ("default", "other"):
        with GraphMemory(str(path), embedder=HashEmbedder(32)) as mem:
            mem.recall_experiences(state={"object_pos": [0, 0]}, k=1, group_id=group)
    with sqlite3.connect(path) as conn:
        assert {g for (g,) in conn.execute("SELECT group_id FROM experience_packs")} == {
            "default", "other"}
    with GraphMemory(str(path), embedder=HashEmbedder(32)) as mem:
        mem.forget(group_id="default", episode_id=nearest)
    with sqlite3.connect(path) as conn:  # the group's packs held the forgotten attempt
        assert {g for (g,) in conn.execute("SELECT group_id FROM experience_packs")} == {"other"}
    with GraphMemory(str(path), embedder=HashEmbedder(32)) as mem:
        found = mem.recall_experiences(state={"object_pos": [0, 0]}, k=2)
        assert [e.episode for e in found] == ["1", "2"]


def test_a_reader_that_began_before_a_removal_writes_no_pack(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_experience, "PACK_MIN", 1)
    path = tmp_path / "m.db"
    with GraphMemory(str(path), embedder=HashEmbedder(32)) as mem:
        gone = _add(mem, 0, [0.0, 0.0], success=True)
        _add(mem, 1, [0.5, 0.0], success=True)
        index = mem.store._experience  # type: ignore[attr-defined]
        removed = index._removed()
        rows = mem.store.experience_rows("default", 0)  # packs (nothing removed yet)
        assert "rows" in _packs(path)
        mem.forget(group_id="default", episode_id=gone)  # drops them, moves the count
        assert _packs(path) == {}
        # The rows read before the removal hold the forgotten attempt: they must not be packed.
        index._save_pack("default", "rows", removed, rows[:, 0], b"",
                         rows[:, 1:].astype("<i8").tobytes())
        assert _packs(path) == {}
        assert [int(s) for s in mem.store.experience_rows("default", 0)[:, 0]] == [
            int(rows[1, 0])]


def test_a_read_only_store_ranks_without_writing_packs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_experience, "PACK_MIN", 1)
    path = tmp_path / "m.db"
    _fill(path, [(0.1, 0.1), (0.2, 0.2), (0.3, 0.3)])
    with GraphMemory(f"sqlite:///{path}?mode=ro", embedder=HashEmbedder(32)) as mem:
        found = mem.recall_experiences(state={"object_pos": [0.21, 0.2]}, k=1)
        assert [e.episode for e in found] == ["1"]
    assert _packs(path) == {}


_VALUES = st.lists(
    st.one_of(
        st.lists(st.floats(allow_nan=False, allow_infinity=False, width=64), min_size=1,
                 max_size=4),
        st.lists(st.one_of(st.text(max_size=5), st.booleans()), min_size=1, max_size=3),
    ),
    max_size=12,
)


@settings(max_examples=60, deadline=None)
@given(values=_VALUES, dim=st.integers(1, 4))
def test_a_packed_value_column_keeps_every_value(values: list[list[Any]], dim: int) -> None:
    pairs = [(seq * 3 + 1, pack_values(v)) for seq, v in enumerate(values)]
    column = ValueColumn.from_pairs(pairs)
    assert list(column.pairs()) == pairs
    halves = ValueColumn.concat([ValueColumn.from_pairs(pairs[:5]),
                                 ValueColumn.from_pairs(pairs[5:])])
    assert list(halves.pairs()) == pairs
    seqs, matrix = column.numbers(dim)
    fit = [(s, unpack_values(d)) for s, d in pairs if isinstance(d, bytes) and len(d) == 8 * dim]
    assert seqs.tolist() == [s for s, _ in fit]
    assert matrix.shape == (len(fit), dim)
    assert matrix.tolist() == [v for _, v in fit]


# ---------------------------------------------------------------------- the byte cap
def test_the_byte_cap_evicts_the_least_recently_recalled_group(
    memory: GraphMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    for group in ("a", "b"):
        for i in range(20):
            _add(memory, i, [i / 20, 0.0], success=True, group=group)
    memory.recall_experiences("red cube", state={"object_pos": [0, 0]}, k=2, group_id="a")
    recall = memory._experiences
    assert recall is not None
    one = recall.cached_bytes
    assert one > 0
    monkeypatch.setattr(experience_index, "_CACHE_BYTES", one + one // 2)  # room for one
    found = memory.recall_experiences(
        "red cube", state={"object_pos": [0, 0]}, k=2, group_id="b"
    )
    assert [e.episode for e in found] == ["0", "1"]
    assert list(recall._groups) == ["b"]  # "a", recalled least recently, went
    assert recall.cached_bytes <= one + one // 2


def test_a_group_alone_over_the_byte_cap_is_answered_and_not_kept(
    memory: GraphMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(20):
        _add(memory, i, [i / 20, 0.0], success=i != 3)
    monkeypatch.setattr(experience_index, "_CACHE_BYTES", 64)
    for _ in range(2):  # the second recall reads the columns again, and is as right
        found = memory.recall_experiences(
            "red cube", state={"object_pos": [0.16, 0]}, k=3, outcome="success_only"
        )
        assert [e.episode for e in found] == ["4", "2", "5"]  # 3 (nearest) failed
        assert memory._experiences is not None and not memory._experiences._groups
        assert memory._experiences.cached_bytes == 0


def test_the_columns_a_recall_reads_count_toward_the_byte_cap(
    memory: GraphMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(20):
        _add(memory, i, [i / 20, 0.0], success=True)
    memory.recall_experiences(k=3)  # the rows only: no query text, no state
    assert memory._experiences is not None
    rows_only = memory._experiences.cached_bytes
    monkeypatch.setattr(experience_index, "_CACHE_BYTES", rows_only + 8)
    found = memory.recall_experiences("red cube", state={"object_pos": [0.3, 0]}, k=1)
    assert [e.episode for e in found] == ["6"]
    # The postings and the state column this recall read pushed the group over: dropped.
    assert not memory._experiences._groups
