"""The Bolt server dies in the middle of an ingest: the caller gets a clear ``StoreError``, the
graph holds nothing of the interrupted write (one transaction per chunk), and once the server
is back the same call completes, giving the graph a clean run would have given.

Starts its own throw-away server of the shared test server's kind on a private data dir and
free ports, so the shared one is never stopped: genuine Neo4j (``scripts/neo4j_server.py``,
when ``GRAPHMEM_TEST_BOLT_SERVER`` names a Neo4j version, as its env.sh does) or ArcadeDB
(``scripts/bolt_server.py``). One private server serves the module's tests (a start costs
tens of seconds).
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from graphmem import GraphMemory, HashEmbedder, StoreError

REPO = Path(__file__).resolve().parents[2]
BOLT_URI = os.environ.get("NEO4J_URI") or os.environ.get("GRAPHMEM_TEST_BOLT_URI")
# "neo4j-5.26.30" when the shared server is genuine Neo4j (scripts/neo4j_server.py's env.sh)
SERVER_KIND = os.environ.get("GRAPHMEM_TEST_BOLT_SERVER", "")
GENUINE_NEO4J = SERVER_KIND.startswith("neo4j-")
pytestmark = [
    pytest.mark.integration,
    pytest.mark.slow,
    pytest.mark.skipif(
        not BOLT_URI,
        reason="no Bolt server configured: run `python scripts/bolt_server.py start --dir .bolt "
        "--bolt-port 0` and `. .bolt/env.sh` (GRAPHMEM_TEST_BOLT_URI), or set NEO4J_URI",
    ),
    pytest.mark.skipif(
        not GENUINE_NEO4J and importlib.util.find_spec("arcadedb_embedded") is None,
        reason="needs a private ArcadeDB server: pip install 'arcadedb-embedded==26.10.2.post1'",
    ),
]

RECORD_TIME = ("recorded_at", "ingested_at", "decided_at", "created_at", "ended_at")


def records(start: int, stop: int) -> list[dict[str, Any]]:
    base = datetime(2024, 1, 1, tzinfo=UTC)
    return [
        {
            "content": json.dumps(
                {
                    "episode": i,
                    "task": "grasp",
                    "object": ["red mug", "sponge", "bottle"][i % 3],
                    "success": i % 2 == 0,
                    "params": {"force_peak": 5.0 + i, "grip_width": 0.05},
                    "operator": f"op{i % 2}",
                }
            ),
            "kind": "json",
            "source": "robot.jsonl",
            "reference_time": base + timedelta(minutes=i),
        }
        for i in range(start, stop)
    ]


@pytest.fixture(scope="module")
def private_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        if GENUINE_NEO4J:
            import neo4j_server as server_script
        else:
            import bolt_server as server_script
    finally:
        sys.path.remove(str(REPO / "scripts"))
    where = tmp_path_factory.mktemp("bolt")
    if GENUINE_NEO4J:
        version = SERVER_KIND.removeprefix("neo4j-")
        info = server_script.start_server(where, bolt_port=0, heap="512m", version=version)
    else:
        info = server_script.start_server(where, bolt_port=0, heap="512m")
    try:
        yield server_script, info
    finally:
        server_script.stop_server(info.dir, kill=True)


@pytest.fixture
def server(private_server: Any) -> Any:
    """The private server, running (a test may have left it stopped)."""
    server_script, info = private_server
    if server_script.server_status(info.dir) is None:
        server_script.start_server(info.dir)
    return server_script, info


def normalised(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for row in rows:
        row = dict(row)
        for key in RECORD_TIME:
            if row.get(key) is not None:
                row[key] = "<record time>"
        if row.get("claim"):  # a claim records when it was applied, and in which commit
            row["claim"] = dict(row["claim"], at="<record time>", seq="<commit>")
        out.append(row)
    return out


def graph_counts(mem: GraphMemory) -> dict[str, int]:
    rows = list(mem.export())
    counts = {kind: 0 for kind in ("episode", "entity", "fact", "provenance", "link", "mention")}
    for row in rows:
        counts[row["type"]] += 1
    counts["extracted"] = sum(
        1 for r in rows if r["type"] == "episode" and r["status"] == "extracted"
    )
    return counts


def test_server_killed_mid_ingest(server: Any, tmp_path: Path) -> None:
    from graphmem.store.neo4j import Neo4jStore

    bolt_server, info = server
    store = Neo4jStore(
        info.bolt_uri,
        username=info.user,
        password=info.password,
        database=info.database,
        http_url=info.http_url,
        max_retry_time=2,
        connection_timeout=2,
    )
    store.connect()
    store.wipe_all_for_tests(keep_schema=True)
    mem = GraphMemory(store, embedder=HashEmbedder(64))
    mem.connect()
    assert all(r.status == "extracted" for r in mem.add_episodes(records(0, 4)))
    before = graph_counts(mem)
    assert before["fact"] > 0 and before["extracted"] == 4

    # Kill the server (SIGKILL, like a crash) once the first episode of the next chunk has
    # been written inside the chunk's transaction.
    original = store._apply
    applied: list[object] = []

    def apply_then_crash(tx: Any, plan: Any) -> None:
        original(tx, plan)
        applied.append(plan)
        if len(applied) == 1:
            bolt_server.stop_server(info.dir, kill=True)

    store._apply = apply_then_crash  # type: ignore[method-assign]
    with pytest.raises(StoreError) as failure:
        mem.add_episodes(records(4, 8))
    message = str(failure.value)
    assert info.bolt_uri in message and "unreachable" in message, message
    assert applied, "the crash should have come in the middle of the write"
    store._apply = original  # type: ignore[method-assign]

    bolt_server.start_server(info.dir)  # same ports, password and data
    after = graph_counts(mem)  # the same driver reconnects by itself
    # Nothing of the interrupted write: the raw episodes were stored first (by design, so that
    # input is never lost) and wait as pending; no fact, link, mention or provenance of them.
    assert after["episode"] == before["episode"] + 4
    assert after["extracted"] == before["extracted"]
    for kind in ("entity", "fact", "provenance", "link", "mention"):
        assert after[kind] == before[kind], kind
    pending = mem.store.episodes_by_status("default", ["pending", "failed"])
    assert len(pending) == 4

    results = mem.add_episodes(records(4, 8))  # the re-run completes
    assert [r.status for r in results] == ["extracted"] * 4
    assert not mem.store.episodes_by_status("default", ["pending", "failed"])

    reference = GraphMemory(tmp_path / "reference.db", embedder=HashEmbedder(64))
    reference.add_episodes(records(0, 4))
    reference.add_episodes(records(4, 8))
    assert normalised(list(mem.export())) == normalised(list(reference.export()))
    mem.close()
    reference.close()


def test_unreachable_server_fails_fast_and_clearly(server: Any) -> None:
    from graphmem.store.neo4j import Neo4jStore

    bolt_server, info = server
    bolt_server.stop_server(info.dir, kill=True)
    store = Neo4jStore(
        info.bolt_uri,
        username=info.user,
        password=info.password,
        max_retry_time=1,
        connection_timeout=1,
    )
    with pytest.raises(StoreError, match="unreachable"):
        GraphMemory(store, embedder=HashEmbedder(64)).connect()
    bolt_server.start_server(info.dir)
    store = Neo4jStore(
        info.bolt_uri, username=info.user, password="wrong-password", max_retry_time=1
    )
    with pytest.raises(StoreError, match="NEO4J_PASSWORD"):
        store.connect()
