"""A LangGraph ``BaseStore`` on graphmem: LangGraph agents' and LangMem's long-term memory with
history, supersession and as-of reads.

Uses ``langgraph`` (``pip install 'graphmem[langgraph]'``)::

    from langgraph.graph import StateGraph
    from graphmem import GraphMemory
    from graphmem.integrations.langgraph import GraphMemStore

    store = GraphMemStore(GraphMemory("memory.db"))
    graph = StateGraph(State).add_node(...).compile(store=store)

How LangGraph's model maps onto graphmem's (docs/langgraph.md):

- a namespace is a memory group: ``("users", "u1", "memories")`` is the group
  ``users.u1.memories`` (LangGraph forbids ``.`` in a label, so the mapping is one-to-one),
  after an optional ``group_prefix``;
- an item is an entity named after its key, and each ``put`` is one JSON episode whose facts are
  the whole value (predicate ``item``, functional: a later ``put`` supersedes it, so history and
  ``as_of`` reads come for free) and every leaf of the value (``value.<path>``, also
  functional), which graphmem's recall filters and ranks on; a leaf the new value no longer
  has is negated;
- ``search`` with a query is ``GraphMemory.recall`` in each matching group, with the store's
  ``filter`` handed to recall's ``filters=`` (equality and ``$gt``/``$gte``/``$lt``/``$lte``),
  and every filter checked again on the item's value with LangGraph's own rules; without a
  query it lists the items, most recently updated first;
- ``delete`` (``put`` of ``None``) is ``GraphMemory.forget`` of the item's entity with its
  episodes: nothing of it is left.

The async methods run the same calls in a bounded worker pool (``AsyncGraphMemory.run``), so the
event loop is never blocked, and a cancelled call either never ran or finished whole.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

try:
    from langgraph.store.base import (
        BaseStore,
        GetOp,
        Item,
        ListNamespacesOp,
        MatchCondition,
        Op,
        PutOp,
        Result,
        SearchItem,
        SearchOp,
    )
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "graphmem.integrations.langgraph needs langgraph: pip install 'graphmem[langgraph]'"
        f" ({exc})"
    ) from exc

from .._async_memory import AsyncGraphMemory
from .._errors import InputError
from .._memory import GraphMemory
from .._models import EpisodeRecord, ExtractedEntity, ExtractedFact, Extraction, FactRecord
from ..extract._base import ExtractionContext
from ..extract.structured import StructuredExtractor, count_leaves, parse_json_record
from ..retrieve.reads import time_view
from .langgraph_filters import graphmem_filters, leaves, matches

__all__ = ["GraphMemStore", "item_subject"]

ITEM = "item"  # the predicate holding an item's whole value (JSON text)
# The structured extractor refuses a record of more leaves than this; such a value is stored
# whole (the item fact) without a fact per leaf: filters on it are then checked on the value.
LEAF_FACTS_MAX = 500
_OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")


def item_subject(key: str) -> str:
    """The entity name of an item: its key, then a short hash of the exact key, because
    graphmem matches entity names case- and punctuation-blind ("Pref" would be "pref")."""
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:10]
    return f"{key} #{digest}"


def _text_of(value: Any) -> str:
    """The string leaves of a value, for the item fact's statement (what recall's full-text
    search reads)."""
    return " ".join(str(leaf) for _, leaf in leaves(value) if isinstance(leaf, str))


class _ItemExtractor(StructuredExtractor):
    """Reads the episode a ``put`` writes: ``{"key", "namespace", "value", "removed"}``."""

    name = "langgraph-item"

    def subject(self, record: dict[str, Any], episode_id: str) -> tuple[str, list[str]]:
        return item_subject(str(record["key"])), ["key"]

    def fields(self, record: dict[str, Any], used: list[str]) -> list[tuple[str, Any]]:
        return [("value", record["value"])]

    def extract(self, episode: EpisodeRecord, context: ExtractionContext) -> Extraction:
        record = parse_json_record(episode.content)
        small = count_leaves(record["value"]) <= LEAF_FACTS_MAX
        leaf_facts = super().extract(episode, context).facts if small else []
        subject = item_subject(str(record["key"]))
        value_text = json.dumps(record["value"], ensure_ascii=False, sort_keys=True)
        whole = ExtractedFact(
            subject=subject,
            predicate=ITEM,
            value=value_text,
            statement=f"{record['key']}: {_text_of(record['value']) or value_text}"[:2000],
            subject_type="store_item",
            functional=True,
        )
        # Leaves the previous value had and this one lacks: no longer true of the item.
        gone = [
            ExtractedFact(
                subject=subject, predicate=path, value=old, kind="negate",
                subject_type="store_item", functional=True,
                statement=f"{subject} {path.replace('_', ' ')} = {json.dumps(old)}",
            )
            for path, old in record.get("removed", [])
        ]
        return Extraction(
            entities=[ExtractedEntity(name=subject, type="store_item")],
            facts=[whole, *leaf_facts, *gone],
        )


class GraphMemStore(BaseStore):
    """LangGraph's long-term memory store on a :class:`~graphmem.GraphMemory`.

    - ``memory``: the memory to use (SQLite or Neo4j; the caller keeps ownership).
    - ``group_prefix``: put before every namespace's group name, e.g. ``"lg."`` to keep the
      store's groups apart from others in the same memory; ``list_namespaces`` lists only
      groups that start with it.
    - ``source``: the source recorded on the episodes each ``put`` writes.
    - ``max_workers``: how many async calls run at once (the rest wait their turn).

    Beyond ``BaseStore``: ``get(..., as_of=T)`` reads the value an item had at ``T`` and
    ``history(namespace, key)`` every value it had, oldest first.
    """

    supports_ttl = False

    def __init__(
        self,
        memory: GraphMemory,
        *,
        group_prefix: str = "",
        source: str = "langgraph",
        max_workers: int = 4,
    ) -> None:
        if not isinstance(memory, GraphMemory):
            raise InputError(f"memory must be a GraphMemory, got {type(memory).__name__}")
        self.memory = memory
        self.group_prefix = group_prefix
        self.source = source
        self._extractor = _ItemExtractor()
        self._worker = AsyncGraphMemory(memory, max_workers=max_workers)
        self._groups: tuple[object, list[tuple[str, ...]]] | None = None
        self._clock_lock = threading.Lock()
        self._last_time: datetime | None = None

    # ------------------------------------------------------------------ namespaces
    def group_of(self, namespace: Sequence[str]) -> str:
        if not namespace or not all(isinstance(x, str) and x and "." not in x for x in namespace):
            raise InputError(
                f"a namespace is a non-empty tuple of non-empty labels without '.', got "
                f"{tuple(namespace)!r}"
            )
        return self.group_prefix + ".".join(namespace)

    def namespace_of(self, group_id: str) -> tuple[str, ...] | None:
        if not group_id.startswith(self.group_prefix):
            return None
        rest = group_id[len(self.group_prefix):]
        return tuple(rest.split(".")) if rest else None

    def _namespaces(self) -> list[tuple[str, ...]]:
        """The store's namespaces. The list of groups comes with the store's counts, a scan of
        the store; it is kept while the store's change token (SQLite: any commit, by any
        process) says nothing was written, so searches between writes do not repeat it."""
        self.memory.connect()
        token = self.memory.store.change_token()
        if token is not None and self._groups is not None and self._groups[0] == token:
            return self._groups[1]
        groups: list[str] = self.memory.stats().get("groups", [])
        found = (self.namespace_of(group) for group in groups)
        spaces = sorted(ns for ns in found if ns is not None)
        self._groups = (token, spaces) if token is not None else None
        return spaces

    def _now(self) -> datetime:
        """Strictly increasing times: two puts of one key in the same millisecond must still
        be one after the other, so the later supersedes the earlier."""
        with self._clock_lock:
            now = datetime.now(UTC)
            now = now.replace(microsecond=now.microsecond - now.microsecond % 1000)
            if self._last_time is not None and now <= self._last_time:
                now = self._last_time + timedelta(milliseconds=1)
            self._last_time = now
            return now

    # ------------------------------------------------------------------ reads
    def _item_facts(self, group_id: str, key: str) -> list[FactRecord]:
        return self.memory.history(item_subject(key), predicate=ITEM, group_id=group_id)

    @staticmethod
    def _pick(facts: Sequence[FactRecord], as_of: datetime | None) -> FactRecord | None:
        if as_of is None:
            current = [f for f in facts if f.is_current()]
            return current[-1] if current else None
        held = [
            f for f in facts
            if f.expired_at is None and f.valid_from <= as_of
            and (f.valid_to is None or as_of < f.valid_to)
        ]
        return held[-1] if held else None

    @staticmethod
    def _item(
        namespace: tuple[str, ...], key: str, fact: FactRecord, created: datetime,
        score: float | None = None, *, search: bool = False,
    ) -> Item:
        value = json.loads(str(fact.value))
        if search:
            return SearchItem(namespace, key, value, created, fact.valid_from, score)
        return Item(value=value, key=key, namespace=namespace, created_at=created,
                    updated_at=fact.valid_from)

    def _get(
        self, namespace: tuple[str, ...], key: str, as_of: datetime | None = None
    ) -> Item | None:
        facts = self._item_facts(self.group_of(namespace), key)
        fact = self._pick(facts, as_of)
        if fact is None:
            return None
        return self._item(namespace, key, fact, facts[0].valid_from)

    def history(self, namespace: tuple[str, ...], key: str) -> list[Item]:
        """Every value the item has had, oldest first (a deleted item has none)."""
        facts = [f for f in self._item_facts(self.group_of(namespace), key)
                 if f.expired_at is None]
        return [self._item(namespace, key, f, facts[0].valid_from) for f in facts]

    def _current_items(self, group_id: str) -> dict[str, FactRecord]:
        """The group's items as their current ``item`` facts, by key."""
        store = self.memory.store
        self.memory.connect()
        facts = store.list_facts(group_id, predicate=ITEM, view=time_view(None, None))
        out: dict[str, FactRecord] = {}
        for fact in facts:
            key = fact.subject.rsplit(" #", 1)[0]
            if item_subject(key) == fact.subject:
                out[key] = fact
        return out

    def _created(self, group_id: str, keys: Iterable[str]) -> dict[str, datetime]:
        return {
            key: facts[0].valid_from
            for key in keys
            if (facts := self._item_facts(group_id, key))
        }

    def _search(self, op: SearchOp) -> list[SearchItem]:
        prefix = tuple(op.namespace_prefix)
        spaces = [ns for ns in self._namespaces() if ns[: len(prefix)] == prefix]
        wanted = op.offset + op.limit
        found: list[tuple[float, datetime, tuple[str, ...], str, FactRecord]] = []
        for namespace in spaces:
            group = self.group_of(namespace)
            items = self._current_items(group)
            keep = {k: f for k, f in items.items()
                    if matches(json.loads(str(f.value)), op.filter or {})}
            if op.query:
                ranked = self._ranked(group, op.query, op.filter, wanted, keep)
                found.extend((score, keep[k].valid_from, namespace, k, keep[k])
                             for k, score in ranked)
            else:
                found.extend((0.0, f.valid_from, namespace, k, f) for k, f in keep.items())
        found.sort(key=lambda row: (-row[0], -row[1].timestamp()))
        page = found[op.offset: wanted]
        created: dict[tuple[tuple[str, ...], str], datetime] = {}
        for namespace in {row[2] for row in page}:
            group = self.group_of(namespace)
            keys = [row[3] for row in page if row[2] == namespace]
            created.update({(namespace, k): t for k, t in self._created(group, keys).items()})
        return [
            self._item(ns, key, fact, created.get((ns, key), fact.valid_from),
                       score if op.query else None, search=True)  # type: ignore[misc]
            for score, _, ns, key, fact in page
        ]

    def _ranked(
        self, group_id: str, query: str, store_filter: Mapping[str, Any] | None, wanted: int,
        items: Mapping[str, FactRecord],
    ) -> list[tuple[str, float]]:
        """Keys of ``items`` that recall finds for ``query``, best first, with a score in
        (0, 1]: by the facts recall ranks (their subject is the item), then by the episodes."""
        result = self.memory.recall(
            query, group_id=group_id, k=min(1000, max(10, 3 * wanted)),
            filters=graphmem_filters(store_filter), hops=0,
        )
        order: list[str] = []
        by_subject = {item_subject(k): k for k in items}
        for hit in result.facts:
            key = by_subject.get(hit.subject)
            if key is not None and key not in order:
                order.append(key)
        for episode in result.episodes:
            key = episode.metadata.get("langgraph_key")
            if isinstance(key, str) and key in items and key not in order:
                order.append(key)
        return [(key, 1.0 / (1 + rank)) for rank, key in enumerate(order)]

    # ------------------------------------------------------------------ writes
    def _put(self, namespace: tuple[str, ...], key: str, value: Mapping[str, Any]) -> None:
        if not isinstance(key, str) or not key:
            raise InputError(f"an item's key must be a non-empty string, got {key!r}")
        if not isinstance(value, Mapping):
            raise InputError(f"an item's value must be a dict, got {type(value).__name__}")
        group = self.group_of(namespace)
        before = self._pick(self._item_facts(group, key), None)
        removed = [] if before is None else _removed(json.loads(str(before.value)), value)
        content = json.dumps(
            {"key": key, "namespace": list(namespace), "value": dict(value), "removed": removed},
            ensure_ascii=False, sort_keys=True,
        )
        result = self.memory.add_episode(
            content, group_id=group, source=self.source, kind="json",
            reference_time=self._now(), metadata={"langgraph_key": key},
            extractor=self._extractor,
        )
        if result.status == "failed":
            raise InputError(f"could not store item {key!r}: {result.error}")

    def _delete(self, namespace: tuple[str, ...], key: str) -> None:
        group = self.group_of(namespace)
        if self._item_facts(group, key):
            self.memory.forget(group_id=group, entity=item_subject(key), episodes=True)

    def _list(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        spaces = self._namespaces()
        for condition in op.match_conditions or ():
            spaces = [ns for ns in spaces if _matches_condition(ns, condition)]
        if op.max_depth is not None:
            spaces = sorted({ns[: op.max_depth] for ns in spaces})
        return spaces[op.offset: op.offset + op.limit]

    # ------------------------------------------------------------------ BaseStore
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        results: list[Result] = []
        for op in ops:
            if isinstance(op, GetOp):
                results.append(self._get(tuple(op.namespace), op.key))
            elif isinstance(op, SearchOp):
                results.append(self._search(op))
            elif isinstance(op, ListNamespacesOp):
                results.append(self._list(op))
            elif isinstance(op, PutOp):
                if op.value is None:
                    self._delete(tuple(op.namespace), op.key)
                else:
                    self._put(tuple(op.namespace), op.key, op.value)
                results.append(None)
            else:
                raise InputError(f"unknown store operation {type(op).__name__}")
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        listed = list(ops)
        return await self._worker.run(lambda: self.batch(listed))

    def get(
        self,
        namespace: tuple[str, ...],
        key: str,
        *,
        refresh_ttl: bool | None = None,
        as_of: datetime | None = None,
    ) -> Item | None:
        """The item (its value at ``as_of`` when given; ``None`` if it had none then)."""
        if as_of is None:
            return super().get(namespace, key, refresh_ttl=refresh_ttl)
        if as_of.tzinfo is None:
            raise InputError("as_of must be timezone-aware")
        return self._get(tuple(namespace), key, as_of)

    async def aget(
        self,
        namespace: tuple[str, ...],
        key: str,
        *,
        refresh_ttl: bool | None = None,
        as_of: datetime | None = None,
    ) -> Item | None:
        if as_of is None:
            return await super().aget(namespace, key, refresh_ttl=refresh_ttl)
        return await self._worker.run(lambda: self.get(namespace, key, as_of=as_of))

    async def ahistory(self, namespace: tuple[str, ...], key: str) -> list[Item]:
        return await self._worker.run(lambda: self.history(namespace, key))


def _removed(old: Any, new: Any) -> list[tuple[str, Any]]:
    """Leaves of the old value to negate: those whose path the new value lacks, and items
    dropped from a set (a list of strings); a changed single value is superseded anyway."""
    old_leaves = list(leaves(old, "value"))
    new_leaves = list(leaves(new, "value"))
    new_pairs = {(path, json.dumps(v, sort_keys=True)) for path, v in new_leaves}
    new_paths = {path for path, _ in new_leaves}
    sets = {path for path, _ in old_leaves if sum(1 for p, _ in old_leaves if p == path) > 1}
    sets |= {path for path, _ in new_leaves if sum(1 for p, _ in new_leaves if p == path) > 1}
    return [
        (path, v) for path, v in old_leaves
        if (path, json.dumps(v, sort_keys=True)) not in new_pairs
        and (path not in new_paths or path in sets)
    ]


def _matches_condition(namespace: tuple[str, ...], condition: MatchCondition) -> bool:
    path = tuple(condition.path)
    if len(path) > len(namespace):
        return False
    part = namespace[: len(path)] if condition.match_type == "prefix" else namespace[-len(path):]
    return all(want in ("*", have) for want, have in zip(path, part, strict=True))
