"""The experience index kept in the store: a new process ranks without reading records, a
recall after a write reads only the new rows, forget leaves nothing behind, attempts stored
without an entry are indexed, the cache cap holds for one group, and numbers-only queries are
exactly nearest first."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphmem import GraphMemory, HashEmbedder
from graphmem.experience import index as experience_index
from graphmem.ingest.episode_input import episode_row

T0 = datetime(2025, 3, 1, tzinfo=UTC)


def _add(mem: GraphMemory, i: int, pos: list[float], success: bool, obj: str = "red cube") -> str:
    return mem.add_experience(
        f"push the {obj}",
        state={"object": obj, "object_pos": pos},
        params={"force": 1.0 + i / 10},
        outcome={"success": success},
        payload={"trajectory": [[0.0, 0.0], pos[:2]]},
        run_id="r",
        episode=i,
        occurred_at=T0 + timedelta(minutes=i),
    ).episode_id


def _spy(store: Any, name: str, calls: list[tuple[Any, ...]]) -> None:
    real: Callable[..., Any] = getattr(store, name)

    def wrapper(*args: Any) -> Any:
        calls.append(args)
        return real(*args)

    setattr(store, name, wrapper)


def _fresh_process(mem: GraphMemory) -> None:
    """What a new process holds: no experience columns in memory."""
    mem._experiences = None


def test_a_new_process_ranks_without_reading_the_records(memory: GraphMemory) -> None:
    for i in range(12):
        _add(memory, i, [i / 10, 0.0, 0.0], success=i % 2 == 0)
    _fresh_process(memory)
    read: list[tuple[Any, ...]] = []
    _spy(memory.store, "episodes", read)
    found = memory.recall_experiences(
        "red cube", state={"object_pos": [0.42, 0, 0]}, k=3, outcome="success_only",
        include_payload=True,
    )
    assert [e.episode for e in found] == ["4", "6", "2"]
    assert found[0].payload == {"trajectory": [[0.0, 0.0], [0.4, 0.0]]}
    assert sum(len(args[0]) for args in read) == 3  # the 3 returned, nothing else


def test_a_recall_after_a_write_reads_only_what_came_after(memory: GraphMemory) -> None:
    for i in range(5):
        _add(memory, i, [i / 10, 0.0, 0.0], success=True)
    memory.recall_experiences("red cube", state={"object_pos": [0, 0, 0]}, k=2)
    rows: list[tuple[Any, ...]] = []
    values: list[tuple[Any, ...]] = []
    postings: list[tuple[Any, ...]] = []
    _spy(memory.store, "experience_rows", rows)
    _spy(memory.store, "experience_values", values)
    _spy(memory.store, "experience_postings", postings)
    _spy(memory.store, "episode_ids_by_kind", [])
    newest = _add(memory, 9, [0.01, 0.0, 0.0], success=True)
    found = memory.recall_experiences("red cube", state={"object_pos": [0, 0, 0]}, k=2)
    assert [e.id for e in found][1] == newest
    assert rows and all(after > 0 for _, after in rows)
    assert values and all(after > 0 for _, _, after in values)
    assert postings and all(after > 0 for _, _, after in postings)


def test_forget_removes_the_entry_and_the_columns_follow(memory: GraphMemory) -> None:
    first = _add(memory, 1, [0.0, 0.0, 0.0], success=True)
    _add(memory, 2, [0.5, 0.0, 0.0], success=True)
    assert memory.recall_experiences(state={"object_pos": [0, 0, 0]}, k=1)[0].id == first
    memory.forget(group_id="default", episode_id=first)
    assert [e.episode for e in memory.recall_experiences("red cube", k=5)] == ["2"]
    counts = memory.store.experience_counts("default")
    assert (counts.indexed, counts.episodes) == (1, 1)
    table_counts = getattr(memory.store, "table_counts", None)
    if table_counts is not None:  # SQLite: no values or terms of the forgotten attempt remain
        held = table_counts()
        assert held["experiences"] == 1
        with sqlite3.connect(memory.store.path) as conn:  # type: ignore[attr-defined]
            seqs = {r[0] for r in conn.execute("SELECT DISTINCT seq FROM experience_values")}
            seqs |= {r[0] for r in conn.execute("SELECT DISTINCT seq FROM experience_terms")}
            (kept,) = conn.execute("SELECT seq FROM experiences").fetchone()
        assert seqs == {kept}


def test_attempts_stored_without_an_entry_are_indexed_by_the_first_recall(
    memory: GraphMemory,
) -> None:
    # An import, or a store written before the index: the episode has no entry.
    _add(memory, 1, [0.3, 0.0, 0.0], success=True)
    record = {"task": "push the red cube", "run_id": "old", "episode": 7,
              "state": {"object": "red cube", "object_pos": [0.0, 0.0, 0.0]},
              "outcome": {"success": True}}
    row = episode_row(json.dumps(record), "default", None, "experience", T0, {"meta": {"s": 1}})
    memory.store.insert_episode(row)
    assert memory.store.experience_counts("default").indexed == 1
    found = memory.recall_experiences(
        state={"object_pos": [0, 0, 0]}, k=2, filters={"meta.s": 1}
    )
    assert [e.run_id for e in found] == ["old"]
    counts = memory.store.experience_counts("default")
    assert (counts.indexed, counts.episodes) == (2, 2)


def test_the_cache_cap_holds_for_one_large_group(
    memory: GraphMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(4):
        _add(memory, i, [i / 10, 0.0, 0.0], success=True)
    monkeypatch.setattr(experience_index, "_CACHE_ROWS", 3)
    found = memory.recall_experiences(state={"object_pos": [0.21, 0, 0]}, k=2)
    assert [e.episode for e in found] == ["2", "3"]
    assert memory._experiences is not None and not memory._experiences._groups
    monkeypatch.setattr(experience_index, "_CACHE_ROWS", 100)
    memory.recall_experiences(state={"object_pos": [0.21, 0, 0]}, k=2)
    assert list(memory._experiences._groups) == ["default"]


def test_success_first_fills_with_the_best_failures_when_successes_run_out(
    memory: GraphMemory,
) -> None:
    _add(memory, 1, [0.0, 0.0, 0.0], success=False)
    _add(memory, 2, [0.1, 0.0, 0.0], success=True)
    _add(memory, 3, [0.2, 0.0, 0.0], success=False)
    _add(memory, 4, [0.9, 0.0, 0.0], success=True)  # a success, but not among the 3 best
    found = memory.recall_experiences(
        state={"object_pos": [0, 0, 0]}, k=3, outcome="success_first"
    )
    assert [(e.episode, e.success) for e in found] == [("2", True), ("1", False), ("3", False)]


def test_text_and_state_rank_the_nearest_same_object_successes(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    with GraphMemory(f"{tmp_path}/m.db", embedder=HashEmbedder(64)) as mem:
        items = []
        for i in range(120):
            obj = ["red cube", "blue cube", "green cylinder"][i % 3]
            pos = [round(float(x), 4) for x in rng.uniform(0, 1, 2)]
            _add(mem, i, pos, success=bool(rng.random() < 0.6), obj=obj)
            items.append((str(i), obj, pos))
        found = mem.recall_experiences(
            "push the red cube", state={"object_pos": [0.5, 0.5]}, k=5, outcome="success_only"
        )
        successes = {e.episode for e in mem.recall_experiences(
            k=1000, outcome="success_only", filters={"state.object": "red cube"})}
        truth = sorted(
            (float(np.hypot(p[0] - 0.5, p[1] - 0.5)), i) for i, o, p in items if i in successes
        )
        assert [e.episode for e in found] == [i for _, i in truth[:5]]


@settings(max_examples=12, deadline=None)
@given(
    points=st.lists(
        st.tuples(st.integers(0, 20), st.integers(0, 20)), min_size=1, max_size=12
    ),
    target=st.tuples(st.integers(0, 20), st.integers(0, 20)),
    k=st.integers(1, 6),
)
def test_numbers_only_queries_are_exactly_nearest_first(
    tmp_path_factory: pytest.TempPathFactory,
    points: list[tuple[int, int]],
    target: tuple[int, int],
    k: int,
) -> None:
    path = tmp_path_factory.mktemp("exact") / "m.db"
    with GraphMemory(str(path), embedder=HashEmbedder(32)) as mem:
        for i, (x, y) in enumerate(points):
            mem.add_experience(
                "reach", state={"pos": [x, y]}, episode=i, run_id="e",
                occurred_at=T0 + timedelta(seconds=i),
            )
        found = mem.recall_experiences(state={"pos": list(target)}, k=k)
    # Brute force: squared integer distance (exact in floats too), the newest first on a tie.
    truth = sorted(
        range(len(points)),
        key=lambda i: ((points[i][0] - target[0]) ** 2 + (points[i][1] - target[1]) ** 2, -i),
    )
    assert [int(e.episode or -1) for e in found] == truth[:k]


def test_a_store_from_before_the_index_is_migrated_then_indexed_on_first_recall(
    tmp_path: Path,
) -> None:
    from graphmem.store.sqlite.schema import MIGRATIONS

    source = tmp_path / "now.db"
    with GraphMemory(str(source), embedder=HashEmbedder(32)) as mem:
        for i in range(6):
            obj = "blue puck" if i % 2 else "red cube"
            _add(mem, i, [i / 10, 0.0, 0.0], success=i != 2, obj=obj)
    old = tmp_path / "v5.db"
    conn = sqlite3.connect(old, isolation_level=None)
    conn.execute(
        "CREATE TABLE graphmem_migrations ("
        "version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)"
    )
    for version, name, sql in MIGRATIONS:
        if version <= 5:
            conn.executescript(f"BEGIN; {sql}; COMMIT;")
            conn.execute("INSERT INTO graphmem_migrations VALUES (?, ?, 0)", (version, name))
    conn.execute("ATTACH DATABASE ? AS src", (str(source),))
    conn.execute("BEGIN")
    for table in ("graphmem_meta", "episodes", "entities", "entity_aliases", "facts",
                  "fact_episodes", "fact_endings", "fact_links", "mentions"):
        columns = [r[1] for r in conn.execute(f"PRAGMA main.table_info({table})")
                   if r[1] != "fts_group"]
        names = ", ".join(columns)
        conn.execute(f"INSERT INTO main.{table} ({names}) SELECT {names} FROM src.{table}")
    conn.execute("COMMIT")
    conn.close()
    with GraphMemory(str(old), embedder=HashEmbedder(32)) as mem:
        assert mem.store.experience_counts("default").episodes == 6  # counted by the migration
        assert mem.store.experience_counts("default").indexed == 0
        found = mem.recall_experiences(
            "red cube", state={"object_pos": [0.35, 0, 0]}, k=2, outcome="success_only"
        )
        assert [e.episode for e in found] == ["4", "0"]
        assert mem.store.experience_counts("default").indexed == 6
