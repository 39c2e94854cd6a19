"""What the Bolt integration tests share: the server's address, the skip marker when there is
none, and a memory over an emptied Neo4j store."""

from __future__ import annotations

import os
from collections.abc import Mapping

import pytest

from graphmem import GraphMemory, HashEmbedder

BOLT_URI = os.environ.get("NEO4J_URI") or os.environ.get("GRAPHMEM_TEST_BOLT_URI")

NO_BOLT = (
    "no Bolt server configured: run `python scripts/bolt_server.py start --dir .bolt "
    "--bolt-port 0` and `. .bolt/env.sh` (GRAPHMEM_TEST_BOLT_URI), or set NEO4J_URI"
)
requires_bolt = pytest.mark.skipif(not BOLT_URI, reason=NO_BOLT)

# Record time: when memory learned or stopped believing something (the client clock), which
# differs between two stores given the same input.
RECORD_TIME = ("recorded_at", "ingested_at", "decided_at", "created_at", "ended_at")


def empty_bolt_memory(predicates: Mapping[str, str] | None = None) -> GraphMemory:
    """A connected memory (hashed 64-d vectors) over the test server, emptied first (the
    memory connects after the wipe, so its migrations run on the empty store)."""
    from graphmem.store.neo4j import Neo4jStore

    assert BOLT_URI
    store = Neo4jStore(BOLT_URI, max_retry_time=5)
    store.connect()
    store.wipe_all_for_tests(keep_schema=True)
    mem = GraphMemory(store, embedder=HashEmbedder(64), predicates=predicates)
    mem.connect()
    return mem
