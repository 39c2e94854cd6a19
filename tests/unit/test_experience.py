"""Experience memory: attempts stored whole and recalled by text, state, outcome and recency."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from graphmem import (
    Experience,
    ExperienceWeights,
    FilterError,
    GraphMemory,
    HashEmbedder,
    InputError,
)

T0 = datetime(2025, 3, 1, tzinfo=UTC)


def _push(
    mem: GraphMemory,
    i: int,
    obj: str,
    pos: list[float],
    force: float,
    success: bool,
    **extra: object,
) -> str:
    result = mem.add_experience(
        f"push the {obj} to the target",
        state={"object": obj, "object_pos": pos},
        params={"force": force},
        outcome={"success": success, "final_distance": 0.01 if success else 0.2},
        run_id="r1",
        episode=i,
        occurred_at=T0 + timedelta(minutes=i),
        **extra,  # type: ignore[arg-type]
    )
    assert result.status == "extracted", result.error
    return result.episode_id


@pytest.fixture
def pushes(memory: GraphMemory) -> GraphMemory:
    _push(memory, 1, "red cube", [0.10, 0.20, 0.0], 3.0, True)
    _push(memory, 2, "red cube", [0.80, 0.90, 0.0], 5.0, False)
    _push(memory, 3, "blue puck", [0.11, 0.21, 0.0], 2.0, True)
    _push(memory, 4, "blue puck", [0.50, 0.50, 0.0], 1.0, False)
    _push(memory, 5, "red cube", [0.12, 0.19, 0.0], 3.2, True)
    return memory


def test_an_attempt_comes_back_whole_with_arrays_in_order(memory: GraphMemory) -> None:
    episode_id = _push(
        memory,
        7,
        "red cube",
        [0.1, 0.0, 0.0],
        3.0,
        True,
        payload={"trajectory": [[0.0, 0.0], [0.1, 0.0], [0.1, 0.0]]},
        meta={"seed": 11},
    )
    (found,) = memory.recall_experiences("red cube", include_payload=True)
    assert isinstance(found, Experience)
    assert found.id == episode_id
    assert found.state == {"object": "red cube", "object_pos": [0.1, 0.0, 0.0]}
    assert found.params == {"force": 3.0}
    assert found.outcome == {"success": True, "final_distance": 0.01}
    assert found.payload == {"trajectory": [[0.0, 0.0], [0.1, 0.0], [0.1, 0.0]]}
    assert found.meta == {"seed": 11}
    assert found.success is True
    assert found.run_id == "r1" and found.episode == "7"
    assert found.subject == "run r1 episode 7"
    assert found.occurred_at == T0 + timedelta(minutes=7)
    # The payload is only read when asked for.
    (plain,) = memory.recall_experiences("red cube")
    assert plain.payload is None


def test_numpy_values_are_stored_as_json(memory: GraphMemory) -> None:
    memory.add_experience(
        "reach",
        state={"pos": np.array([0.5, 0.25, 0.5], dtype=np.float32), "step": np.int64(3)},
        outcome={"success": np.bool_(True)},
    )
    (found,) = memory.recall_experiences("reach")
    assert found.state == {"pos": [0.5, 0.25, 0.5], "step": 3}
    assert found.success is True


def test_nearest_state_ranks_first_and_missing_fields_last(pushes: GraphMemory) -> None:
    pushes.add_experience("push the box", state={"object": "box"}, occurred_at=T0)
    found = pushes.recall_experiences(state={"object_pos": [0.8, 0.9, 0.0]}, k=6)
    assert [e.episode for e in found[:2]] == ["2", "4"]
    assert found[0].scores["state"] == pytest.approx(1.0)
    assert found[0].scores["state_distance"] == pytest.approx(0.0)
    assert found[-1].task == "push the box"  # no object_pos: no state score
    assert "state_distance" not in found[-1].scores
    near = pushes.recall_experiences(state={"object_pos": [0.1, 0.2, 0.0]}, k=3)
    assert {e.episode for e in near} == {"1", "3", "5"}


def test_fields_in_other_units_weigh_alike(memory: GraphMemory) -> None:
    # Mass in grams and position in metres: each field's distance is scaled by its spread.
    for i, (grams, x) in enumerate([(100, 0.0), (110, 0.9), (500, 0.05), (520, 1.0)]):
        memory.add_experience("lift", state={"mass": grams, "x": x}, episode=i, run_id="m")
    found = memory.recall_experiences(state={"mass": 105, "x": 0.02}, k=4)
    assert found[0].episode == "0"
    assert {found[1].episode, found[2].episode} == {"1", "2"}
    assert found[3].episode == "3"


def test_text_relevance(pushes: GraphMemory) -> None:
    found = pushes.recall_experiences("blue puck", k=2)
    assert {e.state["object"] for e in found} == {"blue puck"}
    assert found[0].scores["text"] == pytest.approx(1.0)


def test_outcome_modes(pushes: GraphMemory) -> None:
    only = pushes.recall_experiences("red cube", k=5, outcome="success_only")
    assert only and all(e.success is True for e in only)
    failures = pushes.recall_experiences("red cube", k=5, outcome="failure_only")
    assert failures and all(e.success is False for e in failures)
    first = pushes.recall_experiences(
        state={"object_pos": [0.8, 0.9, 0.0]}, k=3, outcome="success_first"
    )
    plain = pushes.recall_experiences(state={"object_pos": [0.8, 0.9, 0.0]}, k=3)
    assert {e.id for e in first} == {e.id for e in plain}  # the same 3 best matches
    flags = [e.success for e in first]
    assert flags == sorted(flags, reverse=True)  # their successes first
    assert first[0].success is True and plain[0].success is False


def test_filters_hold_for_every_returned_attempt(pushes: GraphMemory) -> None:
    for filters, check in [
        ({"outcome.success": False}, lambda e: e.success is False),
        ({"params.force": {"$lt": 3.1}}, lambda e: e.params["force"] < 3.1),
        ({"state.object": "red cube"}, lambda e: e.state["object"] == "red cube"),
        ({"state.object_pos.0": {"$gte": 0.5}}, lambda e: e.state["object_pos"][0] >= 0.5),
        ({"run_id": "r1", "outcome.final_distance": {"$lte": 0.01}}, lambda e: e.success),
        ({"state.object": {"$in": ["blue puck"]}}, lambda e: e.state["object"] == "blue puck"),
    ]:
        found = pushes.recall_experiences("push", k=10, filters=filters)
        assert found, filters
        assert all(check(e) for e in found), filters
    assert pushes.recall_experiences(k=10, filters={"state.object": "green"}) == []
    with pytest.raises(FilterError):
        pushes.recall_experiences(filters={"params.force": {"$near": 1}})


def test_meta_is_filter_only_and_payload_is_not_searched(memory: GraphMemory) -> None:
    memory.add_experience(
        "calibrate gripper",
        meta={"operator": "zanzibar"},
        payload={"log": "quixotic"},
        outcome={"success": True},
    )
    memory.add_experience("calibrate gripper", meta={"operator": "yoko"})
    (found,) = memory.recall_experiences(filters={"meta.operator": "zanzibar"})
    assert found.meta == {"operator": "zanzibar"}
    for word in ("zanzibar", "quixotic"):
        for hit in memory.recall_experiences(word, k=5):
            assert hit.scores["text"] == 0.0  # neither full-text searched nor embedded
        recall = memory.recall(word)
        assert not any(word in (e.content or "") for e in recall.episodes)
        assert not any(word in f.statement for f in recall.facts)


def test_runs_do_not_supersede_each_other(memory: GraphMemory) -> None:
    memory.add_experience("push", params={"force": 1.0}, run_id="a", episode=1)
    memory.add_experience("push", params={"force": 2.0}, run_id="b", episode=1)
    memory.add_experience("push", params={"force": 3.0})
    memory.add_experience("push", params={"force": 4.0})
    current = memory.facts(group_id="default")
    forces = sorted(f.value for f in current if f.predicate == "params.force")  # type: ignore[type-var]
    assert forces == [1.0, 2.0, 3.0, 4.0]
    subjects = {f.subject for f in current}
    assert {"run a episode 1", "run b episode 1"} <= subjects
    assert sum(s.startswith("experience ") for s in subjects) == 2


def test_a_rerecorded_attempt_supersedes_with_history(memory: GraphMemory) -> None:
    memory.add_experience(
        "push",
        params={"force": 1.0},
        outcome={"success": False},
        run_id="cal",
        episode="red",
        occurred_at=T0,
    )
    result = memory.add_experience(
        "push",
        params={"force": 1.4},
        outcome={"success": True},
        run_id="cal",
        episode="red",
        occurred_at=T0 + timedelta(days=1),
    )
    assert len(result.superseded) == 2  # force and success
    history = memory.history("run cal episode red", predicate="params.force")
    assert [f.value for f in history] == [1.0, 1.4]
    assert history[0].valid_to == T0 + timedelta(days=1)
    assert history[0].superseded_by == history[1].id
    then = memory.facts(group_id="default", entity="run cal episode red")
    assert {f.predicate for f in then} == {"params.force", "outcome.success"}
    # Both attempts stay recallable, newest first on a tie.
    found = memory.recall_experiences("push", k=5)
    assert [e.params["force"] for e in found] == [1.4, 1.0]


def test_recall_follows_forget_and_other_writers(memory: GraphMemory, tmp_path: object) -> None:
    first = _push(memory, 1, "red cube", [0.1, 0.2, 0.0], 3.0, True)
    _push(memory, 2, "red cube", [0.2, 0.2, 0.0], 3.5, True)
    assert len(memory.recall_experiences("red cube", k=5)) == 2
    memory.forget(group_id="default", episode_id=first)
    assert [e.episode for e in memory.recall_experiences("red cube", k=5)] == ["2"]
    _push(memory, 3, "red cube", [0.3, 0.2, 0.0], 4.0, False)
    assert len(memory.recall_experiences("red cube", k=5)) == 2


def test_another_connection_sees_new_attempts(tmp_path: object) -> None:
    url = f"{tmp_path}/shared.db"
    with GraphMemory(url, embedder=HashEmbedder(64)) as a, GraphMemory(
        url, embedder=HashEmbedder(64)
    ) as b:
        a.add_experience("push", params={"force": 1.0})
        assert len(b.recall_experiences("push")) == 1
        a.add_experience("push", params={"force": 2.0})
        assert len(b.recall_experiences("push")) == 2


def test_as_of_and_groups(pushes: GraphMemory) -> None:
    early = pushes.recall_experiences(k=10, as_of=T0 + timedelta(minutes=2, seconds=30))
    assert {e.episode for e in early} == {"1", "2"}
    pushes.add_experience("push the red cube to the target", group_id="other")
    assert len(pushes.recall_experiences("red cube", k=10, group_id="other")) == 1
    assert len(pushes.recall_experiences("red cube", k=10)) == 5


def test_recency_breaks_ties_and_its_weight_counts(memory: GraphMemory) -> None:
    for i in range(3):
        memory.add_experience("wipe", occurred_at=T0 + timedelta(hours=i), episode=i, run_id="w")
    assert [e.episode for e in memory.recall_experiences("wipe", k=3)] == ["2", "1", "0"]
    heavy = memory.recall_experiences(
        "wipe", k=3, weights=ExperienceWeights(text=0.0, recency=1.0)
    )
    assert heavy[0].scores["recency"] == 1.0 and heavy[-1].scores["recency"] == 0.0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"task": ""}, "task"),
        ({"task": "x", "state": [1, 2]}, "state must be a mapping"),
        ({"task": "x", "params": {"force": math.nan}}, "params"),
        ({"task": "x", "outcome": {"success": "yes"}}, "outcome['success']"),
        ({"task": "x", "params": {"f": object()}}, "params must be JSON-serialisable"),
        ({"task": "x", "run_id": 1.5}, "run_id"),
        ({"task": "x", "episode": " "}, "episode"),
        ({"task": "x", "params": {f"p{i}": i for i in range(501)}}, "at most 500"),
    ],
)
def test_bad_attempts_are_refused_before_anything_is_stored(
    memory: GraphMemory, kwargs: dict[str, object], message: str
) -> None:
    with pytest.raises(InputError, match=message.replace("[", r"\[").replace("]", r"\]")):
        memory.add_experience(**kwargs)  # type: ignore[arg-type]
    assert memory.stats("default")["episodes"] == 0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"k": 0}, "k must be"),
        ({"outcome": "best"}, "outcome must be one of"),
        ({"state": {"pos": "near"}}, "list of numbers"),
        ({"state": {"pos": [1.0, math.inf]}}, "finite"),
        ({"query": 3}, "query must be a string"),
        ({"weights": {"text": 1}}, "ExperienceWeights"),
    ],
)
def test_bad_recalls_are_refused(
    pushes: GraphMemory, kwargs: dict[str, object], message: str
) -> None:
    with pytest.raises(InputError, match=message):
        pushes.recall_experiences(**kwargs)  # type: ignore[arg-type]


def test_weights_are_checked() -> None:
    with pytest.raises(InputError, match=r"ExperienceWeights\.state"):
        ExperienceWeights(state=-1)
    with pytest.raises(InputError, match="share"):
        ExperienceWeights(dense=2)


def test_experience_episodes_can_be_ingested_as_records(memory: GraphMemory) -> None:
    record = {"task": "pour", "run_id": "k", "episode": 2, "params": {"angle": 30}}
    memory.add_episode(json.dumps(record), kind="experience")
    (found,) = memory.recall_experiences("pour")
    assert found.subject == "run k episode 2" and found.params == {"angle": 30}
    with pytest.raises(InputError, match="'task' string"):
        memory.add_episode(json.dumps({"params": {}}), kind="experience")


def test_the_same_attempt_twice_is_two_attempts_unless_resent_with_its_time(
    memory: GraphMemory,
) -> None:
    first = memory.add_experience("wipe", params={"speed": 1})
    second = memory.add_experience("wipe", params={"speed": 1})
    assert first.episode_id != second.episode_id and not second.already_present
    resent = memory.add_experience("wipe", params={"speed": 1}, occurred_at=T0)
    again = memory.add_experience("wipe", params={"speed": 1}, occurred_at=T0)
    assert again.already_present and again.episode_id == resent.episode_id
    assert len(memory.recall_experiences("wipe", k=10)) == 3


def test_export_and_import_carry_attempts_whole(pushes: GraphMemory, tmp_path: object) -> None:
    rows = list(pushes.export(group_id="default"))
    with GraphMemory(f"{tmp_path}/copy.db", embedder=HashEmbedder(64)) as copy:
        copy.import_rows(rows)
        before = pushes.recall_experiences("red cube", state={"object_pos": [0.1, 0.2, 0]})
        after = copy.recall_experiences("red cube", state={"object_pos": [0.1, 0.2, 0]})
        assert [e.model_dump() for e in after] == [e.model_dump() for e in before]
        assert {f.value for f in copy.history("run r1 episode 2")} == {5.0, False}
