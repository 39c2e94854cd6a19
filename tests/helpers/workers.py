"""Concurrent ingest processes for the integration tests: where they write (a SQLite file, or
the emptied Bolt test server) and how they are started together and waited for.

Each worker is ``tests/helpers/ingest_worker.py`` in its own process with its own share of the
episodes; all of them open the store, say ``ready``, and start ingesting together when the
``go`` file appears.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from graphmem import GraphMemory, HashEmbedder
from tests.helpers.bolt import BOLT_URI, NO_BOLT

ROOT = Path(__file__).resolve().parents[2]
WORKER = ROOT / "tests" / "helpers" / "ingest_worker.py"


def wipe_bolt() -> None:
    from graphmem.store import open_store

    store = open_store(BOLT_URI or "")
    store.connect()
    try:
        store.wipe_all_for_tests(keep_schema=True)  # type: ignore[attr-defined]
    finally:
        store.close()


def worker_store(kind: str, sqlite_path: Path) -> Iterator[str]:
    """The body of a store fixture: ``sqlite_path``, or the Bolt test server's URI (skipped
    without one), wiped before and after.

    Wiped first, as the ``memory`` fixture does: a database left with another embedder by an
    earlier test would fail the workers' embedder check.
    """
    if kind == "sqlite":
        yield str(sqlite_path)
        return
    if not BOLT_URI:
        pytest.skip(NO_BOLT)
    wipe_bolt()
    try:
        yield BOLT_URI
    finally:
        wipe_bolt()


def run_workers(
    tmp_path: Path,
    target: str,
    shares: Sequence[Sequence[dict[str, Any]]],
    *,
    bulk_divisor: int,
    chunk: int,
    dim: int,
    timeout: float,
) -> None:
    """One worker process per share, all ingesting into ``target`` at once; returns when every
    one has said ``done`` and exited 0 (assertion errors carry a failing worker's stderr).

    The schema is created first (each worker would migrate otherwise: also fine). Each worker
    sends the first ``len(share) // bulk_divisor`` of its episodes (JSON-ready dicts) through
    ``add_episodes`` in chunks of ``chunk``, the rest one by one. ``timeout`` seconds after the
    go signal, the ones still running are killed.
    """
    GraphMemory(target, embedder=HashEmbedder(dim)).connect().close()
    go = tmp_path / "go"
    procs: list[subprocess.Popen[str]] = []
    for number, share in enumerate(shares):
        file = tmp_path / f"worker{number}.json"
        file.write_text(json.dumps(list(share)), encoding="utf-8")
        argv = [
            sys.executable,
            str(WORKER),
            "--store",
            target,
            "--episodes",
            str(file),
            "--bulk",
            str(len(share) // bulk_divisor),
            "--chunk",
            str(chunk),
            "--dim",
            str(dim),
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
        deadline = time.monotonic() + timeout
        for proc in procs:
            out, err = proc.communicate(timeout=max(1.0, deadline - time.monotonic()))
            assert proc.returncode == 0, err
            assert out.strip() == "done"
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
