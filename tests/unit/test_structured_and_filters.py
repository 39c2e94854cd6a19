"""Structured (JSON) episodes and the recall filter language."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from graphmem import GraphMemory, HashEmbedder

BASE = datetime(2024, 3, 1, tzinfo=UTC)


def episode(n: int, success: bool, force: float, obj: str = "red mug") -> str:
    return json.dumps(
        {
            "episode": n,
            "task": "grasp",
            "object": obj,
            "success": success,
            "params": {"force_peak": force, "approach_speed": 0.2},
            "tags": ["lab", "table"],
        }
    )


@pytest.fixture
def robot(tmp_path: Path) -> GraphMemory:
    mem = GraphMemory(tmp_path / "robot.db", embedder=HashEmbedder(64))
    runs = [(1, True, 11.0), (2, False, 18.5), (3, True, 12.5), (4, False, 9.0), (5, True, 16.0)]
    for n, ok, force in runs:
        mem.add_episode(
            episode(n, ok, force),
            kind="json",
            source="robot.jsonl",
            reference_time=BASE + timedelta(minutes=n),
        )
    return mem


def test_json_leaves_become_typed_facts(robot: GraphMemory) -> None:
    facts = {f.predicate: f.value for f in robot.facts(entity="episode 3")}
    assert facts["success"] is True
    assert facts["params.force_peak"] == 12.5
    assert facts["task"] == "grasp"
    tags = sorted(f.value for f in robot.facts(entity="episode 3") if f.predicate == "tags")
    assert tags == ["lab", "table"]


def test_filters_select_what_worked_before(robot: GraphMemory) -> None:
    result = robot.recall(
        "grasp red mug", filters={"success": True, "params.force_peak": {"$lt": 13}}, k=50
    )
    subjects = {h.subject for h in result.facts}
    assert subjects == {"episode 1", "episode 3"}
    # The filter holds for the episodes and entities returned too, not only the facts (issue 12:
    # under a success filter, failed attempts were among the episodes).
    assert result.episodes
    assert {json.loads(e.content)["episode"] for e in result.episodes} <= {1, 3}
    assert {e.name for e in result.entities} <= {"episode 1", "episode 3"}


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"success": False}, {"episode 2", "episode 4"}),
        ({"params.force_peak": {"$gte": 16}}, {"episode 2", "episode 5"}),
        ({"params.force_peak": {"$gt": 9, "$lte": 12.5}}, {"episode 1", "episode 3"}),
        ({"success": {"$ne": True}}, {"episode 2", "episode 4"}),
        ({"params.force_peak": {"$in": [9.0, 16.0]}}, {"episode 4", "episode 5"}),
        ({"tags": "lab", "success": True}, {"episode 1", "episode 3", "episode 5"}),
        ({"success": 1}, set()),  # 1 is not True: types are not confused
    ],
)
def test_filter_operators(
    robot: GraphMemory, filters: dict[str, object], expected: set[str]
) -> None:
    result = robot.recall("grasp", filters=filters, k=100)
    assert {h.subject for h in result.facts} == expected


def test_same_record_twice_is_a_no_op(robot: GraphMemory) -> None:
    before = robot.stats("default")
    again = robot.add_episode(
        episode(1, True, 11.0),
        kind="json",
        source="robot.jsonl",
        reference_time=BASE + timedelta(minutes=1),
    )
    assert again.already_present
    assert robot.stats("default") == before


def test_updated_scalar_supersedes_within_a_subject(tmp_path: Path) -> None:
    mem = GraphMemory(tmp_path / "m.db", embedder=HashEmbedder(32))
    mem.add_episode(
        json.dumps({"entity": "gripper", "status": "ok"}), kind="json", reference_time=BASE
    )
    mem.add_episode(
        json.dumps({"entity": "gripper", "status": "jammed"}),
        kind="json",
        reference_time=BASE + timedelta(hours=1),
    )
    assert [f.value for f in mem.facts(entity="gripper")] == ["jammed"]
    assert [f.value for f in mem.history("gripper")] == ["ok", "jammed"]


def test_runs_scope_episode_identity_and_records_without_ids_stand_alone(tmp_path: Path) -> None:
    """Issue 12: episode 1 of a second run must not supersede episode 1 of the first; records
    keyed only by run_id, or by nothing, must not merge into one entity named after the file."""
    with GraphMemory(tmp_path / "m.db", embedder=HashEmbedder(64)) as mem:
        for run, force in (("r1", 8.0), ("r2", 15.0)):
            mem.add_episode(json.dumps({"run_id": run, "episode": 1, "force": force}),
                            kind="json", source="runs.jsonl", reference_time=BASE)
        for n in range(3):
            mem.add_episode(json.dumps({"run_id": f"solo{n}", "force": n}), kind="json",
                            source="runs.jsonl", reference_time=BASE + timedelta(minutes=n))
            mem.add_episode(json.dumps({"force": 10 + n}), kind="json", source="runs.jsonl",
                            reference_time=BASE + timedelta(minutes=n))
        forces = {f.subject: f.value for f in mem.facts() if f.predicate == "force"}
        assert forces["run r1 episode 1"] == 8.0 and forces["run r2 episode 1"] == 15.0
        assert {forces[f"run solo{n}"] for n in range(3)} == {0, 1, 2}
        anonymous = {s for s in forces if s.startswith("record ")}
        assert len(anonymous) == 3 and "runs.jsonl" not in forces
        assert all(f.valid_to is None for f in mem.facts(include_history=True))  # none replaced


def test_a_record_too_large_fails_with_the_reason_and_nothing_is_dropped(tmp_path: Path) -> None:
    with GraphMemory(tmp_path / "m.db", embedder=HashEmbedder(64)) as mem:
        big = {"id": "huge", "values": {f"k{i}": i for i in range(501)}}
        result = mem.add_episode(json.dumps(big), kind="json", reference_time=BASE)
        assert result.status == "failed" and "more than 500" in (result.error or "")
        assert mem.facts() == []  # nothing half-stored
        assert mem.episode(result.episode_id) is not None  # the input is kept
        ok = mem.add_episode(json.dumps({"id": "fine", "values": list(range(400))}),
                             kind="json", reference_time=BASE)
        assert ok.status == "extracted"


def test_a_list_of_numbers_is_a_vector_kept_in_order(tmp_path: Path) -> None:
    with GraphMemory(tmp_path / "m.db", embedder=HashEmbedder(64)) as mem:
        record = {
            "id": "arm",
            "pos": [0.1, 0.0, 0.0],  # order and the repeated 0.0 are the data
            "tags": ["lab", "table", "lab"],  # strings: a set of values (tags)
            "trajectory": [float(i) for i in range(65)],  # past 64 numbers: payload only
            "path": [[0.0, 0.1, 0.2]] * 300,  # a list of vectors, 900 numbers: payload too
            "grid": [[1, 2], [3, 4]],  # a small one: indexed facts
        }
        result = mem.add_episode(json.dumps(record), kind="json", reference_time=BASE)
        assert result.status == "extracted"
        facts = mem.facts(entity="arm")
        pos = sorted((f.predicate, f.value) for f in facts if f.predicate.startswith("pos."))
        assert pos == [("pos.0", 0.1), ("pos.1", 0.0), ("pos.2", 0.0)]
        assert sorted(f.value for f in facts if f.predicate == "tags") == ["lab", "table"]  # type: ignore[type-var]
        assert not any(f.predicate.startswith(("trajectory", "path")) for f in facts)
        grid = sorted((f.predicate, f.value) for f in facts if f.predicate.startswith("grid"))
        assert grid == [("grid.0.0", 1), ("grid.0.1", 2), ("grid.1.0", 3), ("grid.1.1", 4)]
        stored = mem.episode(result.episode_id)
        assert stored is not None and json.loads(stored.content) == record  # kept whole
        hits = mem.recall("arm", filters={"pos.1": 0.0, "pos.0": {"$gt": 0.05}}).facts
        assert hits and all(h.subject == "arm" for h in hits)
