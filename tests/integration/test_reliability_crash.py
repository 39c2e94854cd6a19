"""``kill -9`` of an ingesting process (SQLite): the file stays sound and a re-run completes it.

A worker process (``tests/helpers/ingest_worker.py``) ingests 400 episodes (chat messages and
JSON robot records; the first 200 through ``add_episodes`` in chunks of 25, the rest one by one
through ``add_episode``) and is killed with SIGKILL, either after a seeded random delay or at a
precise point inside or between its transactions. Then:

- the file opens, ``PRAGMA integrity_check`` is ok, FTS indexes hold exactly their tables' rows;
- every ``extracted`` episode is complete: its facts and mentions are exactly those a clean run
  gives it; no fact lacks provenance, no link/provenance/mention points at a missing row;
- ``pending`` episodes are only the raw record (no facts, no mentions);
- running the same ingest again finishes with no duplicates: one episode per distinct input,
  and a graph (canonical export and per-table row counts) equal to a clean sequential run's.
"""

from __future__ import annotations

import json
import os
import random
import select
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from graphmem import GraphMemory, HashEmbedder
from tests.helpers.reliability import (
    canonical,
    connect_ro,
    corpus,
    diff_canonical,
    episode_signatures,
    ingest,
    row_counts,
    sqlite_problems,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(150)]

ROOT = Path(__file__).resolve().parents[2]
WORKER = ROOT / "tests" / "helpers" / "ingest_worker.py"
N, BULK, CHUNK, DIM = 400, 200, 25, 64
SEED = 20240501


@dataclass
class Reference:
    episodes: list[dict[str, Any]]
    file: Path
    canonical: dict[str, Any]
    counts: dict[str, int]
    signatures: dict[str, dict[str, Any]]
    seconds: float


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Reference:
    """A clean, uninterrupted sequential run of the same input, by the same worker (timed, so
    that random kill delays spread over the whole ingest)."""
    folder = tmp_path_factory.mktemp("crash")
    episodes = corpus(SEED, N)
    file = folder / "episodes.json"
    file.write_text(json.dumps(episodes), encoding="utf-8")
    db = folder / "reference.db"
    partial = Reference(episodes, file, {}, {}, {}, 0.0)
    proc = spawn(db, partial)
    wait_ready(proc)
    started = time.monotonic()
    out, err = proc.communicate(timeout=120)
    seconds = time.monotonic() - started
    assert proc.returncode == 0 and out.strip() == "done", err
    with GraphMemory(db, embedder=HashEmbedder(DIM)) as mem:
        graph = canonical(mem.export())
    assert sqlite_problems(db) == []
    conn = connect_ro(db)
    try:
        counts = row_counts(conn)
    finally:
        conn.close()
    assert counts["episodes"] == N
    return Reference(episodes, file, graph, counts, episode_signatures(db), seconds)


def spawn(db: Path, ref: Reference, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            str(WORKER),
            "--store",
            str(db),
            "--episodes",
            str(ref.file),
            "--bulk",
            str(BULK),
            "--chunk",
            str(CHUNK),
            "--dim",
            str(DIM),
            *extra,
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_ready(proc: subprocess.Popen[str], timeout: float = 60.0) -> None:
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    assert ready, "the worker did not start"
    line = proc.stdout.readline().strip()
    if line != "ready":
        _, err = proc.communicate(timeout=30)
        pytest.fail(f"worker failed to start: {line!r}\n{err}")


def check_after_crash(db: Path, ref: Reference) -> dict[str, int]:
    """The state a killed worker left: sound, and every finished episode complete."""
    problems = sqlite_problems(db)
    assert problems == [], problems
    with GraphMemory(db, embedder=HashEmbedder(DIM)) as mem:  # the file opens as a memory
        stats = mem.stats()
    found = episode_signatures(db)
    assert set(found) <= set(ref.signatures), "an episode that is not in the input"
    statuses = {"extracted": 0, "pending": 0}
    for episode_id, got in found.items():
        assert got["status"] in statuses, (episode_id, got["status"])
        statuses[got["status"]] += 1
        if got["status"] == "extracted":
            want = ref.signatures[episode_id]
            assert got["facts"] == want["facts"], f"episode {episode_id} is incomplete"
            assert got["mentions"] == want["mentions"], f"episode {episode_id} is incomplete"
        else:
            assert got["facts"] == [] and got["mentions"] == []
    assert stats["episodes"] == sum(statuses.values())
    assert stats["episodes_pending"] == statuses["pending"]
    return statuses


def rerun_and_compare(db: Path, ref: Reference) -> None:
    with GraphMemory(db, embedder=HashEmbedder(DIM)) as mem:
        ingest(mem, ref.episodes, bulk=BULK, chunk=CHUNK)
        graph = canonical(mem.export())
        stats = mem.stats()
    assert stats["episodes"] == N and stats["episodes_pending"] == 0
    assert stats["episodes_failed"] == 0
    assert graph == ref.canonical, diff_canonical(ref.canonical, graph)
    assert sqlite_problems(db) == []
    conn = connect_ro(db)
    try:
        counts = row_counts(conn)
    finally:
        conn.close()
    assert counts == ref.counts


def killed_by_us(proc: subprocess.Popen[str]) -> bool:
    proc.wait(timeout=60)
    return proc.returncode == -signal.SIGKILL


# Precise points: inside the raw-episode transaction, between it and the write, inside the write
# transaction, right after a commit; in the bulk phase (chunks of 25) and the one-by-one phase.
KILL_POINTS = [
    "insert-mid:7",  # bulk phase
    "insert-done:2",
    "apply:40",
    "commit:3",
    "insert-mid:204",  # one-by-one phase (200 bulk rows, 8 bulk writes before it)
    "apply:203",
    "commit:12",
]


@pytest.mark.parametrize("kill_at", KILL_POINTS)
def test_kill_at_a_precise_point_then_rerun(
    reference: Reference, tmp_path: Path, kill_at: str
) -> None:
    db = tmp_path / "killed.db"
    proc = spawn(db, reference, "--kill-at", kill_at)
    wait_ready(proc)
    assert killed_by_us(proc), proc.communicate()[1]
    statuses = check_after_crash(db, reference)
    hook, _, count = kill_at.partition(":")
    if hook == "insert-mid":
        # The raw-episode transaction was open: it is rolled back as a whole.
        assert statuses["pending"] == 0
    elif hook in ("insert-done", "apply"):
        # Raw episodes committed, their extraction not: they wait as pending records.
        assert statuses["pending"] >= 1
    elif hook == "commit":
        assert statuses["pending"] == 0 and statuses["extracted"] >= int(count)
    rerun_and_compare(db, reference)


@pytest.mark.parametrize("round_", range(5))
def test_kill_after_a_random_delay_then_rerun(
    reference: Reference, tmp_path: Path, round_: int
) -> None:
    rng = random.Random(SEED + round_)
    db = tmp_path / "killed.db"
    proc = spawn(db, reference)
    wait_ready(proc)
    time.sleep(rng.uniform(0.02, 0.9) * reference.seconds)
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=60)
    statuses = check_after_crash(db, reference)
    print(f"round {round_}: rc={proc.returncode} {statuses}")
    rerun_and_compare(db, reference)


def test_kill_during_the_rerun_too(reference: Reference, tmp_path: Path) -> None:
    """Two crashes in a row (the second one while pending episodes are being finished)."""
    db = tmp_path / "killed.db"
    first = spawn(db, reference, "--kill-at", "apply:60")
    wait_ready(first)
    assert killed_by_us(first)
    check_after_crash(db, reference)
    second = spawn(db, reference, "--kill-at", "apply:20")
    wait_ready(second)
    assert killed_by_us(second)
    check_after_crash(db, reference)
    rerun_and_compare(db, reference)
