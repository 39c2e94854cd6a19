"""``GraphMemory.forget``: check the request, run the matching plan in one write, report.

What a forget removes and how the touched timelines are replayed is ``_forget`` and
``_replay``; this module only chooses the plan and turns its audit into a ``ForgetResult``.
"""

from __future__ import annotations

from collections.abc import Callable

from .._args import check_group, check_text, show
from .._errors import InputError, NotFoundError
from .._ids import entity_key
from .._models import ForgetResult
from .._predicates import PredicateRegistry
from ..retrieve.reads import entity_ids
from ..store import GraphStore
from ..store._base import StoreReader, WritePlan
from .plan import plan_forget_entity, plan_forget_episodes, plan_forget_group

__all__ = ["forget"]


def forget(
    ready: Callable[[], GraphStore],
    predicates: PredicateRegistry,
    clock: Callable[[], int],
    *,
    group_id: str,
    episode_id: str | None,
    entity: str | None,
    all: bool,
    episodes: bool,
) -> ForgetResult:
    """``clock``: record time, read once the store is open (the forget's audit and the
    replayed timelines carry it)."""
    group_id = check_group(group_id)
    chosen = sum(x is not None for x in (episode_id, entity, True if all else None))
    if chosen != 1:
        raise InputError("forget needs exactly one of episode_id=, entity= or all=True")
    if not isinstance(episodes, bool):
        raise InputError(f"episodes must be True or False, got {show(episodes)}")
    if episodes and entity is None:
        raise InputError("episodes=True goes with entity= (an entity's own episodes)")
    store = ready()
    now = clock()
    functional = {p.name: p.cardinality == "one" for p in predicates}
    families = predicates.families_by_predicate()  # replayed as ingest applied them
    if episode_id is not None:
        check_text(episode_id, "episode_id")
        ep = store.get_episode(episode_id)
        if ep is None or ep.group_id != group_id:
            raise NotFoundError(f"no episode {episode_id!r} in group {group_id!r}")
        plan = store.write(
            lambda r: plan_forget_episodes(r, group_id, [episode_id], functional, now, families)
        )
    elif entity is not None:
        ids = entity_ids(ready, group_id, entity)
        if not ids and not episodes:
            raise NotFoundError(f"no entity named {entity!r} in group {group_id!r}")
        names = [entity] + [
            n for e in store.find_entities_by_ids(group_id, ids) for n in (e.name, *e.aliases)
        ]
        keys = sorted({entity_key(n) for n in names if n.strip()})

        def forget_entity(reader: StoreReader) -> WritePlan:
            plan = plan_forget_entity(
                reader,
                group_id,
                ids,
                functional,
                now,
                speaker_keys=keys,
                episodes=episodes,
                families=families,
            )
            if not ids and not plan.delete_episode_ids:  # nothing written: rolled back
                raise NotFoundError(
                    f"no entity named {entity!r} in group {group_id!r}, and no episode it spoke"
                )
            return plan

        plan = store.write(forget_entity)
    else:
        plan = store.write(lambda r: plan_forget_group(r, group_id, now))
    audit = plan.audit or {}
    return ForgetResult(
        group_id=group_id,
        episodes_removed=int(audit.get("episodes_removed", 0)),
        facts_removed=int(audit.get("facts_removed", 0)),
        entities_removed=int(audit.get("entities_removed", 0)),
        facts_kept=int(audit.get("facts_kept", 0)),
        audit_id=audit.get("id"),
        own_episodes_kept=int(audit.get("own_episodes_kept", 0)),
        own_episode_ids_kept=list(audit.get("own_episode_ids_kept", [])),
    )
