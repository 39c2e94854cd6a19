"""Forget plans: provenance-refcounted deletes that leave no orphans and repair timelines."""

from __future__ import annotations

from collections.abc import Sequence

from ._reconcile import TimelineState
from .store._base import StoreReader, WritePlan

__all__ = ["plan_forget_entity", "plan_forget_episodes", "plan_forget_group"]


def _repair_timelines(
    reader: StoreReader,
    plan: WritePlan,
    group_id: str,
    doomed: Sequence[str],
    predicates_functional: dict[str, bool],
    now: int,
) -> None:
    """Drop doomed facts from their timelines and recompute what the survivors look like."""
    rows = reader.facts_by_ids(list(doomed))
    pairs = sorted({(r.subject_id, r.predicate) for r in rows})
    if not pairs:
        return
    timelines = reader.timelines(group_id, pairs)
    doomed_set = set(doomed)
    for pair, timeline in timelines.items():
        state = TimelineState(
            group_id,
            pair[0],
            pair[1],
            timeline,
            functional=predicates_functional.get(pair[1], False),
            now=now,
            episode_id="",
        )
        state.remove(doomed_set)
        _new, updates, links_add, links_remove = state.finish()
        plan.facts_update.extend(u for u in updates if u.id not in doomed_set)
        plan.links_add.extend(
            lk for lk in links_add if lk.src not in doomed_set and lk.dst not in doomed_set
        )
        plan.links_remove.extend(links_remove)
    for row in rows:
        plan.prune_entity_ids.append(row.subject_id)
        if row.object_id:
            plan.prune_entity_ids.append(row.object_id)


def plan_forget_episodes(
    reader: StoreReader,
    group_id: str,
    episode_ids: Sequence[str],
    functional: dict[str, bool],
    now: int,
) -> WritePlan:
    counts = reader.episode_fact_ids(episode_ids)
    doomed = sorted(fid for fid, n in counts.items() if n <= 1)
    plan = WritePlan(delete_episode_ids=list(episode_ids), delete_fact_ids=doomed)
    _repair_timelines(reader, plan, group_id, doomed, functional, now)
    plan.prune_entity_ids.extend(reader.episode_entity_ids(episode_ids))
    plan.audit = {
        "action": "forget_episode",
        "group_id": group_id,
        "at": now,
        "episode_ids": list(episode_ids),
        "episodes_removed": len(episode_ids),
        "facts_removed": len(doomed),
        "facts_kept": len(counts) - len(doomed),
        "entities_removed": 0,
    }
    return plan


def plan_forget_entity(
    reader: StoreReader,
    group_id: str,
    entity_ids: Sequence[str],
    functional: dict[str, bool],
    now: int,
) -> WritePlan:
    doomed = sorted({fid for eid in entity_ids for fid in reader.entity_fact_ids(eid)})
    plan = WritePlan(delete_fact_ids=doomed, delete_entity_ids=list(entity_ids))
    _repair_timelines(reader, plan, group_id, doomed, functional, now)
    plan.prune_entity_ids = [e for e in plan.prune_entity_ids if e not in set(entity_ids)]
    plan.audit = {
        "action": "forget_entity",
        "group_id": group_id,
        "at": now,
        "entity_ids": list(entity_ids),
        "episodes_removed": 0,
        "facts_removed": len(doomed),
        "facts_kept": 0,
        "entities_removed": len(entity_ids),
    }
    return plan


def plan_forget_group(reader: StoreReader, group_id: str, now: int) -> WritePlan:
    episodes = reader.group_episode_ids(group_id)
    facts = reader.group_fact_ids(group_id)
    entities = reader.group_entity_ids(group_id)
    plan = WritePlan(delete_episode_ids=episodes, delete_fact_ids=facts, delete_entity_ids=entities)
    plan.audit = {
        "action": "forget_group",
        "group_id": group_id,
        "at": now,
        "episodes_removed": len(episodes),
        "facts_removed": len(facts),
        "facts_kept": 0,
        "entities_removed": len(entities),
    }
    return plan
