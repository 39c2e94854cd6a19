"""Pins, feedback and decay scenarios (issue 16), run on SQLite (tests/unit/test_usage.py) and
on a Bolt server (tests/integration/test_neo4j_usage.py): the same checks on both stores."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from graphmem import GraphMemory, InputError, RetrievalConfig

T = datetime(2024, 1, 1, tzinfo=UTC)
PREDICATES = {"answer_style": "one", "lives_in": "one"}


def snapshot(mem: GraphMemory, group: str) -> dict[str, Any]:
    """Every temporal read: current facts, all facts, a history, an as_of recall's records."""
    def dump(facts: list[Any]) -> list[dict[str, Any]]:
        return sorted((f.model_dump(mode="json") for f in facts), key=lambda d: d["id"])

    recalled = mem.recall("where does Alice live", group_id=group, as_of=T + timedelta(days=40))
    return {
        "facts": dump(mem.facts(group_id=group)),
        "all": dump(mem.facts(group_id=group, include_history=True)),
        "history": dump(mem.history("Alice", group_id=group)),
        "as_of_ids": sorted(h.id for h in recalled.facts),
        "as_of_valid": sorted(
            (h.statement, h.valid_from.isoformat(), str(h.valid_to)) for h in recalled.facts
        ),
    }


def seed(mem: GraphMemory, group: str) -> dict[str, str]:
    mem.add_fact("Alice", "lives_in", "Paris", group_id=group, valid_from=T)
    mem.add_fact("Alice", "likes", "green tea", group_id=group, valid_from=T)
    mem.add_episode("I adopted a cat named Miso.", group_id=group, reference_time=T,
                    metadata={"speaker": "Bob"})
    mem.add_episode("Bob's cat Miso likes tuna.", group_id=group,
                    reference_time=T + timedelta(days=300), metadata={"speaker": "Carol"})
    facts = {f.predicate: f.id for f in mem.facts(group_id=group, entity="Alice")}
    return facts


def pins_follow_the_timeline(mem: GraphMemory, group: str) -> None:
    facts = seed(mem, group)
    with pytest.raises(InputError, match="no fact"):
        mem.pin("fact_does_not_exist", group_id=group)
    with pytest.raises(InputError, match="no fact"):
        mem.pin(facts["lives_in"], group_id=group + "-other")
    first = mem.pin(facts["lives_in"], group_id=group, source="test")
    again = mem.pin(facts["lives_in"])  # idempotent: the same pin, no new write
    assert first.pin_episode_id == again.pin_episode_id and first.source == "test"
    rule = mem.add_fact("user", "answer_style", value="British English", group_id=group,
                        statement="Answer in British English.", valid_from=T, pinned=True)
    assert rule.facts_added == 1
    assert [p.statement for p in mem.pins(group)] == [
        "Alice lives in Paris.", "Answer in British English."
    ]
    # Whatever the query: the rules come first, in pin order.
    ctx = mem.recall("what does the cat eat", group_id=group).to_context()
    assert ctx.splitlines()[:3] == [
        "Standing rules (pinned):", "- Alice lives in Paris.", "- Answer in British English."
    ]
    # Superseded: the current value, and what it was.
    mem.add_fact("Alice", "lives_in", "Berlin", group_id=group, valid_from=T + timedelta(days=60))
    ctx = mem.recall("cat", group_id=group).to_context()
    assert "- Alice lives in Berlin. (changed; was: Alice lives in Paris.)" in ctx
    then = mem.recall("cat", group_id=group, as_of=T + timedelta(days=30))
    assert [p.status for p in then.pinned] == ["current", "current"]
    assert then.to_context().splitlines()[1] == "- Alice lives in Paris."
    before = mem.recall("cat", group_id=group, as_of=T - timedelta(days=1))
    assert [p.status for p in before.pinned] == ["not_yet", "not_yet"]
    # The cap, and how many were left out.
    capped = GraphMemory(mem.store, retrieval=RetrievalConfig(pinned_limit=1),
                         predicates=PREDICATES)
    result = capped.recall("cat", group_id=group)
    assert len(result.pinned) == 1 and result.pinned_omitted == 1
    assert "- … and 1 more pinned (not shown)" in result.to_context()
    # Unpin: gone from the context; the fact is untouched.
    assert mem.unpin(facts["lives_in"]) is True
    assert mem.unpin(facts["lives_in"]) is False
    assert [p.statement for p in mem.pins(group)] == ["Answer in British English."]
    assert mem.get_facts([facts["lives_in"]])[0].statement == "Alice lives in Paris."


def usage_episodes_are_bookkeeping(mem: GraphMemory, group: str) -> None:
    facts = seed(mem, group)
    before = mem.stats(group)["facts"]
    mem.pin(facts["likes"])
    fb = mem.feedback(facts["likes"], True, note="target pinned useful")
    assert mem.stats(group)["facts"] == before  # no facts from pin or feedback episodes
    episode = mem.episode(fb)
    assert episode is not None and episode.kind == "feedback"
    found = mem.recall("target pinned useful note true", group_id=group, k=50)
    assert all(e.id != fb and "target" not in (e.content or "") for e in found.episodes)
    with pytest.raises(InputError, match="no fact or episode"):
        mem.feedback(fb, True)  # feedback on a feedback record: not an item
    with pytest.raises(InputError):
        mem.feedback(facts["likes"], "yes")  # type: ignore[arg-type]
    # Forgetting the pin episode removes the pin.
    pin_episode = mem.pins(group)[0].pin_episode_id
    mem.forget(group_id=group, episode_id=pin_episode)
    assert mem.pins(group) == []


def feedback_and_decay_change_rank_not_truth(mem: GraphMemory, group: str) -> None:
    seed(mem, group)
    query = "Miso the cat"
    plain = snapshot(mem, group)
    result = mem.recall(query, group_id=group)
    old, new = sorted(
        (e for e in result.episodes if "Miso" in (e.content or "")),
        key=lambda e: e.reference_time,
    )
    scores = {h.id: h.score for h in result.facts}
    # Feedback: not useful ranks an item down; useful ranks it up; times are untouched.
    target = result.facts[0]
    mem.feedback(target.id, False, source="test")
    down = {h.id: h.score for h in mem.recall(query, group_id=group).facts}
    assert down[target.id] < scores[target.id]
    mem.feedback(target.id, True)
    mem.feedback(target.id, True)
    up = {h.id: h.score for h in mem.recall(query, group_id=group).facts}
    assert up[target.id] > scores[target.id]
    assert snapshot(mem, group) == plain
    # Decay: at the end of the timeline the older episode fades below the newer one...
    day = T + timedelta(days=301)
    decaying = GraphMemory(
        mem.store, predicates=PREDICATES,
        retrieval=RetrievalConfig(decay_half_life=30, decay_floor=0.1, feedback_weight=0.5),
    )
    ranked = [e.id for e in decaying.recall(query, group_id=group, as_of=day).episodes]
    assert ranked.index(new.id) < ranked.index(old.id)
    # ...until it is used again: positive feedback at that day resets its age.
    for _ in range(3):
        decaying.feedback(old.id, True, at=day)
    ranked = [e.id for e in decaying.recall(query, group_id=group, as_of=day).episodes]
    assert ranked.index(old.id) < ranked.index(new.id)
    assert snapshot(decaying, group) == plain
    # The relative cutoff keeps fewer items, never the weak ones.
    cut = GraphMemory(mem.store, predicates=PREDICATES,
                      retrieval=RetrievalConfig(min_relative_score=0.9))
    assert len(cut.recall(query, group_id=group).episodes) < len(result.episodes)


def pins_survive_export_and_import(mem: GraphMemory, group: str, target: GraphMemory) -> None:
    facts = seed(mem, group)
    mem.pin(facts["likes"])
    mem.feedback(facts["likes"], True)
    rows = list(mem.export(group_id=group))
    assert {r.get("kind") for r in rows if r.get("type") == "episode"} >= {"pin", "feedback"}
    target.import_rows(rows)
    assert [p.fact_id for p in target.pins(group)] == [facts["likes"]]
