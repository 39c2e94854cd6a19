"""Two writers on one Bolt server are serialised by the lock node (``meta/lock``), whatever the
server's locking: on Neo4j the second writer waits for the first to commit; ArcadeDB locks
optimistically, so both run and the one that commits second fails and is run again.

Each test interleaves two store handles deterministically: while the first one's transaction is
open (after it took the lock and read), the second one's whole write runs in a thread (on
Neo4j it blocks on the lock until the first commits; on ArcadeDB it commits at once). Whatever
happens, the outcome must be one that a serial order gives.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

BOLT_URI = os.environ.get("NEO4J_URI") or os.environ.get("GRAPHMEM_TEST_BOLT_URI")
pytestmark = [
    pytest.mark.integration,
    pytest.mark.timeout(60),
    pytest.mark.skipif(
        not BOLT_URI,
        reason="no Bolt server configured: run `python scripts/bolt_server.py start --dir .bolt "
        "--bolt-port 0` and `. .bolt/env.sh` (GRAPHMEM_TEST_BOLT_URI), or set NEO4J_URI",
    ),
]

neo4j_store = pytest.importorskip("graphmem.store.neo4j.store")
PROBE = "GraphmemTestProbe"


@pytest.fixture
def stores() -> Iterator[tuple[Any, Any]]:
    assert BOLT_URI
    first = neo4j_store.Neo4jStore(BOLT_URI, max_retry_time=20)
    second = neo4j_store.Neo4jStore(BOLT_URI, max_retry_time=20)
    first.connect()
    second.connect()
    first.wipe_all_for_tests(keep_schema=True)
    first.migrate()  # the uniqueness constraints
    try:
        yield first, second
    finally:
        first.wipe_all_for_tests(keep_schema=True)
        first.close()
        second.close()


def race(
    first: Any,
    second: Any,
    read: Callable[[Any], int],
    write: Callable[[Any, int], None],
) -> int:
    """One read-then-write unit on each handle: ``first`` reads, then (on its first run only)
    ``second`` runs the whole unit in a thread, waited for up to 1.5 s, then ``first`` writes
    what its read decided. Returns how many times ``first``'s unit ran."""
    runs: list[int] = []
    outcome: list[BaseException | None] = []
    thread: threading.Thread | None = None

    def unit(tx: Any) -> None:
        write(tx, read(tx))

    def other() -> None:
        try:
            second._write_tx(unit, "second writer")
            outcome.append(None)
        except BaseException as exc:
            outcome.append(exc)

    def first_unit(tx: Any) -> None:
        nonlocal thread
        runs.append(1)
        seen = read(tx)
        if thread is None:
            thread = threading.Thread(target=other, daemon=True)
            thread.start()
            thread.join(timeout=1.5)
        write(tx, seen)

    first._write_tx(first_unit, "first writer")
    assert thread is not None
    thread.join(timeout=30)
    assert outcome == [None], outcome
    return len(runs)


def count(tx: Any, query: str, **params: Any) -> int:
    return int(tx.run(query, **params).single()["n"])


def test_writers_in_the_same_millisecond_are_serialised(
    stores: tuple[Any, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each writer records how many probes it saw: a serial order gives 0 and 1, never 0 and 0.

    The clock is frozen, so every lock write sets the same ``at``: ArcadeDB only counts a
    changed value as a write, and a lock that set ``at`` alone did not conflict (both committed
    having seen 0)."""
    first, second = stores
    frozen = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
    monkeypatch.setattr(neo4j_store, "utcnow", lambda: frozen)
    first._write_tx(lambda tx: None, "lock at the frozen time")

    def read(tx: Any) -> int:
        return count(tx, f"MATCH (p:{PROBE}) RETURN count(p) AS n")

    def write(tx: Any, seen: int) -> None:
        tx.run(f"CREATE (:{PROBE} {{seen: $seen}})", seen=seen).consume()

    race(first, second, read, write)
    records, _, _ = first.driver.execute_query(
        f"MATCH (p:{PROBE}) RETURN p.seen AS seen", database_=first._database
    )
    assert sorted(int(r["seen"]) for r in records) == [0, 1]


def test_writers_racing_to_one_unique_key(stores: tuple[Any, Any]) -> None:
    """Both writers create an episode they did not find: the second run finds it instead.

    ArcadeDB reports this lost race as a ConstraintError (not a retryable conflict): the store
    runs the unit again rather than failing the ingest."""
    first, second = stores

    def read(tx: Any) -> int:
        return count(tx, "MATCH (e:Episode {id: $id}) RETURN count(e) AS n", id="ep_race")

    def write(tx: Any, found: int) -> None:
        if not found:
            tx.run("CREATE (:Episode {id: $id, group_id: 'race'})", id="ep_race").consume()

    race(first, second, read, write)
    records, _, _ = first.driver.execute_query(
        "MATCH (e:Episode {id: 'ep_race'}) RETURN count(e) AS n", database_=first._database
    )
    assert int(records[0]["n"]) == 1
