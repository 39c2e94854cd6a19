"""Moving a memory to another embedder (``GraphMemory.reembed``, ``graphmem db reembed``): both
stores, in batches, resumable after a kill, recall answering with the old vectors meanwhile."""

from __future__ import annotations

import base64
import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from graphmem import EmbeddingMismatchError, GraphMemory, HashEmbedder
from graphmem.cli.app import cli as cli_main

REPO = Path(__file__).resolve().parents[2]
TURNS = [
    "Alice moved to Porto in 2021 and loves the river views.",
    "Bob works at Acme as a welder; he started in March.",
    "Alice adopted a cat called Miso last spring.",
    "Bob's sister Carol is a pilot who flies to Lisbon.",
    "Carol and Alice went hiking in the Alps together.",
    "Bob bought a red bicycle for his commute.",
]


class Fault(Exception):
    """Stands for a kill after some batches."""


def _fill(mem: GraphMemory) -> None:
    for turn in TURNS:
        mem.add_episode(turn, group_id="g", metadata={"speaker": "user"})


def _vectors(mem: GraphMemory) -> dict[tuple[str, str], np.ndarray]:
    out: dict[tuple[str, str], np.ndarray] = {}
    for row in mem.export(group_id="g"):
        if row.get("embedding"):
            data = base64.b64decode(row["embedding"])
            out[(row["type"], row["id"])] = np.frombuffer(data, dtype="<f4")
    return out


def _recorded(mem: GraphMemory) -> dict[str, Any]:
    return dict(json.loads(mem.store.get_meta("embedder") or "{}"))


def _fail_after(batches: int) -> Any:
    seen = [0]

    def progress(done: int, total: int) -> None:
        seen[0] += 1
        if seen[0] > batches:  # the first call reports the start, before any batch
            raise Fault(f"killed after {batches} batches ({done}/{total})")

    return progress


def test_reembed_moves_every_vector_and_records_the_embedder(memory: GraphMemory) -> None:
    _fill(memory)
    before = _vectors(memory)
    assert before and all(v.shape == (64,) for v in before.values())
    steps: list[tuple[int, int]] = []
    report = memory.reembed(
        HashEmbedder(32), batch_size=3, progress=lambda d, t: steps.append((d, t))
    )
    assert (report.previous, report.embedder, report.dim) == (
        "hash-ngram-v1-64", "hash-ngram-v1-32", 32,
    )
    after = _vectors(memory)
    assert set(after) == set(before)
    assert all(v.shape == (32,) for v in after.values())
    assert report.embedded == len(after) and report.batches == -(-len(after) // 3)
    assert steps[0][0] == 0 and steps[-1][0] == steps[-1][1] == len(after)
    assert _recorded(memory) == {"name": "hash-ngram-v1-32", "dim": 32}
    assert memory.embedder.name == "hash-ngram-v1-32"
    assert any("Miso" in e.content for e in memory.recall("cat Miso", group_id="g").episodes)
    # The new vectors are the new embedder's, as an ingest with it would have made them.
    fact_rows = [r for r in memory.export(group_id="g") if r["type"] == "fact"]
    fresh = HashEmbedder(32).embed([fact_rows[0]["statement"]])[0]
    got = after[("fact", fact_rows[0]["id"])]
    assert float(np.dot(fresh, got)) > 0.99


def test_a_killed_reembed_resumes_and_recall_answers_meanwhile(memory: GraphMemory) -> None:
    _fill(memory)
    before = _vectors(memory)
    with pytest.raises(Fault):
        memory.reembed(HashEmbedder(48), batch_size=2, progress=_fail_after(2))
    # Nothing swapped: the store still records, and searches, the old vectors.
    assert _recorded(memory)["name"] == "hash-ngram-v1-64"
    assert {k: v.tobytes() for k, v in _vectors(memory).items()} == {
        k: v.tobytes() for k, v in before.items()
    }
    staged, todo = memory.store.embedding_counts()  # type: ignore[attr-defined]
    assert (staged, todo) == (4, len(before) - 4)
    reopened_hits = memory.recall("Alice cat", group_id="g")
    assert any("Miso" in e.content for e in reopened_hits.episodes)
    report = memory.reembed(HashEmbedder(48), batch_size=2)
    assert report.resumed and report.embedded == len(before) - 4
    assert all(v.shape == (48,) for v in _vectors(memory).values())
    assert _recorded(memory) == {"name": "hash-ngram-v1-48", "dim": 48}


def test_another_embedder_after_an_unfinished_run_starts_over(memory: GraphMemory) -> None:
    _fill(memory)
    total = len(_vectors(memory))
    with pytest.raises(Fault):
        memory.reembed(HashEmbedder(48), batch_size=2, progress=_fail_after(1))
    report = memory.reembed(HashEmbedder(40), batch_size=4)
    assert not report.resumed and report.embedded == total
    assert all(v.shape == (40,) for v in _vectors(memory).values())


def test_the_mismatch_error_names_the_reembed_command(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with GraphMemory(path, embedder=HashEmbedder(64)) as mem:
        _fill(mem)
    with pytest.raises(EmbeddingMismatchError, match="graphmem db reembed --embedder hash"):
        GraphMemory(path, embedder=HashEmbedder(32)).connect()
    mem = GraphMemory(path)
    mem.reembed(HashEmbedder(32))
    with GraphMemory(path, embedder=HashEmbedder(32)) as moved:
        assert moved.embedder.dim == 32
        assert moved.recall("welder", group_id="g").episodes


def test_reembed_with_the_stores_own_embedder_fills_missing_vectors(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with GraphMemory(path, embedder=HashEmbedder(64)) as mem:
        _fill(mem)
        count = len(_vectors(mem))
    with sqlite3.connect(path) as conn:  # episodes stored before episode vectors existed
        conn.execute("UPDATE episodes SET embedding = NULL")
    with GraphMemory(path) as mem:
        assert len(_vectors(mem)) == count - len(TURNS)
        report = mem.reembed(HashEmbedder(64))
        assert report.previous == report.embedder == "hash-ngram-v1-64"
        assert len(_vectors(mem)) == count


_KILLED_RUN = """
import os, sys
from graphmem import GraphMemory, HashEmbedder
seen = []
def progress(done, total):
    seen.append(done)
    if len(seen) > 2:
        os._exit(9)  # killed: no cleanup, no rollback of what was committed
GraphMemory(sys.argv[1]).reembed(HashEmbedder(32), batch_size=2, progress=progress)
"""


def test_a_process_killed_midway_leaves_a_store_that_resumes(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with GraphMemory(path, embedder=HashEmbedder(64)) as mem:
        _fill(mem)
        total = len(_vectors(mem))
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_KILLED_RUN), str(path)],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )
    assert proc.returncode == 9, proc.stderr
    with GraphMemory(path) as mem:
        assert mem.embedder.name == "hash-ngram-v1-64"  # still the old one, searchable
        assert mem.recall("bicycle", group_id="g").episodes
    result = CliRunner().invoke(
        cli_main, ["--store", str(path), "db", "reembed", "--embedder", "hash", "--json"]
    )
    # The CLI's name builds the default hash embedder (384): another target, so it starts over.
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["embedded"] == total
    mem2 = GraphMemory(path)
    report = mem2.reembed(HashEmbedder(32), batch_size=2)
    assert report.embedded == total and not report.resumed


def test_cli_reembed_resumes_a_killed_run(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with GraphMemory(path) as mem:  # the default: hashed n-grams, 384 dimensions
        _fill(mem)
        total = len(_vectors(mem))
    with pytest.raises(Fault):
        GraphMemory(path).reembed(HashEmbedder(32), batch_size=2, progress=_fail_after(2))
    with pytest.raises(Fault):
        GraphMemory(path).reembed("hash", batch_size=2, progress=_fail_after(2))
    result = CliRunner().invoke(
        cli_main,
        ["--store", str(path), "db", "reembed", "--embedder", "hash", "--batch-size", "2",
         "--progress"],
    )
    assert result.exit_code == 0, result.output
    assert "continued an unfinished run" in result.output
    assert f"embedded {total - 4} item(s)" in result.output
    assert "re-embedding" in result.output  # the progress bar (stderr is mixed in here)


def test_init_names_the_embedder_and_the_way_to_a_semantic_one(tmp_path: Path) -> None:
    store = str(tmp_path / "m.db")
    result = CliRunner().invoke(cli_main, ["--store", store, "init"])
    assert result.exit_code == 0, result.output
    assert "embedder: hash-ngram-v1-384 (384 dimensions)" in result.output
    assert "graphmem[onnx-embeddings]" in result.output
    assert "graphmem db reembed --embedder onnx" in result.output
    info = json.loads(CliRunner().invoke(cli_main, ["--store", store, "init", "--json"]).output)
    assert info["embedder"] == {"name": "hash-ngram-v1-384", "dim": 384, "semantic": False}
