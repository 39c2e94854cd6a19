"""4 concurrent ingest processes on overlapping entities (SQLite).

Every worker ingests its own share of one corpus (a quarter, plus every tenth episode of its
neighbour's quarter, so that some episodes are ingested by two processes at once) about the same
people, places, employers and robot episodes. Afterwards: no duplicate entity per
(group, key, type), no lost fact, and a graph equal to one sequential run of the distinct
episodes: the canonical export (facts with their times, confidence and supporting episodes,
SUPERSEDES/CONTRADICTS links, entities, mentions) and every per-table row count.

The corpus never moves a functional timeline back to a value it had before (see
``tests/helpers/reliability.corpus``): with that, the reconciler promises an order-independent
result, which is what makes a concurrent run comparable to a sequential one.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from graphmem import GraphMemory, HashEmbedder
from tests.helpers.reliability import (
    canonical,
    connect_ro,
    corpus,
    diff_canonical,
    ingest,
    row_counts,
    sqlite_problems,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(150)]

ROOT = Path(__file__).resolve().parents[2]
WORKER = ROOT / "tests" / "helpers" / "ingest_worker.py"
WORKERS, N, DIM = 4, 240, 64


def shares(n: int) -> list[list[int]]:
    """Worker w gets i % 4 == w, and also every tenth episode of worker w-1's share."""
    out: list[list[int]] = [[] for _ in range(WORKERS)]
    for i in range(n):
        out[i % WORKERS].append(i)
        if i % 10 == 0:
            out[(i + 1) % WORKERS].append(i)
    return [sorted(s) for s in out]


def store_target(kind: str, folder: Path) -> str:
    if kind == "sqlite":
        return str(folder / "concurrent.db")
    pytest.skip(f"no concurrent-ingest runner for {kind} yet")


@pytest.mark.parametrize("kind", ["sqlite"])
@pytest.mark.parametrize("seed", [7, 8])
def test_concurrent_ingest_equals_sequential(tmp_path: Path, kind: str, seed: int) -> None:
    episodes = corpus(seed, N)
    target = store_target(kind, tmp_path)
    # The schema exists before the workers race (each would migrate otherwise: also fine).
    GraphMemory(target, embedder=HashEmbedder(DIM)).connect().close()
    go = tmp_path / "go"
    procs: list[subprocess.Popen[str]] = []
    for w, share in enumerate(shares(N)):
        file = tmp_path / f"worker{w}.json"
        file.write_text(json.dumps([episodes[i] for i in share]), encoding="utf-8")
        procs.append(
            subprocess.Popen(
                [
                    sys.executable,
                    str(WORKER),
                    "--store",
                    target,
                    "--episodes",
                    str(file),
                    "--bulk",
                    str(len(share) // 2),
                    "--chunk",
                    "8",
                    "--dim",
                    str(DIM),
                    "--go",
                    str(go),
                ],
                cwd=ROOT,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    try:
        for proc in procs:
            assert proc.stdout is not None
            assert proc.stdout.readline().strip() == "ready", proc.communicate()[1]
        go.touch()
        deadline = time.monotonic() + 100
        for proc in procs:
            out, err = proc.communicate(timeout=max(1.0, deadline - time.monotonic()))
            assert proc.returncode == 0, err
            assert out.strip() == "done"
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()

    assert sqlite_problems(target) == []  # includes: no duplicate (group, key, type) entity
    with GraphMemory(target, embedder=HashEmbedder(DIM)) as mem:
        concurrent = canonical(mem.export())
        stats = mem.stats()
    assert stats["episodes"] == N
    assert stats["episodes_pending"] == 0 and stats["episodes_failed"] == 0

    sequential_db = tmp_path / "sequential.db"
    with GraphMemory(sequential_db, embedder=HashEmbedder(DIM)) as mem:
        ingest(mem, episodes, bulk=N // 2, chunk=8)
        sequential = canonical(mem.export())
    assert concurrent == sequential, diff_canonical(sequential, concurrent)
    conns = [connect_ro(target), connect_ro(sequential_db)]
    try:
        assert row_counts(conns[0]) == row_counts(conns[1])
    finally:
        for conn in conns:
            conn.close()
