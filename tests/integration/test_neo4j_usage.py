"""Pins, feedback and decay (issue 16) on the Neo4j store over Bolt: the scenarios of
tests/unit/test_usage.py, including that no temporal read changes.

Needs a Bolt server: ``python scripts/bolt_server.py start --dir .bolt --bolt-port 0`` and
``. .bolt/env.sh`` (ArcadeDB), or ``NEO4J_URI`` (+ ``NEO4J_USERNAME``/``NEO4J_PASSWORD``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from graphmem import GraphMemory, HashEmbedder
from tests.helpers import usage_scenarios as s
from tests.helpers.bolt import empty_bolt_memory, requires_bolt

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600), requires_bolt]


@pytest.fixture
def memory() -> Iterator[GraphMemory]:
    mem = empty_bolt_memory(predicates=s.PREDICATES)
    store = mem.store
    yield mem
    store.wipe_all_for_tests(keep_schema=True)
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
