"""The Neo4j write path's statements per ingested turn (no server: a recording transaction).

Each statement is a round trip to the server, most of a turn's write time on Neo4j: what an
extraction leaves on its episode (embedding, link terms, status) goes in one statement, and a
plan holding only some of them still sets exactly those.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np
from neo4j import ManagedTransaction

from graphmem.store._base import WritePlan
from graphmem.store.neo4j.cypher import query
from graphmem.store.neo4j.writes import Writes

NAMES = [
    "episodes/extracted_set",
    "episodes/embedding_set",
    "episodes/link_terms_set",
    "episodes/set_status",
]


class RecordingTx:
    def __init__(self) -> None:
        self.ran: list[tuple[str, dict[str, Any]]] = []

    def run(self, text: str, params: dict[str, Any]) -> list[Any]:
        name = next(n for n in NAMES if query(n) == text)
        self.ran.append((name, params))
        return []


def applied(plan: WritePlan) -> list[tuple[str, dict[str, Any]]]:
    tx = RecordingTx()
    Writes(cast(Any, None), cast(Any, None)).apply(cast(ManagedTransaction, tx), plan)
    return tx.ran


def test_an_ingested_turn_sets_its_episode_in_one_statement() -> None:
    plan = WritePlan(
        episode_id="ep1",
        episode_status=("extracted", "rules", None),
        episode_embedding=np.ones(4, dtype=np.float32),
        episode_terms=["moved", "berlin"],
    )
    ran = applied(plan)
    assert [name for name, _ in ran] == ["episodes/extracted_set"]
    params = ran[0][1]
    assert params["id"] == "ep1"
    assert params["terms"] == ["moved", "berlin"]
    assert (params["status"], params["extractor"], params["error"]) == ("extracted", "rules", None)
    assert len(params["embedding"]) == 4


def test_a_plan_with_only_some_episode_parts_sets_only_those() -> None:
    status_only = WritePlan(episode_id="ep1", episode_status=("failed", "rules", "boom"))
    assert [name for name, _ in applied(status_only)] == ["episodes/set_status"]
    no_status = WritePlan(
        episode_id="ep1", episode_embedding=np.ones(4, dtype=np.float32), episode_terms=["x"]
    )
    assert [name for name, _ in applied(no_status)] == [
        "episodes/embedding_set",
        "episodes/link_terms_set",
    ]
