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

Every query is a named file in ``graphmem/cypher/`` (``graphmem.store._cypher``); values are only
ever ``$parameters``. Searches keep to one group inside the indexes (``_neo4j_search``: episodes,
facts and entities carry a ``group_token`` that the full-text indexes hold; vectors are scanned
per group, or searched with an in-index group filter where the server has one). Writes: one
managed write transaction per ``write``/``write_many`` (the driver retries transient failures,
re-running the units of work, which are pure), serialised by a lock node; reads are routed to
readers (``routing_=READ``).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import random
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar
from urllib.parse import unquote, urlparse, urlunparse

import neo4j
import numpy as np
from neo4j import GraphDatabase, ManagedTransaction, Record, RoutingControl
from neo4j.exceptions import (
    AuthError,
    ConstraintError,
    DriverError,
    Neo4jError,
    ServiceUnavailable,
    SessionExpired,
    TransactionError,
)

from .._errors import ConfigError, SchemaError, StoreError
from .._filters import Condition, driving, equal_texts, finite_number, value_texts, widen
from .._ids import entity_key, make_id
from .._models import EntityRecord, EpisodeRecord, FactRecord
from .._time import from_ms, to_ms, utcnow
from ._base import (
    EntityRow,
    EpisodeRow,
    FactRow,
    LinkRow,
    MigrationInfo,
    ProvenanceRow,
    StoreReader,
    Timeline,
    TimeView,
    Vector,
    WritePlan,
    breadth_first,
    episode_record,
)
from ._cypher import query, statements
from ._export import (
    entity_export,
    episode_export,
    episode_from_export,
    fact_export,
    link_export,
    plan_from_export,
    provenance_export,
)
from ._neo4j_browser import browser_instructions
from ._neo4j_dialect import Dialect, select_dialect
from ._neo4j_search import GroupSearch, backfill_group_tokens, group_token, lucene_query
from ._vectors import quantize

__all__ = ["MIGRATIONS", "Neo4jStore", "browser_instructions", "lucene_query"]

T = TypeVar("T")

# Ordered schema migrations: (version, name, Cypher file). Migrations 3 and 6 go through the
# dialect (ArcadeDB creates full-text indexes with SQL), 5 is a backfill in Python; the others
# run the same Cypher on every server (ArcadeDB included). Vector indexes are not numbered:
# their dimension is the embedder's, known once the facade records it
# (``set_meta("embedder", …)``).
MIGRATIONS: list[tuple[int, str, str]] = [
    (1, "uniqueness constraints", "schema/001_constraints"),
    (2, "range indexes for group lookups and temporal filters", "schema/002_range_indexes"),
    (
        3,
        "full-text indexes on statements, entity names and episodes",
        "schema/003_fulltext_indexes",
    ),
    (4, "arrival-order index on episodes by group", "schema/004_episode_order"),
    (5, "episode speakers derived from metadata", "episodes/speaker_set"),
    (
        6,
        "group-scoped full-text indexes (group tokens)",
        "schema/006_group_fulltext_indexes",
    ),
    (7, "entity name and alias lookups by group and key", "schema/007_group_key_indexes"),
    (8, "a group's episodes by kind (experience recall)", "schema/008_episode_kind_index"),
]
_FULLTEXT_MIGRATION = "schema/003_fulltext_indexes"
_GROUP_FULLTEXT_MIGRATION = "schema/006_group_fulltext_indexes"
_SPEAKER_MIGRATION = "episodes/speaker_set"
# GraphmemMeta key changed by every episode deletion: the speakers cache starts over on it.
_EPISODE_EPOCH = "episode_epoch"
# The speakers cache re-reads the episodes of the last minute of seq (microseconds): a writer in
# another process may commit a slightly lower seq after this one has read past it.
_SEQ_MARGIN = 60_000_000

_CHUNK = 1000  # ids per UNWIND batch on reads
_CONSTRAINT_RETRIES = 5  # re-runs of a write that lost a race to a unique key (see _write_tx)
_LINK_QUERIES = {"SUPERSEDES": "facts/supersedes_add", "CONTRADICTS": "facts/contradicts_add"}


def _chunks(items: Sequence[T], size: int = _CHUNK) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _env(*names: str) -> str | None:
    for name in names:
        value = os.environ.get(name)
        if value:
            return value
    return None


def _float_list(vector: Vector | None) -> list[float] | None:
    if vector is None:
        return None
    return [float(x) for x in np.asarray(vector, dtype=np.float32)]


def _stored_list(vector: Vector | None) -> list[float] | None:
    """A vector to store: rounded as the SQLite store keeps it (``_vectors.quantize``: int8 with
    a per-vector scale), so that both stores rank and export alike. Still a float list: that is
    what the vector index reads (Neo4j's compact VECTOR type needs Cypher 25 and the block store
    format; Community Edition and the ArcadeDB test server have neither)."""
    return _float_list(quantize(vector))


def _vector(values: Any) -> Vector | None:
    if values is None:
        return None
    return np.asarray(values, dtype=np.float32)


def _json_dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _alias_keys(aliases: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(entity_key(a) for a in aliases if a.strip()))


def _alias_text(aliases: Sequence[str]) -> str:
    return " ".join(aliases)


# ---------------------------------------------------------------------- row conversion
def _episode_row(p: dict[str, Any]) -> EpisodeRow:
    return EpisodeRow(
        id=p["id"],
        group_id=p["group_id"],
        source=p.get("source"),
        kind=p["kind"],
        content=p["content"],
        reference_time=int(p["reference_time"]),
        ingested_at=int(p["ingested_at"]),
        content_hash=p["content_hash"],
        status=p.get("status") or "pending",
        extractor=p.get("extractor"),
        error=p.get("error"),
        metadata=json.loads(p.get("metadata") or "{}"),
        embedding=_vector(p.get("embedding")),  # only the export reads it (as on SQLite)
    )


def _entity_row(p: dict[str, Any]) -> EntityRow:
    return EntityRow(
        id=p["id"],
        group_id=p["group_id"],
        name=p["name"],
        key=p["key"],
        type=p["type"],
        aliases=list(p.get("aliases") or []),
        summary=p.get("summary"),
        embedding=_vector(p.get("embedding")),
        created_at=int(p.get("created_at") or 0),
        attributes=json.loads(p.get("attributes") or "{}"),
    )


def _opt_int(value: Any) -> int | None:
    return None if value is None else int(value)


def _fact_row(p: dict[str, Any]) -> FactRow:
    return FactRow(
        id=p["id"],
        group_id=p["group_id"],
        subject_id=p["subject_id"],
        predicate=p["predicate"],
        object_id=p.get("object_id"),
        value_json=p.get("value_json"),
        statement=p["statement"],
        valid_from=int(p["valid_from"]),
        valid_to=_opt_int(p.get("valid_to")),
        recorded_at=int(p["recorded_at"]),
        expired_at=_opt_int(p.get("expired_at")),
        ended_at=_opt_int(p.get("ended_at")),
        end_reason=p.get("end_reason"),
        confidence=float(p.get("confidence", 1.0)),
        decided_by=p.get("decided_by") or "rule",
        embedding=_vector(p.get("embedding")),
    )


def _fact_record(row: Record | dict[str, Any], view: TimeView | None) -> FactRecord:
    """Exactly the SQLite store's ``_fact_record`` on the row of ``facts/records``."""
    f: dict[str, Any] = row["f"]
    valid_to = f.get("valid_to")
    ended_at = f.get("ended_at")
    if view is not None and valid_to is not None and ended_at is not None and ended_at > view.known:
        valid_to = None  # not yet known at `known`
    superseded_by: str | None = row["superseded_by"]
    reason: str | None = row["superseded_reason"] if superseded_by is not None else None
    if superseded_by is not None and reason is None:
        reason = ""
    if reason is None and f.get("end_reason"):
        reason = f["end_reason"]
    raw = f.get("value_json")
    episode_ids = sorted(str(e) for e in (row["episode_ids"] or []))
    return FactRecord(
        id=f["id"],
        statement=f["statement"],
        subject=row["subject_name"],
        predicate=f["predicate"],
        object=row["object_name"],
        value=None if raw is None else json.loads(raw),
        valid_from=from_ms(int(f["valid_from"])),
        valid_to=None if valid_to is None else from_ms(int(valid_to)),
        recorded_at=from_ms(int(f["recorded_at"])),
        expired_at=None if f.get("expired_at") is None else from_ms(int(f["expired_at"])),
        confidence=float(f.get("confidence", 1.0)),
        superseded_by=superseded_by,
        reason=reason,
        episode_ids=episode_ids,
        group_id=f["group_id"],
        subject_id=f["subject_id"],
        object_id=f.get("object_id"),
        decided_by=f.get("decided_by") or "rule",
    )


def _link(row: Record | dict[str, Any]) -> LinkRow:
    return LinkRow(
        kind=row["kind"],
        src=row["src"],
        dst=row["dst"],
        reason=row["reason"],
        decided_by=row["decided_by"],
        decided_at=int(row["decided_at"]),
    )


def _link_order(link: LinkRow) -> tuple[str, str, str, str, str, int]:
    # SQLite answers these UNION queries in column order; keep the same order here.
    return (link.kind, link.src, link.dst, link.reason, link.decided_by, link.decided_at)


def _view_params(view: TimeView | None) -> dict[str, int | None]:
    if view is None:
        return {"at": None, "known": None}
    return {"at": int(view.at), "known": int(view.known)}


def _cypher_condition(cond: Condition) -> dict[str, Any]:
    """A filter condition as the parameters of ``facts/filter_candidates``: a test on the stored
    JSON text that accepts every value ``_filters.matches`` accepts (and may accept a few more:
    a number within SLACK, any string for a string range)."""
    texts: list[str] = []
    ranges: list[list[float | None]] = []
    exclude: list[str] = []  # texts of the bound of a strict range: fail for sure
    numbers = strings = False
    if cond.op in ("$eq", "$in"):
        for operand in cond.operand if cond.op == "$in" else (cond.operand,):
            if isinstance(operand, bool | str):
                found = value_texts(operand)
                texts += found
                strings = strings or not found  # a string the server cannot take
            elif (number := finite_number(operand)) is not None:
                ranges.append(list(widen(number)))
            else:
                numbers = True
    elif isinstance(cond.operand, str):
        strings = True  # string order: matches() decides
    elif (number := finite_number(cond.operand)) is not None:
        lo, hi = widen(number)
        ranges.append([None, hi] if cond.op in ("$lt", "$lte") else [lo, None])
        if cond.op in ("$lt", "$gt"):
            exclude = equal_texts(cond.operand)
    else:
        numbers = True
    return {
        "path": cond.path,
        "texts": texts,
        "ranges": ranges,
        "exclude": exclude,
        "numbers": numbers,
        "strings": strings,
    }


# ---------------------------------------------------------------------- the store
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
        parsed = urlparse(url.strip())
        if not parsed.hostname:
            raise ConfigError(
                f"store URL {url!r} has no host; expected e.g. neo4j://localhost:7687"
            )
        url_user = unquote(parsed.username) if parsed.username else None
        url_password = unquote(parsed.password) if parsed.password else None
        netloc = parsed.hostname if ":" not in parsed.hostname else f"[{parsed.hostname}]"
        if parsed.port:
            netloc += f":{parsed.port}"
        self._bolt_url = urlunparse(parsed._replace(netloc=netloc))
        self.url = self._bolt_url  # never shows a password
        self._write_seq = 0  # the running write transaction's commit sequence (under _lock)
        self._host = parsed.hostname
        self._username = (
            username
            or url_user
            or _env("NEO4J_USERNAME", "NEO4J_USER", "GRAPHMEM_TEST_BOLT_USER")
            or "neo4j"
        )
        self._password = (
            password
            if password is not None
            else url_password or _env("NEO4J_PASSWORD", "GRAPHMEM_TEST_BOLT_PASSWORD")
        )
        self._database = database or _env("NEO4J_DATABASE", "GRAPHMEM_TEST_BOLT_DATABASE") or None
        self._http_url = http_url
        retry = max_retry_time
        if retry is None:
            raw = _env("GRAPHMEM_NEO4J_RETRY_SECONDS")
            try:
                retry = float(raw) if raw else 30.0
            except ValueError:
                raise ConfigError(
                    f"GRAPHMEM_NEO4J_RETRY_SECONDS must be a number of seconds, got {raw!r}"
                ) from None
        self.max_retry_time = float(retry)
        self.connection_timeout = float(connection_timeout) if connection_timeout else 30.0
        self._driver: neo4j.Driver | None = None
        self._dialect: Dialect | None = None
        self._lock = threading.RLock()
        self._seq_lock = threading.Lock()
        self._seq_last = 0
        self._vector_dim: int | None = None
        self._agent: str | None = None
        # speakers(): by group, (episode epoch, highest seq read, name by key)
        self._speaker_lock = threading.Lock()
        self._speaker_cache: dict[str, tuple[Any, int, dict[str, str]]] = {}
        self._search = GroupSearch(self._read)

    # ------------------------------------------------------------------ lifecycle
    @property
    def driver(self) -> neo4j.Driver:
        if self._driver is None:
            self.connect()
        assert self._driver is not None
        return self._driver

    @property
    def dialect(self) -> Dialect:
        if self._dialect is None:
            self.connect()
        assert self._dialect is not None
        return self._dialect

    @property
    def server_agent(self) -> str | None:
        return self._agent if self._driver is not None else None

    def connect(self) -> None:
        with self._lock:
            if self._driver is not None:
                return
            auth = (self._username, self._password) if self._password is not None else None
            try:
                driver = GraphDatabase.driver(
                    self._bolt_url,
                    auth=auth,
                    max_transaction_retry_time=self.max_retry_time,
                    connection_timeout=self.connection_timeout,
                    user_agent="graphmem",
                )
            except (ValueError, ConfigError, DriverError) as exc:
                raise ConfigError(f"cannot use the store URL {self.url}: {exc}") from exc
            try:
                driver.verify_connectivity()
                agent = driver.get_server_info().agent
            except (DriverError, Neo4jError) as exc:
                driver.close()
                raise self._error("connect", exc) from exc
            self._agent = str(agent)
            self._dialect = select_dialect(
                self._agent,
                bolt_host=self._host,
                user=self._username,
                password=self._password or "",
                database=self._database,
                http_url=self._http_url,
            )
            self._driver = driver

    def close(self) -> None:
        with self._lock:
            if self._driver is not None:
                self._driver.close()
            self._driver = None
            self._dialect = None
            self._vector_dim = None
            self._search.forget()

    def _error(self, what: str, exc: BaseException) -> StoreError:
        detail = getattr(exc, "message", None) or str(exc) or type(exc).__name__
        where = f"Neo4j store {self.url}" + (
            f" (database {self._database})" if self._database else ""
        )
        if isinstance(exc, AuthError):
            hint = (
                "authentication failed: set NEO4J_USERNAME and NEO4J_PASSWORD "
                "(or pass username=/password=)"
            )
        elif isinstance(exc, ServiceUnavailable | SessionExpired):
            hint = (
                "the server is unreachable or went away "
                f"(retried for up to {self.max_retry_time:g} s)"
            )
        elif isinstance(exc, TransactionError):
            hint = "the transaction could not be committed"
        elif isinstance(exc, ConstraintError):
            hint = "a uniqueness constraint refused the write"
        else:
            hint = "the server refused the request"
        return StoreError(f"{where}: {what} failed, {hint}: {type(exc).__name__}: {detail}")

    # ------------------------------------------------------------------ running queries
    def _read(self, name: str, /, **params: Any) -> list[Record]:
        """One named read query (routed to readers; retried by the driver)."""
        try:
            records, _, _ = self.driver.execute_query(
                query(name),
                parameters_=params,
                routing_=RoutingControl.READ,
                database_=self._database,
            )
        except (DriverError, Neo4jError) as exc:
            raise self._error(f"read {name}", exc) from exc
        return list(records)

    def _session(self, *, read: bool = False) -> neo4j.Session:
        return self.driver.session(
            database=self._database,
            default_access_mode=neo4j.READ_ACCESS if read else neo4j.WRITE_ACCESS,
            bookmark_manager=self.driver.execute_query_bookmark_manager,
        )

    def _read_tx(self, fn: Callable[[ManagedTransaction], T], what: str) -> T:
        try:
            with self._session(read=True) as session:
                return session.execute_read(fn)
        except (DriverError, Neo4jError) as exc:
            raise self._error(what, exc) from exc

    def _write_tx(self, fn: Callable[[ManagedTransaction], T], what: str) -> T:
        """One managed write transaction, serialised with the other writers (lock node).

        A server that locks optimistically (ArcadeDB) lets two writers run at once and fails
        the second at commit: a retryable conflict, which the driver re-runs, except when both
        created the same unique key (one episode, one new entity), which it reports as a
        ``ConstraintError``. That is the same lost race, so it is re-run too (the units of work
        are pure and see the other writer's rows on the next run), a few times: a constraint
        error that persists is real and raised.
        """

        def locked(tx: ManagedTransaction) -> T:
            (lock,) = _run(tx, "meta/lock", at=to_ms(utcnow()))
            # The lock's counter is the commit sequence (writers are serialised on it); the
            # unit of work reads it from here (self._lock is held for the whole transaction).
            self._write_seq = int(lock["n"])
            return fn(tx)

        deadline = time.monotonic() + self.max_retry_time
        with self._lock:
            for attempt in range(_CONSTRAINT_RETRIES + 1):
                try:
                    with self._session() as session:
                        return session.execute_write(locked)
                except ConstraintError as exc:
                    pause = 0.05 * 2**attempt * (0.5 + random.random())
                    if attempt == _CONSTRAINT_RETRIES or time.monotonic() + pause > deadline:
                        raise self._error(what, exc) from exc
                    time.sleep(pause)
                except (DriverError, Neo4jError) as exc:
                    raise self._error(what, exc) from exc
        raise AssertionError("unreachable")

    def _schema(self, name: str, params: dict[str, Any]) -> None:
        """Each statement of a schema file in its own transaction (DDL cannot share one)."""
        for statement in statements(name):
            try:
                self.driver.execute_query(statement, parameters_=params, database_=self._database)
            except (DriverError, Neo4jError) as exc:
                raise self._error(f"schema change {name}", exc) from exc

    def _seq(self, n: int) -> int:
        """The first of ``n`` increasing sequence numbers (insertion order, like a rowid)."""
        with self._seq_lock:
            base = max(self._seq_last + 1, time.time_ns() // 1000)
            self._seq_last = base + max(n, 1) - 1
            return base

    # ------------------------------------------------------------------ schema
    def migrate(self) -> list[str]:
        applied: list[str] = []
        with self._lock:
            done = self._applied()
            newest = max(version for version, _, _ in MIGRATIONS)
            if done and max(done) > newest:
                raise SchemaError(
                    f"{self.url} was written by a newer graphmem (schema v{max(done)}, "
                    f"this one knows v{newest}); upgrade graphmem"
                )
            for version, name, file in MIGRATIONS:
                if version in done:
                    continue
                try:
                    if file == _FULLTEXT_MIGRATION:
                        self.dialect.fulltext_indexes(self._schema)
                    elif file == _GROUP_FULLTEXT_MIGRATION:
                        backfill_group_tokens(self._stream, self._write_tx)
                        self.dialect.group_fulltext_indexes(self._schema)
                    elif file == _SPEAKER_MIGRATION:
                        self._backfill_speakers()
                    else:
                        self._schema(file, {})
                except SchemaError:
                    raise
                except StoreError as exc:
                    raise SchemaError(f"migration {version} ({name}) failed: {exc}") from exc
                self._record_migration(version, name)
                applied.append(f"{version}: {name}")
            if applied:
                self.dialect.await_indexes(self._schema)
            embedder = self.get_meta("embedder")
            if embedder is not None:
                self._ensure_vector_indexes(_embedder_dim(embedder))
        return applied

    def _backfill_speakers(self) -> None:
        """Migration 5: write the derived ``speaker`` of the episodes stored before it existed
        (idempotent: only episodes without one are read, and the value is a pure function of
        the metadata)."""
        rows: list[dict[str, Any]] = []
        for r in self._stream("episodes/speaker_missing"):
            try:
                metadata = json.loads(r["metadata"] or "{}")
            except (TypeError, ValueError):
                continue
            who = episode_speaker(metadata)
            if who is not None:
                rows.append({"id": str(r["id"]), "speaker": who})

        def write(tx: ManagedTransaction, batch: Sequence[dict[str, Any]]) -> None:
            _run(tx, "episodes/speaker_set", rows=list(batch))

        for chunk in _chunks(rows):
            self._write_tx(functools.partial(write, batch=chunk), "backfill episode speakers")
        with self._speaker_lock:
            self._speaker_cache.clear()

    def _record_migration(self, version: int, name: str) -> None:
        def work(tx: ManagedTransaction) -> None:
            _run(
                tx,
                "schema/record_migration",
                version=version,
                name=name,
                applied_at=to_ms(utcnow()),
            )

        self._write_tx(work, f"record migration {version}")

    def _applied(self) -> dict[int, int]:
        return {
            int(r["version"]): int(r["applied_at"])
            for r in self._read("schema/migrations_applied")
            if r["applied_at"] is not None
        }

    def migration_status(self) -> list[MigrationInfo]:
        done = self._applied()
        return [MigrationInfo(v, name, done.get(v)) for v, name, _ in MIGRATIONS]

    def _ensure_vector_indexes(self, dim: int | None) -> None:
        if dim is None or dim <= 0 or self._vector_dim == dim:
            return
        with self._lock:
            try:
                self.dialect.vector_indexes(self._schema, dim)
            except SchemaError:
                # An index of another size (ArcadeDB says so): rebuild it if nothing uses it.
                if self._has_embeddings():
                    raise
                self.dialect.drop_vector_indexes(self._schema)
                self.dialect.vector_indexes(self._schema, dim)
            self.dialect.await_indexes(self._schema)
            self._vector_dim = dim

    def _has_embeddings(self) -> bool:
        rows = self._read("admin/has_embeddings")
        return bool(rows and rows[0]["embedded"])

    def get_meta(self, key: str) -> str | None:
        rows = self._read("meta/get", key=key)
        return None if not rows or rows[0]["value"] is None else str(rows[0]["value"])

    def set_meta(self, key: str, value: str) -> None:
        self._write_tx(lambda tx: _run(tx, "meta/set", key=key, value=value), f"set meta {key}")
        if key == "embedder":
            self._reset_vector_indexes(_embedder_dim(value))

    def _reset_vector_indexes(self, dim: int | None) -> None:
        """A store records its embedder once (or again after a wipe): while no node holds an
        embedding the vector indexes are rebuilt for this embedder's size; afterwards they stay."""
        if dim is None:
            return
        with self._lock:
            if not self._has_embeddings():
                self.dialect.drop_vector_indexes(self._schema)
                self._vector_dim = None
            self._ensure_vector_indexes(dim)

    def wipe_all_for_tests(self) -> int:
        """Delete every node and relationship of the database (schema is kept). Tests only."""
        with self._speaker_lock:
            self._speaker_cache.clear()
        self._search.forget()
        total = 0
        while True:
            rows = self._write_tx(
                lambda tx: _run(tx, "admin/wipe_batch", batch=5000), "wipe the database"
            )
            deleted = int(rows[0]["deleted"]) if rows else 0
            total += deleted
            if deleted == 0:
                return total

    # ------------------------------------------------------------------ episodes
    def insert_episode(self, episode: EpisodeRow) -> tuple[EpisodeRow, bool]:
        return self.insert_episodes([episode])[0]

    def insert_episodes(self, episodes: Sequence[EpisodeRow]) -> list[tuple[EpisodeRow, bool]]:
        if not episodes:
            return []

        def work(tx: ManagedTransaction) -> list[tuple[EpisodeRow, bool]]:
            ids = list(dict.fromkeys(e.id for e in episodes))
            stored: dict[str, EpisodeRow] = {}
            for chunk in _chunks(ids):
                for r in _run(tx, "episodes/by_ids", ids=list(chunk)):
                    row = _episode_row(r["e"])
                    stored[row.id] = row
            out: list[tuple[EpisodeRow, bool]] = []
            fresh: list[EpisodeRow] = []
            for ep in episodes:
                if ep.id in stored:
                    out.append((stored[ep.id], False))
                    continue
                stored[ep.id] = ep
                fresh.append(ep)
                out.append((ep, True))
            if fresh:
                base = self._seq(len(fresh))
                _run(
                    tx,
                    "episodes/create",
                    rows=[_episode_params(ep, base + i) for i, ep in enumerate(fresh)],
                )
            return out

        return self._write_tx(work, "store episodes")

    def set_episode_status(
        self, episode_id: str, status: str, extractor: str | None, error: str | None
    ) -> None:
        self._write_tx(
            lambda tx: _run(
                tx,
                "episodes/set_status",
                id=episode_id,
                status=status,
                extractor=extractor,
                error=error,
            ),
            "set an episode's status",
        )

    def get_episode(self, episode_id: str) -> EpisodeRow | None:
        rows = self._read("episodes/by_ids", ids=[episode_id])
        return _episode_row(rows[0]["e"]) if rows else None

    def episodes(self, episode_ids: Sequence[str]) -> list[EpisodeRecord]:
        found: dict[str, EpisodeRow] = {}
        for chunk in _chunks(list(dict.fromkeys(episode_ids))):
            for r in self._read("episodes/by_ids", ids=list(chunk)):
                ep = _episode_row(r["e"])
                found[ep.id] = ep
        return [episode_record(found[i]) for i in episode_ids if i in found]

    def episodes_by_status(self, group_id: str | None, statuses: Sequence[str]) -> list[EpisodeRow]:
        rows = self._read("episodes/by_status", group_id=group_id, statuses=list(statuses))
        return [_episode_row(r["e"]) for r in rows]

    def episode_ids_by_kind(self, group_id: str, kind: str) -> list[str]:
        rows = self._read("episodes/ids_by_kind", group_id=group_id, kind=kind)
        return [str(r["id"]) for r in rows]

    def change_token(self) -> object | None:
        # No cheap store-wide change counter to read here: callers list what they need.
        return None

    def recent_episodes(
        self, group_id: str, source: str | None, before: int, limit: int
    ) -> list[EpisodeRow]:
        rows = self._read(
            "episodes/recent",
            group_id=group_id,
            source=source,
            before=int(before),
            limit=int(limit),
        )
        return [_episode_row(r["e"]) for r in reversed(rows)]

    # ------------------------------------------------------------------ the write unit
    def write(self, work: Callable[[StoreReader], WritePlan]) -> WritePlan:
        return self.write_many([work])[0]

    def write_many(self, works: Sequence[Callable[[StoreReader], WritePlan]]) -> list[WritePlan]:
        if not works:
            return []

        def unit(tx: ManagedTransaction) -> list[WritePlan]:
            # The driver may run this again after a transient failure: each work is pure, and
            # each sees the plans applied before it in this transaction.
            reader = _Reader(tx, self._write_seq)
            plans: list[WritePlan] = []
            for work in works:
                plan = work(reader)
                self._apply(tx, plan)
                plans.append(plan)
            return plans

        plans = self._write_tx(unit, "write")
        self._after_write(plans)
        return plans

    def _after_write(self, plans: Sequence[WritePlan]) -> None:
        """Direct store use without a recorded embedder: index vectors once their size is known."""
        if self._vector_dim is not None:
            return
        for plan in plans:
            vectors = [
                plan.episode_embedding,
                *(f.embedding for f in plan.facts_new),
                *(e.embedding for e in plan.entities_new),
            ]
            for vector in vectors:
                if vector is not None and vector.shape[0] > 0:
                    self._ensure_vector_indexes(int(vector.shape[0]))
                    return

    def _apply(self, tx: ManagedTransaction, plan: WritePlan) -> None:
        # The SQLite store's order: deletions first (forget), then inserts and updates.
        for chunk in _chunks(plan.delete_fact_ids):
            _run(tx, "facts/delete", ids=list(chunk))
        for chunk in _chunks(plan.delete_episode_ids):
            _run(tx, "episodes/delete", ids=list(chunk))
        if plan.delete_episode_ids:
            # Cached speakers (here and in other processes) start over.
            _run(tx, "meta/set", key=_EPISODE_EPOCH, value=str(self._seq(1)))
        for chunk in _chunks(plan.delete_entity_ids):
            _run(tx, "entities/delete_alias_keys", ids=list(chunk))
            _run(tx, "entities/delete", ids=list(chunk))
        if plan.entities_new:
            base = self._seq(len(plan.entities_new))
            _run(
                tx,
                "entities/create",
                rows=[_entity_params(e, base + i) for i, e in enumerate(plan.entities_new)],
            )
            alias_rows = [
                {"group_id": e.group_id, "key": k, "entity_id": e.id}
                for e in plan.entities_new
                for k in _alias_keys(e.aliases)
            ]
            if alias_rows:
                _run(tx, "entities/alias_keys_add", rows=alias_rows)
        if plan.entity_aliases:
            updated = _run(
                tx,
                "entities/aliases_set",
                rows=[
                    {"id": eid, "aliases": list(aliases), "alias_text": _alias_text(aliases)}
                    for eid, aliases in plan.entity_aliases.items()
                ],
            )
            alias_rows = [
                {"group_id": r["group_id"], "key": k, "entity_id": r["id"]}
                for r in updated
                for k in _alias_keys(plan.entity_aliases[r["id"]])
            ]
            if alias_rows:
                _run(tx, "entities/alias_keys_add", rows=alias_rows)
        if plan.facts_new:
            base = self._seq(len(plan.facts_new))
            _run(
                tx,
                "facts/create",
                rows=[{"props": _fact_props(f, base + i)} for i, f in enumerate(plan.facts_new)],
            )
        if plan.facts_update:
            _run(
                tx,
                "facts/update",
                rows=[
                    {
                        "id": u.id,
                        "valid_from": int(u.valid_from),
                        "valid_to": _opt_int(u.valid_to),
                        "expired_at": _opt_int(u.expired_at),
                        "ended_at": _opt_int(u.ended_at),
                        "end_reason": u.end_reason,
                        "confidence": float(u.confidence),
                    }
                    for u in plan.facts_update
                ],
            )
        for chunk in _chunks(plan.claims_reset):
            _run(tx, "facts/claims_reset", ids=list(chunk))
        for name, prov_rows in (
            ("facts/provenance_add", plan.provenance),
            ("facts/endings_add", plan.endings),
        ):
            if prov_rows:
                base = self._seq(len(prov_rows))
                _run(
                    tx,
                    name,
                    rows=[
                        {
                            "fact_id": r.fact_id,
                            "episode_id": r.episode_id,
                            "span": r.span,
                            "claim": r.claim,
                            "seq": base + i,
                        }
                        for i, r in enumerate(prov_rows)
                    ],
                )
        if plan.links_remove:
            _run(
                tx,
                "facts/links_remove",
                rows=[{"kind": k, "src": s, "dst": d} for k, s, d in plan.links_remove],
            )
        if plan.links_add:
            base = self._seq(len(plan.links_add))
            by_kind: dict[str, list[dict[str, Any]]] = {}
            for i, lk in enumerate(plan.links_add):
                if lk.kind not in _LINK_QUERIES:
                    raise StoreError(
                        f"unknown fact link kind {lk.kind!r}: expected SUPERSEDES or CONTRADICTS"
                    )
                by_kind.setdefault(lk.kind, []).append(
                    {
                        "src": lk.src,
                        "dst": lk.dst,
                        "reason": lk.reason,
                        "decided_by": lk.decided_by,
                        "decided_at": int(lk.decided_at),
                        "seq": base + i,
                    }
                )
            for kind, rows in by_kind.items():
                _run(tx, _LINK_QUERIES[kind], rows=rows)
        if plan.mentions:
            base = self._seq(len(plan.mentions))
            _run(
                tx,
                "episodes/mentions_add",
                rows=[
                    {"episode_id": ep, "entity_id": ent, "seq": base + i}
                    for i, (ep, ent) in enumerate(plan.mentions)
                ],
            )
        if plan.prune_entity_ids:
            orphans = [
                str(r["deleted"])
                for r in _run(tx, "entities/prune", ids=list(dict.fromkeys(plan.prune_entity_ids)))
            ]
            if orphans:
                _run(tx, "entities/delete_alias_keys", ids=orphans)
            if orphans and plan.audit is not None:
                plan.audit["entities_removed"] = plan.audit.get("entities_removed", 0) + len(
                    orphans
                )
        if plan.episode_id is not None and plan.episode_embedding is not None:
            _run(
                tx,
                "episodes/embedding_set",
                id=plan.episode_id,
                embedding=_stored_list(plan.episode_embedding),
            )
        if plan.episode_id is not None and plan.episode_status is not None:
            status, extractor, error = plan.episode_status
            _run(
                tx,
                "episodes/set_status",
                id=plan.episode_id,
                status=status,
                extractor=extractor,
                error=error,
            )
        if plan.audit is not None:
            audit = dict(plan.audit)
            audit_id = make_id("audit", json.dumps(audit, sort_keys=True, default=str))
            audit["id"] = audit_id
            plan.audit["id"] = audit_id
            _run(
                tx,
                "audit/record",
                id=audit_id,
                at=int(audit.get("at", to_ms(utcnow()))),
                group_id=str(audit.get("group_id", "")),
                action=str(audit.get("action", "")),
                details=_json_dump(audit),
            )

    # ------------------------------------------------------------------ search
    def _vectors_ready(self) -> bool:
        if self._vector_dim is None:
            recorded = self.get_meta("embedder")
            if recorded is not None:
                self._ensure_vector_indexes(_embedder_dim(recorded))
        return self._vector_dim is not None

    def _vector(self, role: str, group_id: str, vector: Vector, n: int) -> list[tuple[str, float]]:
        if not self._vectors_ready():
            return []
        if self._vector_dim is not None and vector.shape[0] != self._vector_dim:
            raise StoreError(
                f"query vector has {vector.shape[0]} dimensions, the store's vector indexes "
                f"{self._vector_dim}; open the store with the embedder it was built with"
            )
        values = _float_list(vector)
        assert values is not None
        if not any(values):
            return []  # a zero vector has no cosine
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

    def speakers(self, group_id: str) -> dict[str, str]:
        """The speakers of the group's episodes (``metadata.speaker`` or ``.name``) by name key,
        the SQLite store's answer (the latest spelling of a key wins).

        Kept per store instance and brought up to date by one index-backed read of the group's
        episodes stored since the last call (``graphmem_episode_group_seq``); an episode
        deletion anywhere (a new episode epoch) reads the group again.
        """
        with self._speaker_lock:
            cached = self._speaker_cache.get(group_id)
            after = -1 if cached is None else cached[1] - _SEQ_MARGIN
            rows = self._read(
                "episodes/speakers", group_id=group_id, after=after, epoch_key=_EPISODE_EPOCH
            )
            epoch = rows[0]["epoch"] if rows else None
            if cached is not None and epoch != cached[0]:
                cached = None
                rows = self._read(
                    "episodes/speakers", group_id=group_id, after=-1, epoch_key=_EPISODE_EPOCH
                )
                epoch = rows[0]["epoch"] if rows else None
            names = {} if cached is None else dict(cached[2])
            high = -1 if cached is None else cached[1]
            for r in rows:  # ordered by each speaker's latest seq: the latest spelling wins
                if r["last"] is None:
                    continue
                high = max(high, int(r["last"]))
                who = r["speaker"]
                if isinstance(who, str) and who.strip():
                    names[entity_key(who)] = who.strip()
            self._speaker_cache[group_id] = (epoch, high, names)
            return dict(names)

    def episode_context(
        self, episode_ids: Sequence[str], window: int = 1
    ) -> tuple[dict[str, tuple[str | None, int]], dict[str, list[tuple[str, int]]]]:
        """Each episode's speaker and reference time, and its neighbours: the ``window``
        episodes before and after it in arrival order within the same group and source (a
        conversation's adjacent turns), the SQLite store's answer.

        As there, the search looks ``window + 1`` episodes of the group each way (other
        sources' episodes may be interleaved) and keeps those of the episode's source: two
        index-backed reads, at most ``2 (window + 1)`` rows per episode, at any store size.
        """
        wanted = list(dict.fromkeys(episode_ids))
        base: dict[str, tuple[str, str | None, int]] = {}
        speakers: dict[str, tuple[str | None, int]] = {}
        for chunk in _chunks(wanted):
            for r in self._read("episodes/context", ids=list(chunk)):
                eid = str(r["id"])
                base[eid] = (str(r["group_id"]), r["source"], int(r["seq"]))
                who = r["speaker"]
                speakers[eid] = (who if isinstance(who, str) else None, int(r["reference_time"]))
        neighbours: dict[str, list[tuple[str, int]]] = {eid: [] for eid in base}
        if window <= 0 or not base:
            return speakers, neighbours
        reach = int(window) + 1
        near: dict[str, list[tuple[int, str, str | None]]] = {eid: [] for eid in base}
        ids = list(base)
        for chunk in _chunks(ids):
            for r in self._read(
                "episodes/neighbours",
                rows=[{"id": e, "group_id": base[e][0], "seq": base[e][2]} for e in chunk],
                reach=reach,
            ):
                other = str(r["neighbour"])
                near[str(r["id"])].append((int(r["seq"]), other, r["source"]))
                who = r["speaker"]
                speakers.setdefault(
                    other, (who if isinstance(who, str) else None, int(r["reference_time"]))
                )
        for eid, (_, source, seq) in base.items():
            before = sorted((n for n in near[eid] if n[0] < seq), reverse=True)
            after = sorted(n for n in near[eid] if n[0] > seq)
            for side in (before, after):
                found = 0
                for _, other, other_source in side[:reach]:
                    if other_source == source:
                        found += 1
                        neighbours[eid].append((other, found))
                        if found == window:
                            break
        return speakers, neighbours

    def find_entities(self, group_id: str, keys: Sequence[str]) -> list[EntityRecord]:
        rows = self._read_tx(
            lambda tx: _Reader(tx).entities_by_keys(group_id, keys), "find entities"
        )
        return [
            EntityRecord(id=r.id, name=r.name, type=r.type, aliases=r.aliases, summary=r.summary)
            for r in rows
        ]

    def find_entities_by_ids(self, group_id: str, entity_ids: Sequence[str]) -> list[EntityRecord]:
        out: list[EntityRecord] = []
        for chunk in _chunks(list(dict.fromkeys(entity_ids))):
            out.extend(
                EntityRecord(
                    id=r["id"],
                    name=r["name"],
                    type=r["type"],
                    aliases=list(r["aliases"] or []),
                    summary=r["summary"],
                )
                for r in self._read("entities/by_ids", ids=list(chunk), group_id=group_id)
            )
        return out

    def expand(
        self, group_id: str, entity_ids: Sequence[str], hops: int, view: TimeView, limit: int
    ) -> list[tuple[str, int, str]]:
        def fetch(ids: list[str]) -> Iterator[tuple[str, str, str | None]]:
            for chunk in _chunks(ids, 400):
                rows = self._read(
                    "facts/expand_hop",
                    ids=list(chunk),
                    group_id=group_id,
                    limit=2 * int(limit),
                    **_view_params(view),
                )
                # subject matches first, then object matches, up to the limit (as SQLite)
                rows = sorted(rows, key=lambda r: not r["as_subject"])[: int(limit)]
                for r in rows:
                    yield r["id"], r["subject_id"], r["object_id"]

        return breadth_first(entity_ids, hops, limit, fetch)

    # ------------------------------------------------------------------ fact reads
    def fact_records(
        self, fact_ids: Sequence[str], view: TimeView | None = None
    ) -> list[FactRecord]:
        wanted = list(dict.fromkeys(fact_ids))
        found: dict[str, FactRecord] = {}
        for chunk in _chunks(wanted):
            for row in self._read("facts/records", ids=list(chunk), **_view_params(view)):
                record = _fact_record(row, view)
                found[record.id] = record
        return [found[i] for i in wanted if i in found]

    def episode_mentions(self, episode_ids: Sequence[str]) -> list[tuple[str, str]]:
        """(episode id, entity id) for each entity the episodes mention."""
        return [
            (str(r["episode_id"]), str(r["entity_id"]))
            for chunk in _chunks(list(dict.fromkeys(episode_ids)))
            for r in self._read("episodes/mentions", ids=list(chunk))
        ]

    def record_facts(self, episode_ids: Sequence[str]) -> list[tuple[str, str]]:
        """(episode id, fact id) for each fact that those of the episodes which are JSON
        records support (FROM_EPISODE), in any view: callers narrow them with
        ``fact_stubs``."""
        return [
            (str(r["episode_id"]), str(r["fact_id"]))
            for chunk in _chunks(list(dict.fromkeys(episode_ids)))
            for r in self._read("episodes/record_facts", ids=list(chunk))
        ]

    def fact_stubs(
        self, fact_ids: Sequence[str], view: TimeView
    ) -> list[tuple[str, str, str | None, int, float]]:
        out: list[tuple[str, str, str | None, int, float]] = []
        for chunk in _chunks(list(dict.fromkeys(fact_ids))):
            out.extend(
                (
                    str(r["id"]),
                    str(r["subject_id"]),
                    r["object_id"],
                    int(r["valid_from"]),
                    float(r["confidence"]),
                )
                for r in self._read("facts/stubs", ids=list(chunk), **_view_params(view))
            )
        return out

    def links(self, fact_ids: Sequence[str]) -> list[LinkRow]:
        out: dict[tuple[str, str, str], LinkRow] = {}
        for chunk in _chunks(list(dict.fromkeys(fact_ids))):
            for row in self._read("facts/links_touching", ids=list(chunk)):
                link = _link(row)
                out[(link.kind, link.src, link.dst)] = link
        return sorted(out.values(), key=_link_order)

    def list_facts(
        self,
        group_id: str,
        *,
        entity_ids: Sequence[str] | None = None,
        predicate: str | None = None,
        view: TimeView | None = None,
        subject_only: bool = False,
    ) -> list[FactRecord]:
        params: dict[str, Any] = {"group_id": group_id, "predicate": predicate}
        params.update(_view_params(view))
        if entity_ids is not None:
            if not entity_ids:
                return []
            rows = self._read(
                "facts/list_entities",
                entity_ids=list(entity_ids[:400]),
                subject_only=bool(subject_only),
                **params,
            )
        else:
            rows = self._read("facts/list_group", **params)
        return [_fact_record(row, view) for row in rows]

    def facts_with_values(
        self,
        group_id: str,
        predicates: Sequence[str],
        view: TimeView,
        subject_ids: Sequence[str] | None = None,
    ) -> dict[str, dict[str, Any]]:
        if not predicates or (subject_ids is not None and not subject_ids):
            return {}
        params = {"group_id": group_id, "predicates": list(predicates), **_view_params(view)}
        if subject_ids is None:
            rows = self._read("facts/values", **params)
        else:
            unique = list(dict.fromkeys(subject_ids))
            rows = self._read("facts/values_of", subject_ids=unique, **params)
        out: dict[str, dict[str, Any]] = {}
        for r in rows:
            values = out.setdefault(r["subject_id"], {}).setdefault(r["predicate"], [])
            values.append(json.loads(r["value_json"]))
        return out

    def filter_candidates(
        self, group_id: str, conditions: Sequence[Condition], view: TimeView, limit: int
    ) -> list[str]:
        if limit <= 0 or not conditions:
            return []
        drive = driving(conditions)
        rows = self._read(
            "facts/filter_candidates",
            group_id=group_id,
            paths=sorted({c.path for c in conditions}) if drive is None else [drive.path],
            drive=None if drive is None else _cypher_condition(drive),
            present=[_cypher_condition(c) for c in conditions if c.op != "$ne" and c is not drive],
            absent=[
                {"path": c.path, "texts": texts}
                for c in conditions
                if c.op == "$ne" and (texts := equal_texts(c.operand))
            ],
            limit=int(limit),
            **_view_params(view),
        )
        return [str(r["subject_id"]) for r in rows]

    # ------------------------------------------------------------------ stats, export, import
    def stats(self, group_id: str | None) -> dict[str, Any]:
        rows = self._read("stats/counts", group_id=group_id, now=to_ms(utcnow()))
        counts = dict(rows[0]) if rows else {}
        groups = (
            [str(r["group_id"]) for r in self._read("stats/groups")]
            if group_id is None
            else [group_id]
        )
        keys = (
            "episodes",
            "episodes_failed",
            "episodes_pending",
            "entities",
            "facts",
            "facts_current",
            "facts_expired",
            "supersedes_links",
            "contradicts_links",
        )
        return {
            "store": self.url,
            "group_id": group_id,
            **{k: int(counts.get(k) or 0) for k in keys},
            "groups": groups,
            "embedder": self.get_meta("embedder"),
        }

    def _stream(self, name: str, /, **params: Any) -> Iterator[Record]:
        """A read query's records as they arrive (exports do not hold everything in memory)."""
        try:
            with self._session(read=True) as session:
                yield from session.run(query(name), params)
        except (DriverError, Neo4jError) as exc:
            raise self._error(f"read {name}", exc) from exc

    def export_rows(self, group_id: str | None) -> Iterator[dict[str, Any]]:
        """The SQLite store's JSONL records, in the same order (insertion order)."""
        for r in self._stream("export/episodes", group_id=group_id):
            yield episode_export(_episode_row(r["e"]))
        for r in self._stream("export/entities", group_id=group_id):
            yield entity_export(_entity_row(r["e"]))
        for r in self._stream("export/facts", group_id=group_id):
            yield fact_export(_fact_row(r["f"]))
        for name, kind in (("export/provenance", "provenance"), ("export/endings", "ending")):
            for r in self._stream(name, group_id=group_id):
                yield provenance_export(
                    kind, ProvenanceRow(r["fact_id"], r["episode_id"], r["span"], r["claim"])
                )
        for r in self._stream("export/links", group_id=group_id):
            yield link_export(_link(r))
        for r in self._stream("export/mentions", group_id=group_id):
            yield {"type": "mention", "episode_id": r["episode_id"], "entity_id": r["entity_id"]}

    def import_rows(self, rows: Sequence[dict[str, Any]]) -> dict[str, int]:
        """Insert an export's rows; what the store already holds is left alone (and not
        counted), so importing twice changes nothing (the SQLite store's rule)."""
        plan = plan_from_export(rows)
        episodes = [episode_from_export(r) for r in rows if r.get("type") == "episode"]

        def present(tx: ManagedTransaction, name: str, ids: list[str]) -> set[str]:
            return {str(r["id"]) for chunk in _chunks(ids) for r in _run(tx, name, ids=list(chunk))}

        def work(tx: ManagedTransaction) -> dict[str, int]:
            known = present(tx, "episodes/existing", [ep.id for ep in episodes])
            fresh: list[EpisodeRow] = []
            for ep in episodes:
                if ep.id not in known:
                    known.add(ep.id)
                    fresh.append(ep)
            if fresh:
                base = self._seq(len(fresh))
                _run(
                    tx,
                    "episodes/create",
                    rows=[_episode_params(ep, base + i) for i, ep in enumerate(fresh)],
                )
            facts = present(tx, "facts/existing", [f.id for f in plan.facts_new])
            entities = present(tx, "entities/existing", [e.id for e in plan.entities_new])
            links = {
                (str(r["kind"]), str(r["src"]), str(r["dst"]))
                for chunk in _chunks(plan.links_add)
                for r in _run(
                    tx,
                    "facts/links_existing",
                    rows=[{"kind": lk.kind, "src": lk.src, "dst": lk.dst} for lk in chunk],
                )
            }
            todo = dataclasses.replace(
                plan,
                facts_new=[f for f in plan.facts_new if f.id not in facts],
                entities_new=[e for e in plan.entities_new if e.id not in entities],
                links_add=[lk for lk in plan.links_add if (lk.kind, lk.src, lk.dst) not in links],
                audit=None,
            )
            self._apply(tx, todo)
            return {
                "episodes": len(fresh),
                "entities": len(todo.entities_new),
                "facts": len(todo.facts_new),
                "links": len(todo.links_add),
            }

        counts = self._write_tx(work, "import")
        vector = next((ep.embedding for ep in episodes if ep.embedding is not None), None)
        self._after_write([dataclasses.replace(plan, episode_embedding=vector)])
        return counts


# ---------------------------------------------------------------------- helpers on a transaction
def _run(tx: ManagedTransaction, query_name: str, /, **params: Any) -> list[Record]:
    return list(tx.run(query(query_name), params))


def _embedder_dim(value: str) -> int | None:
    try:
        info = json.loads(value)
        return int(info["dim"])
    except (ValueError, KeyError, TypeError):
        return None


def _episode_params(ep: EpisodeRow, seq: int) -> dict[str, Any]:
    return {
        "id": ep.id,
        "group_id": ep.group_id,
        "source": ep.source,
        "kind": ep.kind,
        "content": ep.content,
        "reference_time": int(ep.reference_time),
        "ingested_at": int(ep.ingested_at),
        "content_hash": ep.content_hash,
        "status": ep.status,
        "extractor": ep.extractor,
        "error": ep.error,
        "metadata": _json_dump(ep.metadata),
        "speaker": episode_speaker(ep.metadata),
        "seq": seq,
        "group_token": group_token(ep.group_id),
        "embedding": _stored_list(ep.embedding),
    }


def episode_speaker(metadata: Any) -> str | None:
    """The derived ``speaker`` property of an episode: ``metadata.speaker``, else
    ``metadata.name``, as text, read the way the SQLite store's ``coalesce(json_extract(…))``
    reads it (a JSON object or list is its compact JSON text; a number or a boolean is no
    speaker)."""
    if not isinstance(metadata, dict):
        return None
    value = metadata.get("speaker")
    if value is None:
        value = metadata.get("name")
    if isinstance(value, str):
        return value
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return None


def _entity_params(e: EntityRow, seq: int) -> dict[str, Any]:
    return {
        "id": e.id,
        "group_id": e.group_id,
        "name": e.name,
        "key": e.key,
        "type": e.type,
        "aliases": list(e.aliases),
        "alias_text": _alias_text(e.aliases),
        "summary": e.summary,
        "embedding": _stored_list(e.embedding),
        "created_at": int(e.created_at),
        "attributes": _json_dump(e.attributes),
        "seq": seq,
        "group_token": group_token(e.group_id),
    }


def _fact_props(f: FactRow, seq: int) -> dict[str, Any]:
    return {
        "id": f.id,
        "group_id": f.group_id,
        "subject_id": f.subject_id,
        "predicate": f.predicate,
        "object_id": f.object_id,
        "value_json": f.value_json,
        "statement": f.statement,
        "embedding": _stored_list(f.embedding),
        "valid_from": int(f.valid_from),
        "valid_to": _opt_int(f.valid_to),
        "recorded_at": int(f.recorded_at),
        "expired_at": _opt_int(f.expired_at),
        "ended_at": _opt_int(f.ended_at),
        "end_reason": f.end_reason,
        "confidence": float(f.confidence),
        "decided_by": f.decided_by,
        "seq": seq,
        "group_token": group_token(f.group_id),
    }


# ---------------------------------------------------------------------- the in-transaction reader
class _Reader:
    """``StoreReader`` on an open managed transaction: sees the writes made before it."""

    def __init__(self, tx: ManagedTransaction, write_seq: int = 0) -> None:
        self.tx = tx
        self.write_seq = write_seq

    def get_episode(self, episode_id: str) -> EpisodeRow | None:
        rows = _run(self.tx, "episodes/by_ids", ids=[episode_id])
        return _episode_row(rows[0]["e"]) if rows else None

    def entities_by_keys(self, group_id: str, keys: Sequence[str]) -> list[EntityRow]:
        out: dict[str, EntityRow] = {}
        for chunk in _chunks(list(dict.fromkeys(keys))):
            for r in _run(self.tx, "entities/by_keys", group_id=group_id, keys=list(chunk)):
                row = _entity_row(r["e"])
                out[row.id] = row
        ordered = [out[i] for i in sorted(out)]
        return sorted(ordered, key=lambda e: e.created_at)

    def timelines(
        self,
        group_id: str,
        pairs: Sequence[tuple[str, str]],
        *,
        include_expired: bool = False,
    ) -> dict[tuple[str, str], Timeline]:
        result: dict[tuple[str, str], Timeline] = {pair: Timeline() for pair in pairs}
        unique = list(dict.fromkeys(pairs))
        if not unique:
            return result
        ids: list[str] = []
        for chunk in _chunks(unique):
            rows = _run(
                self.tx,
                "facts/timelines",
                group_id=group_id,
                include_expired=include_expired,
                pairs=[{"subject_id": s, "predicate": p} for s, p in chunk],
            )
            for r in rows:
                fact = _fact_row(r["f"])
                result[(r["subject_id"], r["predicate"])].facts.append(fact)
                ids.append(fact.id)
        if ids:
            owner = {f.id: pair for pair, tl in result.items() for f in tl.facts}
            links: dict[tuple[str, str, str], LinkRow] = {}
            for id_chunk in _chunks(ids):
                for r in _run(self.tx, "facts/links_touching", ids=list(id_chunk)):
                    link = _link(r)
                    links[(link.kind, link.src, link.dst)] = link
            for link in sorted(links.values(), key=_link_order):  # unique by (kind, src, dst)
                pair = owner.get(link.src) or owner.get(link.dst)
                if pair is not None:
                    result[pair].links.append(link)
        return result

    def facts_by_ids(self, fact_ids: Sequence[str]) -> list[FactRow]:
        out: list[FactRow] = []
        for chunk in _chunks(list(fact_ids)):
            out.extend(_fact_row(r["f"]) for r in _run(self.tx, "facts/by_ids", ids=list(chunk)))
        return out

    def fact_claims(
        self, fact_ids: Sequence[str]
    ) -> tuple[list[ProvenanceRow], list[ProvenanceRow]]:
        provenance: list[ProvenanceRow] = []
        endings: list[ProvenanceRow] = []
        for chunk in _chunks(list(fact_ids)):
            for r in _run(self.tx, "facts/claims", ids=list(chunk)):
                row = ProvenanceRow(
                    str(r["fact_id"]), str(r["episode_id"]), r["span"], r["claim"]
                )
                (provenance if r["kind"] == "FROM_EPISODE" else endings).append(row)
        return provenance, endings

    def episode_ended_fact_ids(self, episode_ids: Sequence[str]) -> list[str]:
        return [
            str(r["id"])
            for chunk in _chunks(list(episode_ids))
            for r in _run(self.tx, "episodes/ended_fact_ids", ids=list(chunk))
        ]

    def episode_fact_ids(self, episode_ids: Sequence[str]) -> dict[str, int]:
        out: dict[str, int] = {}
        for chunk in _chunks(list(episode_ids)):
            for r in _run(self.tx, "episodes/fact_support", ids=list(chunk)):
                out[str(r["id"])] = int(r["n"])
        return out

    def entity_fact_ids(self, entity_id: str) -> list[str]:
        return [str(r["id"]) for r in _run(self.tx, "facts/about_entity", entity_id=entity_id)]

    def group_episode_ids(self, group_id: str) -> list[str]:
        return [str(r["id"]) for r in _run(self.tx, "episodes/group_ids", group_id=group_id)]

    def group_fact_ids(self, group_id: str) -> list[str]:
        return [str(r["id"]) for r in _run(self.tx, "facts/group_ids", group_id=group_id)]

    def group_entity_ids(self, group_id: str) -> list[str]:
        return [str(r["id"]) for r in _run(self.tx, "entities/group_ids", group_id=group_id)]

    def episode_entity_ids(self, episode_ids: Sequence[str]) -> list[str]:
        out: list[str] = []
        for chunk in _chunks(list(episode_ids)):
            out.extend(
                str(r["id"])
                for r in _run(self.tx, "episodes/mentioned_entity_ids", ids=list(chunk))
            )
        return out

    def speaker_episode_ids(self, group_id: str, speaker_keys: Sequence[str]) -> list[str]:
        keys = set(speaker_keys)
        match: dict[str, bool] = {}  # a group has few speakers and many turns
        out: list[str] = []
        for r in _run(self.tx, "episodes/speaker_ids", group_id=group_id):
            who = r["speaker"]
            if isinstance(who, str):
                if who not in match:
                    match[who] = entity_key(who) in keys
                if match[who]:
                    out.append(str(r["id"]))
        return out

    def subject_episode_ids(self, group_id: str, entity_ids: Sequence[str]) -> list[str]:
        out: dict[str, None] = {}
        for chunk in _chunks(list(entity_ids)):
            rows = _run(self.tx, "facts/subject_episode_ids", group_id=group_id, ids=list(chunk))
            out.update((str(r["id"]), None) for r in rows)
        return list(out)
