"""Pins, feedback and decay (issue 16) on the Neo4j store over Bolt: the scenarios of
tests/unit/test_usage.py, including that no temporal read changes.

Needs a Bolt server: ``python scripts/bolt_server.py start --dir .bolt --bolt-port 0`` and
``. .bolt/env.sh`` (ArcadeDB), or ``NEO4J_URI`` (+ ``NEO4J_USERNAME``/``NEO4J_PASSWORD``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from graphmem import GraphMemory, HashEmbedder
from tests.helpers import usage_scenarios as s

BOLT_URI = os.environ.get("NEO4J_URI") or os.environ.get("GRAPHMEM_TEST_BOLT_URI")
pytestmark = [
    pytest.mark.integration,
    pytest.mark.timeout(600),
    pytest.mark.skipif(
        not BOLT_URI,
        reason="no Bolt server configured: run `python scripts/bolt_server.py start --dir .bolt "
        "--bolt-port 0` and `. .bolt/env.sh` (GRAPHMEM_TEST_BOLT_URI), or set NEO4J_URI",
    ),
]


@pytest.fixture
def memory() -> Iterator[GraphMemory]:
    from graphmem.store.neo4j import Neo4jStore

    assert BOLT_URI
    store = Neo4jStore(BOLT_URI, max_retry_time=5)
    store.connect()
    store.wipe_all_for_tests()
    mem = GraphMemory(store, embedder=HashEmbedder(64), predicates=s.PREDICATES)
    mem.connect()
    yield mem
    store.wipe_all_for_tests()
    mem.close()


def test_pins_follow_the_timeline(memory: GraphMemory) -> None:
    s.pins_follow_the_timeline(memory, "g")


def test_usage_episodes_are_bookkeeping(memory: GraphMemory) -> None:
    s.usage_episodes_are_bookkeeping(memory, "g")


def test_feedback_and_decay_change_rank_not_truth(memory: GraphMemory) -> None:
    s.feedback_and_decay_change_rank_not_truth(memory, "g")


def test_pins_survive_export_to_sqlite(memory: GraphMemory, tmp_path: Path) -> None:
    with GraphMemory(tmp_path / "copy.db", embedder=HashEmbedder(64)) as target:
        s.pins_survive_export_and_import(memory, "g", target)
