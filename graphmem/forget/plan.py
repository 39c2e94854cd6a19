"""Forget plans: provenance-refcounted deletes that leave no orphans and repair timelines."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from .._predicates import Family, default_families
from ..reconcile.replay import load_timelines, rebuild_timeline
from ..reconcile.turn_links import relink_after_forget
from ..store._base import ProvenanceRow, StoreReader, WritePlan

__all__ = [
    "own_episode_ids",
    "plan_forget_entity",
    "plan_forget_episodes",
    "plan_forget_group",
]


def _rebuild_timelines(
    reader: StoreReader,
    plan: WritePlan,
    group_id: str,
    touched: Sequence[str],
    keep: Callable[[ProvenanceRow], bool],
    functional: dict[str, bool],
    now: int,
    families: Mapping[str, Family] | None = None,
) -> list[str]:
    """Replay the timelines of the ``touched`` facts without the rows ``keep`` rejects; the
    plan gets the difference. Returns the ids of the facts that no longer exist. A predicate
    family's members are replayed together (``families``: by predicate; default: the
    built-in families)."""
    rows = reader.facts_by_ids(list(touched))
    if families is None:
        families = default_families(functional)
    timelines, of_family = load_timelines(reader, group_id, rows, families)
    if not timelines:
        return []
    owner = {f.id: pair for pair, tl in timelines.items() for f in tl.facts}
    provenance, endings = reader.fact_claims(list(owner))
    rows_of: dict[tuple[str, str], tuple[list[ProvenanceRow], list[ProvenanceRow]]] = {
        pair: ([], []) for pair in timelines
    }
    for row in provenance:
        rows_of[owner[row.fact_id]][0].append(row)
    for row in endings:
        rows_of[owner[row.fact_id]][1].append(row)
    deleted: list[str] = []
    for pair, timeline in timelines.items():
        rebuilt = rebuild_timeline(
            group_id,
            pair,
            timeline,
            *rows_of[pair],
            functional=functional.get(pair[1], False),
            keep=keep,
            now=now,
            family=of_family.get(pair),
        )
        plan.delete_fact_ids.extend(rebuilt.delete_fact_ids)
        plan.facts_new.extend(rebuilt.facts_new)
        plan.facts_update.extend(rebuilt.facts_update)
        plan.claims_reset.extend(rebuilt.claims_reset)
        plan.provenance.extend(rebuilt.provenance)
        plan.endings.extend(rebuilt.endings)
        plan.links_add.extend(rebuilt.links_add)
        plan.links_remove.extend(rebuilt.links_remove)
        deleted.extend(rebuilt.delete_fact_ids)
        for fact in timeline.facts:
            if fact.id in rebuilt.delete_fact_ids:
                plan.prune_entity_ids.append(fact.subject_id)
                if fact.object_id:
                    plan.prune_entity_ids.append(fact.object_id)
    return deleted


def plan_forget_episodes(
    reader: StoreReader,
    group_id: str,
    episode_ids: Sequence[str],
    functional: dict[str, bool],
    now: int,
    families: Mapping[str, Family] | None = None,
) -> WritePlan:
    counts = reader.episode_fact_ids(episode_ids)
    touched = sorted({*counts, *reader.episode_ended_fact_ids(episode_ids)})
    plan = WritePlan(delete_episode_ids=list(episode_ids))
    gone = set(episode_ids)
    removed = _rebuild_timelines(
        reader,
        plan,
        group_id,
        touched,
        lambda row: row.episode_id not in gone,
        functional,
        now,
        families,
    )
    plan.prune_entity_ids.extend(reader.episode_entity_ids(episode_ids))
    relink_after_forget(reader, plan, episode_ids, now)
    plan.audit = {
        "action": "forget_episode",
        "group_id": group_id,
        "at": now,
        "episode_ids": list(episode_ids),
        "episodes_removed": len(episode_ids),
        "facts_removed": len(removed),
        "facts_kept": len([fid for fid in counts if fid not in set(removed)]),
        "entities_removed": 0,
    }
    return plan


def own_episode_ids(
    reader: StoreReader, group_id: str, entity_ids: Sequence[str], speaker_keys: Sequence[str]
) -> list[str]:
    """The entity's own episodes: those it spoke (speaker key in ``speaker_keys``) and those
    that state or negate a fact about it (as subject)."""
    spoken = reader.speaker_episode_ids(group_id, speaker_keys) if speaker_keys else []
    about = reader.subject_episode_ids(group_id, entity_ids)
    return list(dict.fromkeys([*spoken, *about]))


def plan_forget_entity(
    reader: StoreReader,
    group_id: str,
    entity_ids: Sequence[str],
    functional: dict[str, bool],
    now: int,
    *,
    speaker_keys: Sequence[str] = (),
    episodes: bool = False,
    families: Mapping[str, Family] | None = None,
) -> WritePlan:
    """Forget the entities and every fact about them. Their own episodes (``own_episode_ids``)
    are forgotten too when ``episodes``, as if never ingested; otherwise they are kept, and
    the audit lists them (``own_episode_ids_kept``): their text still names the entity.
    With no ``entity_ids`` (an entity already forgotten), only the episodes it spoke."""
    own = own_episode_ids(reader, group_id, entity_ids, speaker_keys)
    doomed = sorted({fid for eid in entity_ids for fid in reader.entity_fact_ids(eid)})
    plan = WritePlan(delete_entity_ids=list(entity_ids))
    gone_facts = set(doomed)
    gone_episodes = set(own) if episodes else set()
    touched = set(doomed)
    support: dict[str, int] = {}
    if episodes and own:
        plan.delete_episode_ids = list(own)
        relink_after_forget(reader, plan, own, now)
        support = reader.episode_fact_ids(own)
        touched.update(support)
        touched.update(reader.episode_ended_fact_ids(own))
    removed = _rebuild_timelines(
        reader,
        plan,
        group_id,
        sorted(touched),
        lambda row: row.fact_id not in gone_facts and row.episode_id not in gone_episodes,
        functional,
        now,
        families,
    )
    if episodes and own:
        plan.prune_entity_ids.extend(reader.episode_entity_ids(own))
    plan.prune_entity_ids = [e for e in plan.prune_entity_ids if e not in set(entity_ids)]
    plan.audit = {
        "action": "forget_entity",
        "group_id": group_id,
        "at": now,
        "entity_ids": list(entity_ids),
        "episodes_removed": len(gone_episodes),
        "facts_removed": len(removed),
        "facts_kept": len([fid for fid in support if fid not in set(removed)]),
        "entities_removed": len(entity_ids),
        "own_episodes_kept": 0 if episodes else len(own),
    }
    plan.audit["episode_ids" if episodes else "own_episode_ids_kept"] = list(own)
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
