"""The Neo4j store: the ``GraphStore`` protocol over Bolt with the official ``neo4j`` driver.

``GraphMemory("neo4j://host:7687")`` (or ``bolt://…``, ``neo4j+s://…``). Credentials come from
the arguments, else the URL (``bolt://user:pass@host``), else ``NEO4J_USERNAME`` /
``NEO4J_PASSWORD``; the database from ``database=`` else ``NEO4J_DATABASE`` else the server's
default. For the integration tests the ``GRAPHMEM_TEST_BOLT_USER`` / ``_PASSWORD`` /
``_DATABASE`` / ``_HTTP`` variables written by ``scripts/bolt_server.py`` are read as a last
fallback.

Data model (DESIGN.md §2, the same rows as the SQLite store): ``(:Episode)``, ``(:Entity)``, reified
``(:Fact)`` nodes with ``(Entity)-[:SUBJECT_OF]->(Fact)``, ``(Fact)-[:OBJECT]->(Entity)``,
``(Fact)-[:FROM_EPISODE {span, claim}]->(Episode)``, ``(Fact)-[:ENDED_BY {span, claim}]->(Episode)``
(a negation), ``(Fact)-[:SUPERSEDES|CONTRADICTS {reason,
decided_by, decided_at}]->(Fact)``, ``(Episode)-[:MENTIONS]->(Entity)``; ``(:EntityAlias {group_id,
key, entity_id})`` rows for alias lookups (SQLite's ``entity_aliases`` table: list membership is
not index-backed in Cypher), ``(:AuditRecord)``, ``(:GraphmemMeta {key, value})``,
``(:GraphmemMigration {version, name, applied_at})`` and one ``(:GraphmemLock)``. Times are integer
epoch-millisecond properties (ordering identical to SQLite; no server-side date arithmetic);
embeddings are float lists, rounded as SQLite stores them (``_vectors.quantize``); JSON maps
(metadata, attributes, audit details) are JSON strings (Bolt servers refuse map properties);
``seq`` (a client-side, per-write increasing integer) keeps SQLite's insertion order (rowid) for
ties and exports.

Every query is a named Cypher file loaded by ``graphmem.store.neo4j.cypher``; values are only ever
``$parameters``. Searches keep to one group inside the indexes (``_neo4j_search``: episodes,
facts and entities carry a ``group_token`` that the full-text indexes hold; vectors are scanned
per group, or searched with an in-index group filter where the server has one). Writes: one
managed write transaction per ``write``/``write_many`` (the driver retries transient failures,
re-running the units of work, which are pure), serialised by a lock node; reads are routed to
readers (``routing_=READ``).

The store is a facade over small parts that share one ``BoltRunner`` (the driver, the writers'
lock, the ways a named query runs; ``_neo4j_runner``), each in its own module:

- ``_neo4j_schema.Schema``: migrations, vector indexes, meta rows;
- ``_neo4j_writes.Writes``: episodes, the write unit, a plan's application, imports (the
  in-transaction ``StoreReader`` is ``_neo4j_tx_reader.TxReader``);
- ``_neo4j_reads.Reads``: episode, entity and fact reads, expansion, value filters;
- ``_neo4j_speakers.Conversation``: speakers (cached) and episode neighbourhoods;
- ``_neo4j_search.GroupSearch``: group-scoped full-text and vector search;
- ``_neo4j_maintenance.Maintenance``: stats, export, the test wipe;

and ``_neo4j_rows`` converts between rows and stored properties. The methods below only
delegate (composition rather than mixins: each part sees only the runner and the parts it
names, and no class holds more than one concern).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from typing import Any, TypeVar

import neo4j
import numpy as np
import numpy.typing as npt
from neo4j import ManagedTransaction

from ..._filters import Condition
from ..._models import EntityRecord, EpisodeRecord, FactRecord
from ..._time import utcnow
from .._base import (
    EpisodeRow,
    LinkRow,
    MigrationInfo,
    StoreReader,
    TimeView,
    Vector,
    WritePlan,
)
from .._experience import ExperienceCounts, ExperienceEntry, ValueColumn
from .._links import EpisodeLinkRow
from .._reembed import EmbeddingItem
from .browser import browser_instructions
from .dialect import Dialect
from .experience import ExperienceIndex
from .maintenance import Maintenance
from .reads import Reads
from .reembed import Reembedding
from .runner import BoltConfig, BoltRunner
from .schema import MIGRATIONS, Schema
from .search import GroupSearch, lucene_query
from .speakers import Conversation
from .writes import Writes

__all__ = ["MIGRATIONS", "Neo4jStore", "browser_instructions", "lucene_query"]

T = TypeVar("T")

# The name this module gave it before the split (tests/unit/test_hardening_storage.py).


def _lock_clock() -> datetime:
    # The write lock's clock is this module's ``utcnow``, looked up per call, as it was before
    # the runner moved out: tests/integration/test_neo4j_write_lock.py freezes it here.
    return utcnow()


class Neo4jStore:
    """``GraphStore`` on Neo4j 5 (or any Bolt server speaking Neo4j 5 Cypher, e.g. ArcadeDB).

    The constructor does no I/O; ``connect()`` opens the driver, verifies connectivity and picks
    the server dialect. ``max_retry_time`` bounds the driver's retries of a failed transaction
    (``GRAPHMEM_NEO4J_RETRY_SECONDS``, default 30 s; keep it small in tests).
    """

    def __init__(
        self,
        url: str,
        *,
        username: str | None = None,
        password: str | None = None,
        database: str | None = None,
        http_url: str | None = None,
        max_retry_time: float | None = None,
        connection_timeout: float | None = None,
    ) -> None:
        config = BoltConfig.resolve(
            url,
            username=username,
            password=password,
            database=database,
            http_url=http_url,
            max_retry_time=max_retry_time,
            connection_timeout=connection_timeout,
        )
        self.url = config.url  # never shows a password
        self.max_retry_time = config.max_retry_time
        self.connection_timeout = config.connection_timeout
        self._username = config.username
        self._password = config.password
        self._database = config.database
        self._bolt = BoltRunner(config, clock=_lock_clock)
        self._conversation = Conversation(self._bolt)
        self._indexes = Schema(self._bolt, forget_speakers=self._conversation.forget)
        self._writes = Writes(self._bolt, self._indexes)
        self._reads = Reads(self._bolt)
        self._experience = ExperienceIndex(self._bolt)
        self._maintenance = Maintenance(self._bolt, self._indexes)
        self._search = GroupSearch(self._bolt.read)
        self._reembedding = Reembedding(self._bolt, self._indexes)

    # ------------------------------------------------------------------ lifecycle
    @property
    def driver(self) -> neo4j.Driver:
        return self._bolt.driver

    @property
    def dialect(self) -> Dialect:
        return self._bolt.dialect

    @property
    def server_agent(self) -> str | None:
        return self._bolt.server_agent

    def connect(self) -> None:
        self._bolt.connect()

    def close(self) -> None:
        with self._bolt.lock:
            self._bolt.close()
            self._indexes.forget()
            self._search.forget()

    # ------------------------------------------------------------------ runner (tests reach in)
    def _write_tx(self, fn: Callable[[ManagedTransaction], T], what: str) -> T:
        return self._bolt.write_tx(fn, what)

    def _schema(self, name: str, params: dict[str, Any]) -> None:
        self._bolt.schema(name, params)

    def _apply(self, tx: ManagedTransaction, plan: WritePlan) -> None:
        # The writes call the plan applier through this attribute, so that it can be wrapped
        # on one store (tests/integration/test_neo4j_outage.py crashes the server from it).
        self._writes.apply(tx, plan)

    # ------------------------------------------------------------------ schema and meta
    def migrate(self) -> list[str]:
        return self._indexes.migrate()

    def migration_status(self) -> list[MigrationInfo]:
        return self._indexes.migration_status()

    def get_meta(self, key: str) -> str | None:
        return self._indexes.get_meta(key)

    def set_meta(self, key: str, value: str) -> None:
        self._indexes.set_meta(key, value)

    def wipe_all_for_tests(self, *, keep_schema: bool = False) -> int:
        """Delete every node and relationship of the database. Tests only.

        The schema (constraints and indexes) is kept. Without ``keep_schema`` its migration
        records go too, so the next ``migrate()`` runs every migration again; with it the
        database is what a fresh migration leaves, and the next connection changes no schema
        (on Neo4j a schema change makes the server plan every query again, which is most of a
        short test's time).
        """
        self._conversation.forget()
        self._search.forget()
        return self._maintenance.wipe(keep_schema=keep_schema)

    # ------------------------------------------------------------------ writes
    def insert_episode(self, episode: EpisodeRow) -> tuple[EpisodeRow, bool]:
        return self.insert_episodes([episode])[0]

    def insert_episodes(self, episodes: Sequence[EpisodeRow]) -> list[tuple[EpisodeRow, bool]]:
        return self._writes.insert_episodes(episodes)

    def set_episode_status(
        self, episode_id: str, status: str, extractor: str | None, error: str | None
    ) -> None:
        self._writes.set_episode_status(episode_id, status, extractor, error)

    def write(self, work: Callable[[StoreReader], WritePlan]) -> WritePlan:
        return self.write_many([work])[0]

    def write_many(self, works: Sequence[Callable[[StoreReader], WritePlan]]) -> list[WritePlan]:
        return self._writes.write_many(works, self._apply)

    def import_rows(self, rows: Sequence[dict[str, Any]]) -> dict[str, int]:
        """Insert an export's rows; what the store already holds is left alone (and not
        counted), so importing twice changes nothing (the SQLite store's rule)."""
        return self._writes.import_rows(rows, self._apply)

    # ------------------------------------------------------------------ episode reads
    def get_episode(self, episode_id: str) -> EpisodeRow | None:
        return self._reads.get_episode(episode_id)

    def episodes(self, episode_ids: Sequence[str]) -> list[EpisodeRecord]:
        return self._reads.episodes(episode_ids)

    def episodes_by_status(self, group_id: str | None, statuses: Sequence[str]) -> list[EpisodeRow]:
        return self._reads.episodes_by_status(group_id, statuses)

    def episode_ids_by_kind(self, group_id: str, kind: str) -> list[str]:
        return self._reads.episode_ids_by_kind(group_id, kind)

    # ------------------------------------------------------------------ experience index
    def experience_counts(self, group_id: str) -> ExperienceCounts:
        return self._experience.counts(group_id)

    def experience_rows(self, group_id: str, after: int) -> npt.NDArray[np.int64]:
        return self._experience.rows(group_id, after)

    def experience_values(self, group_id: str, path: str, after: int) -> ValueColumn:
        return self._experience.values(group_id, path, after)

    def experience_postings(
        self, group_id: str, terms: Sequence[str], after: int
    ) -> dict[str, npt.NDArray[np.int64]]:
        return self._experience.postings(group_id, terms, after)

    def experience_ids(self, group_id: str, seqs: Sequence[int]) -> dict[int, str]:
        return self._experience.ids(group_id, seqs)

    def unindexed_experiences(self, group_id: str, limit: int) -> list[EpisodeRecord]:
        return self._experience.unindexed(group_id, limit)

    def index_experiences(self, entries: Sequence[tuple[str, ExperienceEntry]]) -> None:
        self._experience.add(entries)

    def change_token(self) -> object | None:
        # No cheap store-wide change counter to read here: callers list what they need.
        return None

    def recent_episodes(
        self, group_id: str, source: str | None, before: int, limit: int
    ) -> list[EpisodeRow]:
        return self._reads.recent_episodes(group_id, source, before, limit)

    def episode_mentions(self, episode_ids: Sequence[str]) -> list[tuple[str, str]]:
        """(episode id, entity id) for each entity the episodes mention."""
        return self._reads.episode_mentions(episode_ids)

    def record_facts(self, episode_ids: Sequence[str]) -> list[tuple[str, str]]:
        """(episode id, fact id) for each fact that those of the episodes which are JSON
        records support (FROM_EPISODE), in any view: callers narrow them with
        ``fact_stubs``."""
        return self._reads.record_facts(episode_ids)

    def speakers(self, group_id: str) -> dict[str, str]:
        """The speakers of the group's episodes by name key (``_neo4j_speakers``)."""
        return self._conversation.speakers(group_id)

    def episode_context(
        self, episode_ids: Sequence[str], window: int = 1
    ) -> tuple[dict[str, tuple[str | None, int]], dict[str, list[tuple[str, int]]]]:
        """Each episode's speaker and reference time, and its ``window`` neighbours each way
        in the same group and source (``_neo4j_speakers``)."""
        return self._conversation.episode_context(episode_ids, window)

    # ------------------------------------------------------------------ entity and fact reads
    def find_entities(self, group_id: str, keys: Sequence[str]) -> list[EntityRecord]:
        return self._reads.find_entities(group_id, keys)

    def find_entities_by_ids(self, group_id: str, entity_ids: Sequence[str]) -> list[EntityRecord]:
        return self._reads.find_entities_by_ids(group_id, entity_ids)

    def expand(
        self, group_id: str, entity_ids: Sequence[str], hops: int, view: TimeView, limit: int
    ) -> list[tuple[str, int, str]]:
        return self._reads.expand(group_id, entity_ids, hops, view, limit)

    def fact_records(
        self, fact_ids: Sequence[str], view: TimeView | None = None
    ) -> list[FactRecord]:
        return self._reads.fact_records(fact_ids, view)

    def fact_stubs(
        self, fact_ids: Sequence[str], view: TimeView
    ) -> list[tuple[str, str, str | None, int, float]]:
        return self._reads.fact_stubs(fact_ids, view)

    def links(self, fact_ids: Sequence[str]) -> list[LinkRow]:
        return self._reads.links(fact_ids)

    def episode_links(self, episode_ids: Sequence[str]) -> list[EpisodeLinkRow]:
        return self._reads.episode_links(episode_ids)

    def list_facts(
        self,
        group_id: str,
        *,
        entity_ids: Sequence[str] | None = None,
        predicate: str | None = None,
        view: TimeView | None = None,
        subject_only: bool = False,
    ) -> list[FactRecord]:
        return self._reads.list_facts(
            group_id,
            entity_ids=entity_ids,
            predicate=predicate,
            view=view,
            subject_only=subject_only,
        )

    def facts_with_values(
        self,
        group_id: str,
        predicates: Sequence[str],
        view: TimeView,
        subject_ids: Sequence[str] | None = None,
    ) -> dict[str, dict[str, Any]]:
        return self._reads.facts_with_values(group_id, predicates, view, subject_ids)

    def filter_candidates(
        self, group_id: str, conditions: Sequence[Condition], view: TimeView, limit: int
    ) -> list[str]:
        return self._reads.filter_candidates(group_id, conditions, view, limit)

    # ------------------------------------------------------------------ search
    def _vector(self, role: str, group_id: str, vector: Vector, n: int) -> list[tuple[str, float]]:
        values = self._indexes.query_vector(vector)
        if values is None:
            return []
        return self._search.vector(self.dialect, role, group_id, values, n)

    def vector_facts(self, group_id: str, vector: Vector, n: int) -> list[tuple[str, float]]:
        return self._vector("fact_embedding", group_id, vector, n)

    def vector_entities(self, group_id: str, vector: Vector, n: int) -> list[tuple[str, float]]:
        return self._vector("entity_embedding", group_id, vector, n)

    def vector_episodes(self, group_id: str, vector: Vector, n: int) -> list[tuple[str, float]]:
        """The group's ``n`` episodes most similar to ``vector`` (cosine), best first."""
        return self._vector("episode_embedding", group_id, vector, n)

    def text_facts(self, group_id: str, query: str, n: int) -> list[tuple[str, float]]:
        return self._search.text(self.dialect, "fact_text", group_id, query, n)

    def text_entities(self, group_id: str, query: str, n: int) -> list[tuple[str, float]]:
        return self._search.text(self.dialect, "entity_text", group_id, query, n)

    def text_episodes(self, group_id: str, query: str, n: int) -> list[tuple[str, float]]:
        return self._search.text(self.dialect, "episode_text", group_id, query, n)

    # ------------------------------------------------------------------ stats, export
    def stats(self, group_id: str | None) -> dict[str, Any]:
        return self._maintenance.stats(group_id)

    def export_rows(self, group_id: str | None) -> Iterator[dict[str, Any]]:
        """The SQLite store's JSONL records, in the same order (insertion order)."""
        return self._maintenance.export_rows(group_id)

    # ------------------------------------------------------------------ moving to another embedder
    def embedding_backlog(self, limit: int) -> list[EmbeddingItem]:
        return self._reembedding.backlog(limit)

    def embedding_counts(self) -> tuple[int, int]:
        return self._reembedding.counts()

    def stage_embeddings(self, rows: Sequence[tuple[str, str, Vector]]) -> None:
        self._reembedding.stage(rows)

    def apply_staged_embeddings(self, embedder_meta: str) -> bool:
        return self._reembedding.apply(embedder_meta)

    def clear_staged_embeddings(self) -> None:
        self._reembedding.clear()
