"""The read calls of ``GraphMemory`` (recall, history, facts): argument checks and time views.

Ranking lives in ``_retrieve``; the queries live in the stores. ``ready`` opens the store on
first use, after the arguments were checked (a bad argument never needs a reachable store).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from .._args import check_group, check_text, show
from .._errors import InputError
from .._ids import entity_key
from .._models import FactRecord, RecallResult
from .._predicates import normalize_predicate
from .._time import now_ms, require_aware, to_ms
from ..store import GraphStore, TimeView
from .retriever import Retriever

__all__ = ["entity_ids", "facts", "history", "recall", "time_view"]


def time_view(as_of: datetime | None, known_at: datetime | None) -> TimeView:
    """The world at ``as_of`` as believed at ``known_at`` (each defaulting to now; ``as_of``
    to ``known_at`` when only that is given)."""
    now = now_ms()
    at = require_aware(as_of, "as_of")
    known = require_aware(known_at, "known_at")
    known_ms = to_ms(known) if known is not None else now
    at_ms = to_ms(at) if at is not None else (known_ms if known is not None else now)
    return TimeView(at=at_ms, known=known_ms)


def recall(
    retriever: Callable[[], Retriever],
    query: str,
    *,
    group_id: str,
    as_of: datetime | None,
    known_at: datetime | None,
    k: int,
    hops: int,
    filters: Mapping[str, Any] | None,
) -> RecallResult:
    group_id = check_group(group_id)
    if not isinstance(query, str):
        raise InputError(f"query must be a string, got {type(query).__name__}")
    if not query.strip():
        raise InputError("query must not be empty: say what to recall")
    if not isinstance(k, int) or isinstance(k, bool) or k < 1 or k > 1000:
        raise InputError(f"k must be an integer between 1 and 1000, got {show(k)}")
    if not isinstance(hops, int) or isinstance(hops, bool) or not 0 <= hops <= 3:
        raise InputError(f"hops must be 0, 1, 2 or 3, got {show(hops)}")
    view = time_view(as_of, known_at)
    return retriever().search(
        query,
        group_id=group_id,
        view=view,
        k=k,
        hops=hops,
        filters=filters,
        as_of=require_aware(as_of, "as_of"),
        known_at=require_aware(known_at, "known_at"),
    )


def entity_ids(ready: Callable[[], GraphStore], group_id: str, entity: str) -> list[str]:
    """The ids of the entities ``entity`` names (by normalised key) in the group."""
    if not isinstance(entity, str) or not entity.strip():
        raise InputError("entity must be a non-empty string")
    check_text(entity, "entity")
    found = ready().find_entities(group_id, [entity_key(entity)])
    return [e.id for e in found]


def history(
    ready: Callable[[], GraphStore], entity: str, *, predicate: str | None, group_id: str
) -> list[FactRecord]:
    group_id = check_group(group_id)
    ids = entity_ids(ready, group_id, entity)
    canon = normalize_predicate(predicate) if predicate is not None else None
    if not ids:
        return []
    facts = ready().list_facts(
        group_id, entity_ids=ids, predicate=canon, view=None, subject_only=True
    )
    return sorted(facts, key=lambda f: (f.valid_from, f.recorded_at))


def facts(
    ready: Callable[[], GraphStore], *, group_id: str, entity: str | None, include_history: bool
) -> list[FactRecord]:
    group_id = check_group(group_id)
    store = ready()
    ids = None if entity is None else entity_ids(ready, group_id, entity)
    view = None if include_history else time_view(None, None)
    return store.list_facts(group_id, entity_ids=ids, view=view)
