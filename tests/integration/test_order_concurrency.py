"""Two processes ingest one generated history at once, each its share in a random order: what
memory believes afterwards equals a sequential ingest in stated order (SQLite and Bolt).

The histories (``tests/helpers/histories.chat_turns``) are what order independence is about:
statements, negations, "actually" and "X, not Y" corrections, re-affirmations, kinship
corrections and manager returns, at a few stated days (ties included). A second process's
episodes are reconciled by the same rule under the store's write lock, so the interleaving of
the two writers must not matter. Some episodes go to both processes (ingested once).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graphmem import GraphMemory, HashEmbedder
from tests.helpers.histories import believed, chat_turns

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

ROOT = Path(__file__).resolve().parents[2]
WORKER = ROOT / "tests" / "helpers" / "ingest_worker.py"
DIM = 64
BOLT_URI = os.environ.get("NEO4J_URI") or os.environ.get("GRAPHMEM_TEST_BOLT_URI")
TURNS = {"sqlite": 120, "bolt": 60}


def _wipe_bolt() -> None:
    from graphmem.store import open_store

    store = open_store(BOLT_URI or "")
    store.connect()
    try:
        store.wipe_all_for_tests(keep_schema=True)  # type: ignore[attr-defined]
    finally:
        store.close()


@pytest.fixture
def target(kind: str, tmp_path: Path) -> Iterator[str]:
    if kind == "sqlite":
        yield str(tmp_path / "two_writers.db")
        return
    if not BOLT_URI:
        pytest.skip("no Bolt server configured (GRAPHMEM_TEST_BOLT_URI or NEO4J_URI)")
    _wipe_bolt()
    try:
        yield BOLT_URI
    finally:
        _wipe_bolt()


def _jsonable(turn: dict[str, Any], group: str) -> dict[str, Any]:
    return dict(turn, reference_time=turn["reference_time"].isoformat(), group_id=group)


def _run_workers(tmp_path: Path, target: str, shares: list[list[dict[str, Any]]]) -> None:
    go = tmp_path / "go"
    procs: list[subprocess.Popen[str]] = []
    for number, share in enumerate(shares):
        file = tmp_path / f"writer{number}.json"
        file.write_text(json.dumps(share), encoding="utf-8")
        argv = [
            sys.executable,
            str(WORKER),
            "--store",
            target,
            "--episodes",
            str(file),
            "--bulk",
            str(len(share) // 3),
            "--chunk",
            "5",
            "--dim",
            str(DIM),
            "--go",
            str(go),
        ]
        procs.append(
            subprocess.Popen(
                argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
            )
        )
    try:
        for proc in procs:
            assert proc.stdout is not None
            assert proc.stdout.readline().strip() == "ready", proc.communicate()[1]
        go.touch()
        deadline = time.monotonic() + 240
        for proc in procs:
            out, err = proc.communicate(timeout=max(1.0, deadline - time.monotonic()))
            assert proc.returncode == 0, err
            assert out.strip() == "done"
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


@pytest.mark.parametrize("kind", ["sqlite", "bolt"])
@pytest.mark.parametrize("seed", [21, 22, 23])
def test_two_writers_in_random_orders_believe_what_one_does(
    tmp_path: Path, kind: str, seed: int, target: str
) -> None:
    group = f"two-writers-{seed}-{uuid.uuid4().hex[:8]}"
    turns = chat_turns(seed, TURNS[kind], days=8)
    rng = random.Random(seed)
    shares: list[list[dict[str, Any]]] = [[], []]
    for index, turn in enumerate(turns):
        shares[rng.randrange(2)].append(_jsonable(turn, group))
        if index % 7 == 0:  # some turns reach both writers
            shares[rng.randrange(2)].append(_jsonable(turn, group))
    for share in shares:
        rng.shuffle(share)
    GraphMemory(target, embedder=HashEmbedder(DIM)).connect().close()
    _run_workers(tmp_path, target, shares)
    with GraphMemory(target, embedder=HashEmbedder(DIM)) as mem:
        concurrent = believed(mem, group)
        stats = mem.stats(group_id=group)
    assert stats["episodes_pending"] == 0 and stats["episodes_failed"] == 0

    with GraphMemory(tmp_path / "sequential.db", embedder=HashEmbedder(DIM)) as mem:
        for turn in sorted(turns, key=lambda e: e["reference_time"]):
            mem.add_episode(**turn, group_id=group)
        sequential = believed(mem, group)
    assert concurrent == sequential
