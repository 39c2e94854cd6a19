"""The embedded default store: one SQLite file, WAL mode, FTS5, compact vectors (int8 at rest,
see ``_vectors``) with exact top-k.

``SQLiteStore`` owns the connection (``_sqlite_db``) and its write transactions, and hands
everything else to parts that share that connection: the migrations (``_sqlite_schema``),
the rows a write plan becomes (``_sqlite_write``, read through ``_sqlite_reader``), reads
(``_sqlite_reads``, ``_sqlite_filter``), full-text and vector search (``_sqlite_text``,
``_sqlite_vectors``), and forget's upkeep, statistics and export / import
(``_sqlite_maintenance``)."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ..._errors import StoreError
from ..._filters import Condition
from ..._models import EntityRecord, EpisodeRecord, FactRecord
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
from .._vectors import VectorMatrix
from .db import SQLiteDB, store_errors
from .experience import ExperienceIndex
from .filter import filter_candidates
from .maintenance import Maintenance, purge_deleted, truncate_wal
from .reader import Reader, next_write_seq
from .reads import Reads
from .reembed import Reembedding
from .schema import migrate, migration_status
from .text import TextIndex
from .vectors import VectorIndex, VectorLimits
from .write import apply_plan, insert_episode

__all__ = ["SQLiteStore"]


# Tuning, read at each use from this module (tests and benchmarks change the values here).
_POSTINGS = 3000  # matching rows one full-text query may rank (1 to 5 µs each)
_EXACT_ROWS = 50_000  # vector top-k is exact up to this many rows, sign-bit prefiltered above
_OVERSAMPLE = 64  # candidates per wanted row for the exact rescoring above _EXACT_ROWS
_MIN_CANDIDATES = 4096
_VECTOR_CACHE_ROWS = 262_144  # vectors held across groups (384 MiB at 384 dims) beside the one
# being searched, whatever its size
_CHECKPOINT_WAIT_MS = 5000  # how long a forget waits for readers to let the WAL be truncated


def _vector_limits() -> VectorLimits:
    return VectorLimits(_EXACT_ROWS, _OVERSAMPLE, _MIN_CANDIDATES, _VECTOR_CACHE_ROWS)


def _postings() -> int:
    return _POSTINGS


@store_errors
class SQLiteStore:
    """``GraphStore`` on one SQLite file. ``sqlite:///path/to/memory.db`` or ``:memory:``.

    ``read_only=True`` (URL ``sqlite:///memory.db?mode=ro``) opens an existing store for
    reading only; so does a store whose file, or whose directory (WAL needs its ``-wal`` and
    ``-shm`` files there), this process cannot write. ``immutable=True`` (``?immutable=1``)
    also tells SQLite that nobody changes the file (no locks, no ``-shm``: read-only media).
    A store this process cannot write that no connection has open (no ``-shm``, an empty or
    no ``-wal``) is opened immutable by itself, so that reading creates no file; such a
    reader does not see writes made after it opened (reopen it). Writes raise
    ``StoreError`` ("… is read-only: …").
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        url: str | None = None,
        read_only: bool = False,
        immutable: bool = False,
    ) -> None:
        text = str(path)
        self._db = SQLiteDB(
            text, url or f"sqlite:///{text}", read_only=read_only, immutable=immutable
        )
        self._vector_index = VectorIndex(self._db, _vector_limits)
        self._text_index = TextIndex(self._db, _postings)
        self._reads = Reads(self._db)
        self._experience = ExperienceIndex(self._db)
        self._reembedding = Reembedding(self._db)
        self._upkeep = Maintenance(self._db)

    # ------------------------------------------------------------------ lifecycle
    @property
    def path(self) -> str:
        return self._db.path

    @path.setter
    def path(self, value: str) -> None:
        self._db.path = value

    @property
    def url(self) -> str:
        return self._db.url

    @url.setter
    def url(self, value: str) -> None:
        self._db.url = value

    @property
    def read_only(self) -> bool:
        """Asked for, or found at opening (the file or its directory is not writable)."""
        return self._db.read_only

    @property
    def immutable(self) -> bool:
        return self._db.immutable

    @property
    def conn(self) -> sqlite3.Connection:
        return self._db.conn

    @property
    def _vectors(self) -> dict[tuple[str, str], VectorMatrix]:
        """The cached vector matrices by (table, group) (tests look at them)."""
        return self._vector_index.matrices

    def connect(self) -> None:
        self._db.connect()

    def close(self) -> None:
        with self._db.lock:
            self._db.close()
            self._vector_index.clear()

    def migrate(self) -> list[str]:
        return migrate(self._db)

    def migration_status(self) -> list[MigrationInfo]:
        return migration_status(self._db)

    def get_meta(self, key: str) -> str | None:
        return self._db.get_meta(key)

    def set_meta(self, key: str, value: str) -> None:
        self._db.set_meta(key, value)

    def change_token(self) -> object | None:
        # Another connection's commit moves data_version; this one's writes move write_count.
        with self._db.lock:
            return (self._db.data_version(), self._db.write_count)

    # ------------------------------------------------------------------ write transactions
    # insert_episodes, _insert_episode, write_many and _apply are the steps a crash test
    # interrupts (tests/helpers/ingest_worker.py wraps them on this class).
    def insert_episode(self, episode: EpisodeRow) -> tuple[EpisodeRow, bool]:
        return self.insert_episodes([episode])[0]

    def insert_episodes(self, episodes: Sequence[EpisodeRow]) -> list[tuple[EpisodeRow, bool]]:
        out: list[tuple[EpisodeRow, bool]] = []
        db = self._db
        with db.lock:
            db.require_writable()
            conn = db.conn
            try:
                conn.execute("BEGIN IMMEDIATE")
                for episode in episodes:
                    out.append(self._insert_episode(conn, episode))
                conn.execute("COMMIT")
                db.write_count += 1
            except sqlite3.DatabaseError as exc:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise StoreError(f"could not store episodes in {self.path}: {exc}") from exc
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        return out

    def _insert_episode(
        self, conn: sqlite3.Connection, episode: EpisodeRow
    ) -> tuple[EpisodeRow, bool]:
        return insert_episode(conn, episode)

    def set_episode_status(
        self, episode_id: str, status: str, extractor: str | None, error: str | None
    ) -> None:
        with self._db.lock:
            self._db.require_writable()
            self._db.execute(
                "UPDATE episodes SET status = ?, extractor = ?, error = ? WHERE id = ?",
                (status, extractor, error, episode_id),
            )

    def write(self, work: Callable[[StoreReader], WritePlan]) -> WritePlan:
        return self.write_many([work])[0]

    def write_many(self, works: Sequence[Callable[[StoreReader], WritePlan]]) -> list[WritePlan]:
        if not works:
            return []
        db = self._db
        with db.lock:
            db.require_writable()
            conn = db.conn
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.DatabaseError as exc:
                raise StoreError(f"could not start a write on {self.path}: {exc}") from exc
            plans: list[WritePlan] = []
            try:
                reader = Reader(conn, next_write_seq(conn))
                for work in works:
                    plan = work(reader)
                    self._apply(conn, plan)
                    plans.append(plan)
                deleted = purge_deleted(conn, plans)
                conn.execute("COMMIT")
                db.write_count += 1
            except sqlite3.DatabaseError as exc:
                conn.execute("ROLLBACK")
                raise StoreError(f"write failed on {self.path}: {exc}") from exc
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            if deleted:
                self._vector_index.clear()
                truncate_wal(db, _CHECKPOINT_WAIT_MS)
            return plans

    def _apply(self, conn: sqlite3.Connection, plan: WritePlan) -> None:
        apply_plan(conn, plan)

    # ------------------------------------------------------------------ search
    def vector_facts(self, group_id: str, vector: Vector, n: int) -> list[tuple[str, float]]:
        return self._vector_index.search("facts", group_id, vector, n)

    def vector_entities(self, group_id: str, vector: Vector, n: int) -> list[tuple[str, float]]:
        return self._vector_index.search("entities", group_id, vector, n)

    def vector_episodes(self, group_id: str, vector: Vector, n: int) -> list[tuple[str, float]]:
        return self._vector_index.search("episodes", group_id, vector, n)

    def text_facts(self, group_id: str, query: str, n: int) -> list[tuple[str, float]]:
        return self._text_index.search("facts", group_id, query, n)

    def text_entities(self, group_id: str, query: str, n: int) -> list[tuple[str, float]]:
        return self._text_index.search("entities", group_id, query, n)

    def text_episodes(self, group_id: str, query: str, n: int) -> list[tuple[str, float]]:
        return self._text_index.search("episodes", group_id, query, n)

    def _term_plan(self, table: str, group_id: str, words: list[str]) -> tuple[list[str], int]:
        """(words to query, rowid floor) of a full-text query (``TextIndex.term_plan``)."""
        return self._text_index.term_plan(table, group_id, words)

    # ------------------------------------------------------------------ episodes
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

    def recent_episodes(
        self, group_id: str, source: str | None, before: int, limit: int
    ) -> list[EpisodeRow]:
        return self._reads.recent_episodes(group_id, source, before, limit)

    def speakers(self, group_id: str) -> dict[str, str]:
        """The speakers of the group's episodes by name key (``Reads.speakers``)."""
        return self._reads.speakers(group_id)

    def episode_context(
        self, episode_ids: Sequence[str], window: int = 1
    ) -> tuple[dict[str, tuple[str | None, int]], dict[str, list[tuple[str, int]]]]:
        """Each episode's speaker and reference time, and its ``window`` neighbours on each
        side in its group and source (``Reads.episode_context``)."""
        return self._reads.episode_context(episode_ids, window)

    def episode_mentions(self, episode_ids: Sequence[str]) -> list[tuple[str, str]]:
        """(episode id, entity id) for each entity the episodes mention."""
        return self._reads.episode_mentions(episode_ids)

    def record_facts(self, episode_ids: Sequence[str]) -> list[tuple[str, str]]:
        """(episode id, fact id) for each fact that those of the episodes which are JSON
        records support (FROM_EPISODE), in any view: callers narrow them with ``fact_stubs``."""
        return self._reads.record_facts(episode_ids)

    # ------------------------------------------------------------------ entities
    def find_entities(self, group_id: str, keys: Sequence[str]) -> list[EntityRecord]:
        return self._reads.find_entities(group_id, keys)

    def find_entities_by_ids(self, group_id: str, entity_ids: Sequence[str]) -> list[EntityRecord]:
        return self._reads.find_entities_by_ids(group_id, entity_ids)

    def expand(
        self, group_id: str, entity_ids: Sequence[str], hops: int, view: TimeView, limit: int
    ) -> list[tuple[str, int, str]]:
        return self._reads.expand(group_id, entity_ids, hops, view, limit)

    # ------------------------------------------------------------------ facts
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
        """Subjects that may match every condition, newest first (``_sqlite_filter``)."""
        return filter_candidates(self._db, group_id, conditions, view, limit)

    # ------------------------------------------------------------------ stats, export, import
    def stats(self, group_id: str | None) -> dict[str, Any]:
        return self._upkeep.stats(group_id)

    def table_counts(self, group_id: str | None = None) -> dict[str, int]:
        """Row counts per table, FTS tables included (for residue checks after forget)."""
        return self._upkeep.table_counts(group_id)

    def export_rows(self, group_id: str | None) -> Iterator[dict[str, Any]]:
        return self._upkeep.export_rows(group_id)

    def import_rows(self, rows: Sequence[dict[str, Any]]) -> dict[str, int]:
        """Insert an export's rows; what the store already holds is left alone (and not
        counted), so importing twice changes nothing."""
        return self._upkeep.import_rows(rows, self.write, self._insert_episode)

    # ------------------------------------------------------------------ moving to another embedder
    def embedding_backlog(self, limit: int) -> list[EmbeddingItem]:
        return self._reembedding.backlog(limit)

    def embedding_counts(self) -> tuple[int, int]:
        return self._reembedding.counts()

    def stage_embeddings(self, rows: Sequence[tuple[str, str, Vector]]) -> None:
        self._reembedding.stage(rows)

    def apply_staged_embeddings(self, embedder_meta: str) -> bool:
        applied = self._reembedding.apply(embedder_meta)
        if applied:
            self._vector_index.clear()  # this connection's rows changed in place
        return applied

    def clear_staged_embeddings(self) -> None:
        self._reembedding.clear()
