"""The two stores hold the same graph: the same input gives the same JSONL export (same records,
keys, values and order; embeddings base64 float32) on SQLite and over Bolt, apart from record
times (when memory learned something). An export imported into the other store exports back
identically, record times included.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from graphmem import GraphMemory, HashEmbedder
from tests.helpers.bolt import BOLT_URI, RECORD_TIME, requires_bolt

pytestmark = [pytest.mark.integration, requires_bolt]

def t(year: int, month: int = 1, day: int = 1) -> datetime:
    return datetime(year, month, day, tzinfo=UTC)


def bolt_memory() -> GraphMemory:
    from graphmem.store.neo4j import Neo4jStore

    assert BOLT_URI
    store = Neo4jStore(BOLT_URI, max_retry_time=5)
    mem = GraphMemory(store, embedder=HashEmbedder(64))
    mem.connect()
    store.wipe_all_for_tests(keep_schema=True)
    mem.close()
    mem = GraphMemory(Neo4jStore(BOLT_URI, max_retry_time=5), embedder=HashEmbedder(64))
    mem.connect()
    return mem


@pytest.fixture
def memories(tmp_path: Path) -> Iterator[tuple[GraphMemory, GraphMemory]]:
    lite = GraphMemory(tmp_path / "memory.db", embedder=HashEmbedder(64))
    lite.connect()
    bolt = bolt_memory()
    yield lite, bolt
    lite.close()
    wipe = getattr(bolt.store, "wipe_all_for_tests", None)
    if wipe is not None:
        wipe(keep_schema=True)
    bolt.close()


def scenario(mem: GraphMemory) -> None:
    """Every kind of change DESIGN.md §3 names, plus extracted text and structured logs."""
    mem.add_fact("Alice", "lives_in", "Berlin", valid_from=t(2022), source="chat")
    mem.add_fact("Alice", "lives_in", "Paris", valid_from=t(2019), source="email")  # late
    mem.add_fact("Alice", "lives_in", "Rome", valid_from=t(2020), source="cv")
    mem.add_fact("Alice", "lives_in", "Paris", valid_from=t(2019), source="diary")  # duplicate
    mem.add_fact("Bob", "works_at", "Acme", valid_from=t(2023), source="hr")
    mem.add_fact("Bob", "works_at", "Globex", valid_from=t(2023), source="linkedin")  # conflict
    mem.add_fact("Carol", "likes", "jazz", valid_from=t(2020))
    mem.add_fact("Carol", "likes", "hiking", valid_from=t(2021))
    mem.add_fact("Carol", "lives_in", "Oslo", valid_from=t(2020))
    mem.add_fact("Carol", "lives_in", "Oslo", valid_from=t(2024), negated=True)
    mem.add_fact("api", "has_endpoint", value="/v1", valid_from=t(2021))
    mem.add_fact("api", "has_endpoint", value="/v2", correction=True, valid_from=t(2021))
    mem.add_fact("gripper", "grip_force_for", value=12.5, valid_from=t(2024))
    mem.add_fact("gripper", "has_status", value=True, valid_from=t(2024))
    mem.add_fact("gripper", "cycle_count", value=42, valid_from=t(2024))
    mem.add_episode(
        "I live in Osaka with my cat. I work at Initech.",
        reference_time=t(2024, 3, 1),
        metadata={"role": "user", "session": "s1", "nested": {"k": [1, 2]}},
        source="chat",
    )
    mem.add_episodes(
        [
            {
                "content": json.dumps(
                    {
                        "episode": i,
                        "task": "grasp",
                        "object": ["red mug", "sponge"][i % 2],
                        "success": i % 3 != 0,
                        "params": {"force_peak": 5.5 + i, "grip_width": 0.04},
                        "tags": ["lab", f"table{i % 2}"],
                    }
                ),
                "kind": "json",
                "source": "robot.jsonl",
                "reference_time": t(2024, 5, 1 + i),
            }
            for i in range(6)
        ]
    )
    mem.add_fact("Zed", "lives_in", "Lima", group_id="other", valid_from=t(2021))
    doomed = mem.add_fact("Dave", "knows", "Erin", valid_from=t(2020), source="gossip")
    mem.forget(episode_id=doomed.episode_id)


def normalised(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for row in rows:
        row = dict(row)
        for key in RECORD_TIME:
            if key in row:
                row[key] = "<record time>" if row[key] is not None else None
        if row.get("expired_at") is not None:  # a correction expires at record time
            row["expired_at"] = "<record time>"
        if row.get("claim"):  # a claim records when it was applied, and in which commit
            row["claim"] = dict(row["claim"], at="<record time>", seq="<commit>")
        out.append(row)
    return out


def test_same_input_same_export(memories: tuple[GraphMemory, GraphMemory]) -> None:
    lite, bolt = memories
    scenario(lite)
    scenario(bolt)
    a = list(lite.export())
    b = list(bolt.export())
    kinds = {r["type"] for r in a}
    assert kinds == {"episode", "entity", "fact", "provenance", "ending", "link", "mention"}
    assert any(r["type"] == "link" and r["kind"] == "CONTRADICTS" for r in a)
    assert any(r["type"] == "fact" and r["embedding"] for r in a)
    assert len(a) == len(b)
    for left, right in zip(normalised(a), normalised(b), strict=True):
        assert left == right
    for group in ("default", "other"):
        assert normalised(list(lite.export(group_id=group))) == normalised(
            list(bolt.export(group_id=group))
        )
    # the derived views agree too
    assert lite.stats("default") | {"store": ""} == bolt.stats("default") | {"store": ""}
    for entity in ("Alice", "Bob", "Carol", "api", "gripper"):
        assert history(lite, entity) == history(bolt, entity)
    query = "Where does Alice live?"
    assert [h.id for h in lite.recall(query, as_of=t(2021)).facts][:1] == [
        h.id for h in bolt.recall(query, as_of=t(2021)).facts
    ][:1]


def history(mem: GraphMemory, entity: str) -> list[dict[str, Any]]:
    return normalised([f.model_dump() for f in mem.history(entity)])


def test_export_imports_back_identically(memories: tuple[GraphMemory, GraphMemory]) -> None:
    lite, bolt = memories
    scenario(lite)
    rows = list(lite.export())
    counts = bolt.import_rows(rows)
    assert counts["facts"] == sum(r["type"] == "fact" for r in rows)
    assert counts["episodes"] == sum(r["type"] == "episode" for r in rows)
    assert list(bolt.export()) == rows  # record times travel with the export
    again = bolt.import_rows(rows)  # importing twice adds nothing
    assert again == {"episodes": 0, "entities": 0, "facts": 0, "links": 0}
    assert counts["entities"] == sum(r["type"] == "entity" for r in rows)
    assert counts["links"] == sum(r["type"] == "link" for r in rows)
    assert list(bolt.export()) == rows
    # and back: Bolt's export imports into a fresh SQLite store identically
    assert lite.stats()["facts"] == bolt.stats()["facts"]
