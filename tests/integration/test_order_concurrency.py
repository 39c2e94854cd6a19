"""Two processes ingest one generated history at once, each its share in a random order: what
memory believes afterwards equals a sequential ingest in stated order (SQLite and Bolt).

The histories (``tests/helpers/histories.chat_turns``) are what order independence is about:
statements, negations, "actually" and "X, not Y" corrections, re-affirmations, kinship
corrections and manager returns, at a few stated days (ties included). A second process's
episodes are reconciled by the same rule under the store's write lock, so the interleaving of
the two writers must not matter. Some episodes go to both processes (ingested once).
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graphmem import GraphMemory, HashEmbedder
from tests.helpers.histories import believed, chat_turns
from tests.helpers.workers import run_workers, worker_store

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

DIM = 64
TURNS = {"sqlite": 120, "bolt": 60}


@pytest.fixture
def target(kind: str, tmp_path: Path) -> Iterator[str]:
    yield from worker_store(kind, tmp_path / "two_writers.db")


def _jsonable(turn: dict[str, Any], group: str) -> dict[str, Any]:
    return dict(turn, reference_time=turn["reference_time"].isoformat(), group_id=group)


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
    run_workers(tmp_path, target, shares, bulk_divisor=3, chunk=5, dim=DIM, timeout=240)
    with GraphMemory(target, embedder=HashEmbedder(DIM)) as mem:
        concurrent = believed(mem, group)
        stats = mem.stats(group_id=group)
    assert stats["episodes_pending"] == 0 and stats["episodes_failed"] == 0

    with GraphMemory(tmp_path / "sequential.db", embedder=HashEmbedder(DIM)) as mem:
        for turn in sorted(turns, key=lambda e: e["reference_time"]):
            mem.add_episode(**turn, group_id=group)
        sequential = believed(mem, group)
    assert concurrent == sequential
