"""The embedded default store: one SQLite file, WAL mode, FTS5, compact vectors (int8 at rest,
see ``_vectors``) with exact top-k."""

from __future__ import annotations

import json
import logging
import os
import re
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .._errors import SchemaError, StoreError
from .._filters import Condition, driving, equal_texts, finite_number, plain_text, widen
from .._ids import make_id
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
from ._export import (
    entity_export,
    episode_export,
    episode_from_export,
    fact_export,
    link_export,
    plan_from_export,
    provenance_export,
)
from ._sqlite_schema import MIGRATIONS
from ._vectors import VectorMatrix, from_blob, to_blob

__all__ = ["SQLiteStore"]

_log = logging.getLogger("graphmem")

_MAX_VARS = 900  # stay well below SQLite's bound-parameter limit
_POSTINGS = 3000  # matching rows one full-text query may rank (1 to 5 µs each)
_EXACT_ROWS = 50_000  # vector top-k is exact up to this many rows, sign-bit prefiltered above
_OVERSAMPLE = 64  # candidates per wanted row for the exact rescoring above _EXACT_ROWS
_MIN_CANDIDATES = 4096
_CHECKPOINT_WAIT_MS = 5000  # how long a forget waits for readers to let the WAL be truncated
_VECTOR_CACHE_ROWS = 262_144  # vectors held across groups (384 MiB at 384 dims) beside the one
# being searched, whatever its size
_WORD = re.compile(r"\w+", re.UNICODE)
# Function words: left out of full-text queries (they match everything and say nothing). Also
# the "s" and "t" that the tokenizer splits off "Caroline's" and "don't".
_STOP = frozenset(
    [
     "a", "about", "after", "again", "all", "also", "am", "an", "and", "any", "are", "as", "at",
     "be", "been", "before", "being", "both", "but", "by", "can", "could", "did", "do", "does",
     "doing", "during", "each", "few", "for", "from", "further", "had", "has", "have", "having",
     "he", "her", "here", "hers", "herself", "him", "himself", "his", "how", "i", "if", "in",
     "into", "is", "it", "its", "itself", "just", "me", "more", "most", "much", "my", "myself",
     "no", "nor", "of", "off", "on", "once", "only", "or", "other", "our", "ours", "out", "over",
     "own", "s", "same", "she", "should", "so", "some", "such", "t", "than", "that", "the", "their",
     "theirs", "them", "themselves", "then", "there", "these", "they", "this", "those", "through",
     "to", "too", "under", "until", "up", "very", "was", "we", "were", "what", "when", "where",
     "which", "while", "who", "whom", "why", "will", "with", "would", "you", "your", "yours",
    ]
)

# A fact is visible in a view when memory believed it at `known` and it held in the world at
# `at`. Its valid_to only counts if memory had learned it by `known` (ended_at).
_VIEW_SQL = (
    "f.recorded_at <= :known AND (f.expired_at IS NULL OR f.expired_at > :known) "
    "AND f.valid_from <= :at AND (f.valid_to IS NULL OR f.valid_to > :at "
    "OR (f.ended_at IS NOT NULL AND f.ended_at > :known))"
)

_FACT_SELECT = """
SELECT f.id, f.group_id, f.subject_id, f.predicate, f.object_id, f.value_json, f.statement,
       f.valid_from, f.valid_to, f.recorded_at, f.expired_at, f.ended_at, f.end_reason,
       f.confidence, f.decided_by, s.name AS subject_name, o.name AS object_name,
       (SELECT group_concat(fe.episode_id, ',') FROM fact_episodes fe
         WHERE fe.fact_id = f.id) AS episode_ids,
       (SELECT l.src || '|' || l.reason FROM fact_links l
         WHERE l.dst = f.id AND l.kind = 'SUPERSEDES'
         ORDER BY l.decided_at DESC LIMIT 1) AS superseded
FROM facts f JOIN entities s ON s.id = f.subject_id LEFT JOIN entities o ON o.id = f.object_id
"""


def _chunks(items: Sequence[Any], size: int = _MAX_VARS) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


_FTS_COLUMN = {"facts": "statement", "entities": "search_text", "episodes": "content"}


def _group_token(group_id: str) -> str:
    """The full-text token of a group (migration 4's ``fts_group``: 'g' + hex + '0')."""
    return "g" + group_id.encode("utf-8").hex() + "0"


def _marks(n: int) -> str:
    return ",".join("?" * n)


def _pack_signs(matrix: np.ndarray) -> np.ndarray:
    """Rows' sign bits packed as (dimensions / 64, rows) uint64: one array per word, so that the
    Hamming distance is a few vectorised XOR + popcount passes."""
    packed = np.packbits(matrix > 0, axis=1)
    return np.ascontiguousarray(packed.view(np.uint64).T)


def _hamming(bits: np.ndarray, query: np.ndarray) -> np.ndarray:
    distance: np.ndarray = np.bitwise_count(bits[0] ^ query[0]).astype(np.uint16)
    for word in range(1, bits.shape[0]):
        distance += np.bitwise_count(bits[word] ^ query[word])
    return distance


def fts_words(text: str) -> list[str]:
    """The text's words for an FTS5 OR-query (stop words dropped); each is quoted later."""
    words = [w for w in _WORD.findall(text.lower()) if w not in _STOP]
    if not words:
        words = _WORD.findall(text.lower())
    return list(dict.fromkeys(words))[:32]


# The recall filter in SQL (filter_candidates): the same view for a second alias, and a value
# test that is true for every value matches() would accept and may be true for a few more.
_VIEW_SQL_X = _VIEW_SQL.replace("f.", "x.")
_NUMBER_SQL = "json_type({j}) IN ('integer', 'real')"
_TEXT_SQL = "json_type({j}) = 'text'"
_CMP_SQL = {"$lt": "<", "$lte": "<=", "$gt": ">", "$gte": ">="}


def _bind(params: dict[str, Any], key: str, values: Sequence[Any]) -> str:
    """Parameters ``:key_0, :key_1, ...`` for values: values never go into the SQL text."""
    for i, value in enumerate(values):
        params[f"{key}_{i}"] = value
    return ", ".join(f":{key}_{i}" for i in range(len(values)))


def _maybe_sql(alias: str, cond: Condition, key: str, params: dict[str, Any]) -> str:
    """True when ``alias.value_json`` (not null) may match ``cond``: false only where matches()
    is. JSON that SQLite 3.40 rejects (NaN, Infinity) may match; so may a string with a
    backslash escape (json_extract stops at \\u0000), and a number within SLACK of a bound."""
    j = f"{alias}.value_json"
    value = f"json_extract({j}, '$')"
    number, text = _NUMBER_SQL.format(j=j), _TEXT_SQL.format(j=j)
    escaped = f"instr({j}, '\\') > 0"
    terms: list[str] = []
    if cond.op in ("$eq", "$in"):
        operands = cond.operand if cond.op == "$in" else (cond.operand,)
        bools = sorted({"true" if o else "false" for o in operands if isinstance(o, bool)})
        if bools:
            terms.append(f"json_type({j}) IN ({_bind(params, key + 'b', bools)})")
        strings = [o for o in operands if isinstance(o, str)]
        plain = [t for t in (plain_text(o) for o in strings) if t is not None]
        if len(plain) < len(strings):
            terms.append(text)  # a string SQLite cannot take: any string may match
        elif plain:
            terms.append(
                f"({text} AND ({value} IN ({_bind(params, key + 's', plain)}) OR {escaped}))"
            )
        numbers = [o for o in operands if not isinstance(o, bool | str)]
        finite = [n for n in (finite_number(o) for o in numbers) if n is not None]
        if len(finite) < len(numbers):
            terms.append(number)  # NaN, an infinity, a huge int: any number may match
        elif finite:
            spans = []
            for i, n in enumerate(finite):
                lo, hi = widen(n)
                params[f"{key}lo{i}"], params[f"{key}hi{i}"] = lo, hi
                spans.append(f"{value} BETWEEN :{key}lo{i} AND :{key}hi{i}")
            terms.append(f"({number} AND ({' OR '.join(spans)}))")
    else:
        cmp = _CMP_SQL[cond.op]
        if isinstance(cond.operand, str):
            plain_operand = plain_text(cond.operand)
            if plain_operand is None:
                terms.append(text)
            else:
                params[key] = plain_operand
                terms.append(f"({text} AND ({value} {cmp} :{key} OR {escaped}))")
        else:
            bound = finite_number(cond.operand)
            if bound is None:
                terms.append(number)
            else:
                lo, hi = widen(bound)
                params[key] = hi if cmp[0] == "<" else lo
                test = f"{number} AND {value} {cmp[0]}= :{key}"
                if cmp in ("<", ">"):  # a value stored as the bound itself fails for sure
                    equal = _bind(params, key + "eq", equal_texts(cond.operand))
                    test += f" AND {j} NOT IN ({equal})"
                terms.append(f"({test})")
    return f"(CASE WHEN json_valid({j}) THEN {' OR '.join(terms) or '0'} ELSE 1 END)"


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
        self.path = str(path)
        self.url = url or f"sqlite:///{self.path}"
        self._asked = (read_only or immutable, immutable)
        self.read_only, self.immutable = self._asked
        # What a write would need, for the read-only error.
        self._writes_need = "the store opened without ?mode=ro / ?immutable=1"
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.RLock()
        self._vectors: dict[tuple[str, str], VectorMatrix] = {}
        self._data_version = -1
        self._write_count = 0
        self._counts: dict[str, tuple[tuple[int, tuple[str, int]], int]] = {}

    # ------------------------------------------------------------------ lifecycle
    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            self.connect()
        assert self._conn is not None
        return self._conn

    def connect(self) -> None:
        if self._conn is not None:
            return
        target: str = self.path
        if self.path != ":memory:":
            file = Path(self.path).expanduser().resolve()
            parent = file.parent
            if not parent.exists():
                raise StoreError(f"cannot create the store {self.path}: {parent} does not exist")
            target = self._open_target(file)
        try:
            conn = sqlite3.connect(
                target,
                timeout=60.0,
                isolation_level=None,
                check_same_thread=False,
                uri=target.startswith("file:"),
            )
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA busy_timeout = 60000")
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute("PRAGMA cache_size = -65536")  # 64 MiB page cache
            conn.execute("PRAGMA temp_store = MEMORY")
            conn.execute("PRAGMA foreign_keys = OFF")
            # Deleted content is overwritten with zeros, not left in free pages (forget).
            conn.execute("PRAGMA secure_delete = ON")
            tables = {
                row[0]
                for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            }
        except sqlite3.DatabaseError as exc:
            if getattr(exc, "sqlite_errorname", "") in ("SQLITE_NOTADB", "SQLITE_CORRUPT"):
                raise SchemaError(
                    f"{self.path} is not a graphmem store (SQLite says: {exc}); "
                    "point GraphMemory at a new file or at an existing graphmem database"
                ) from exc
            access = "read" if self.read_only else "read and written"
            raise StoreError(
                f"cannot open the store {self.path} (SQLite says: {exc}); check that the file "
                f"and its directory can be {access} by this process"
            ) from exc
        if mode is None:
            conn.close()
            raise SchemaError(f"{self.path}: could not switch the database to WAL mode")
        if tables and "graphmem_migrations" not in tables:
            conn.close()
            raise SchemaError(
                f"{self.path} is a SQLite database but not a graphmem store "
                f"(it has tables {sorted(tables)[:5]}); refusing to modify it"
            )
        self._conn = conn
        self._create_vocab_tables()

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
            self._vectors.clear()

    def _open_target(self, file: Path) -> str:
        """What ``sqlite3.connect`` opens: the path, or a ``file:`` URI with ``mode=ro`` (and
        ``immutable=1``) when the store is read-only, asked for or found so."""
        wal, shm = Path(f"{file}-wal"), Path(f"{file}-shm")
        self.read_only, self.immutable = self._asked  # found again on each connect
        self._writes_need = "the store opened without ?mode=ro / ?immutable=1"
        if not self.read_only and file.exists():
            if not os.access(file, os.W_OK):
                self.read_only = True
                self._writes_need = f"write access to {file}"
            elif not os.access(file.parent, os.W_OK) and not all(
                p.exists() and os.access(p, os.W_OK) for p in (wal, shm)
            ):
                # WAL writes need the -wal and -shm files, made in the directory.
                self.read_only = True
                self._writes_need = (
                    f"write access to its directory {file.parent} (for the -wal and -shm files)"
                )
        if not self.read_only:
            if not file.exists() and not os.access(file.parent, os.W_OK):
                raise StoreError(
                    f"cannot create the store {self.path}: this process cannot write "
                    f"{file.parent}"
                )
            return self.path
        if not file.exists():
            raise StoreError(f"cannot open the store {self.path} read-only: it does not exist")
        if (
            not self.immutable
            and not (os.access(file, os.W_OK) and os.access(file.parent, os.W_OK))
            and not shm.exists()
            and (not wal.exists() or wal.stat().st_size == 0)
        ):
            # No connection has the store open (each keeps a -shm) and the WAL holds nothing:
            # read the file as it is. A mode=ro reader would make the -wal and -shm files
            # itself, or fail to: in a read-only directory it cannot, and in a writable one
            # they would be this process's, read-only to the store's owner, whose next write
            # then fails ("attempt to write a readonly database").
            self.immutable = True
        return file.as_uri() + ("?immutable=1" if self.immutable else "?mode=ro")

    def _require_writable(self) -> None:
        """``StoreError`` before a write on a read-only store (SQLite's own message would be
        'attempt to write a readonly database')."""
        if self._conn is None:
            self.connect()
        if self.read_only:
            raise StoreError(
                f"{self.path} is read-only: reads work, writes need {self._writes_need}"
            )

    def migrate(self) -> list[str]:
        applied: list[str] = []
        with self._lock:
            conn = self.conn
            if self.read_only:
                self._check_migrated_read_only(conn)
                return applied
            conn.execute(
                "CREATE TABLE IF NOT EXISTS graphmem_migrations ("
                "version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)"
            )
            done = {row[0] for row in conn.execute("SELECT version FROM graphmem_migrations")}
            newest = max(version for version, _, _ in MIGRATIONS)
            if done and max(done) > newest:
                raise SchemaError(
                    f"{self.path} was written by a newer graphmem (schema v{max(done)}, "
                    f"this one knows v{newest}); upgrade graphmem"
                )
            if any(version not in done for version, _, _ in MIGRATIONS):
                # The vocabulary views read the full-text tables a migration may rebuild.
                for table in ("facts", "entities", "episodes"):
                    conn.execute(f"DROP TABLE IF EXISTS temp.{table}_vocab")
            for version, name, sql in MIGRATIONS:
                if version in done:
                    continue
                try:
                    conn.execute("BEGIN IMMEDIATE")
                    for statement in _split_sql(sql):
                        conn.execute(statement)
                    conn.execute(
                        "INSERT INTO graphmem_migrations VALUES (?, ?, ?)",
                        (version, name, to_ms(utcnow())),
                    )
                    conn.execute("COMMIT")
                except sqlite3.Error as exc:
                    conn.execute("ROLLBACK")
                    raise SchemaError(f"migration {version} ({name}) failed: {exc}") from exc
                applied.append(f"{version}: {name}")
            self._create_vocab_tables()
        return applied

    def _check_migrated_read_only(self, conn: sqlite3.Connection) -> None:
        """A read-only store cannot be migrated: ``SchemaError`` unless it is up to date."""
        try:
            done = {row[0] for row in conn.execute("SELECT version FROM graphmem_migrations")}
        except sqlite3.OperationalError:
            done = set()
        newest = max(version for version, _, _ in MIGRATIONS)
        if done and max(done) > newest:
            raise SchemaError(
                f"{self.path} was written by a newer graphmem (schema v{max(done)}, "
                f"this one knows v{newest}); upgrade graphmem"
            )
        pending = [version for version, _, _ in MIGRATIONS if version not in done]
        if pending:
            raise SchemaError(
                f"{self.path} needs migrations {pending} but is read-only: migrating it needs "
                f"{self._writes_need} (graphmem db migrate)"
            )

    def _create_vocab_tables(self) -> None:
        tables = {r[0] for r in self.conn.execute("SELECT name FROM sqlite_master")}
        for table in ("facts", "entities", "episodes"):
            if f"{table}_fts" in tables:
                self.conn.execute(
                    f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{table}_vocab "
                    f"USING fts5vocab(main, '{table}_fts', 'row')"
                )

    def migration_status(self) -> list[MigrationInfo]:
        with self._lock:
            try:
                rows = dict(
                    self.conn.execute("SELECT version, applied_at FROM graphmem_migrations")
                )
            except sqlite3.OperationalError:
                rows = {}
        return [MigrationInfo(v, name, rows.get(v)) for v, name, _ in MIGRATIONS]

    def get_meta(self, key: str) -> str | None:
        row = self._one("SELECT value FROM graphmem_meta WHERE key = ?", (key,))
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        with self._lock:
            self._require_writable()
            self._execute(
                "INSERT INTO graphmem_meta VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

    # ------------------------------------------------------------------ helpers
    def _execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> sqlite3.Cursor:
        try:
            return self.conn.execute(sql, params)
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"SQLite error on {self.path}: {exc}") from exc

    def _one(self, sql: str, params: Sequence[Any] = ()) -> Any:
        with self._lock:
            return self._execute(sql, params).fetchone()

    def _all(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[Any]:
        with self._lock:
            return self._execute(sql, params).fetchall()

    # ------------------------------------------------------------------ episodes
    def insert_episode(self, episode: EpisodeRow) -> tuple[EpisodeRow, bool]:
        return self.insert_episodes([episode])[0]

    def insert_episodes(self, episodes: Sequence[EpisodeRow]) -> list[tuple[EpisodeRow, bool]]:
        out: list[tuple[EpisodeRow, bool]] = []
        with self._lock:
            self._require_writable()
            conn = self.conn
            try:
                conn.execute("BEGIN IMMEDIATE")
                for episode in episodes:
                    out.append(self._insert_episode(conn, episode))
                conn.execute("COMMIT")
                self._write_count += 1
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
        cur = conn.execute(
            "INSERT OR IGNORE INTO episodes (id, group_id, source, kind, content, "
            "reference_time, ingested_at, content_hash, status, extractor, error, metadata, "
            "embedding) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                episode.id,
                episode.group_id,
                episode.source,
                episode.kind,
                episode.content,
                episode.reference_time,
                episode.ingested_at,
                episode.content_hash,
                episode.status,
                episode.extractor,
                episode.error,
                json.dumps(episode.metadata, ensure_ascii=False, default=str),
                to_blob(episode.embedding),
            ),
        )
        created = cur.rowcount == 1
        if created:
            return episode, True
        stored = _Reader(conn).get_episode(episode.id)
        assert stored is not None
        return stored, False

    def set_episode_status(
        self, episode_id: str, status: str, extractor: str | None, error: str | None
    ) -> None:
        with self._lock:
            self._require_writable()
            self._execute(
                "UPDATE episodes SET status = ?, extractor = ?, error = ? WHERE id = ?",
                (status, extractor, error, episode_id),
            )

    def get_episode(self, episode_id: str) -> EpisodeRow | None:
        row = self._one("SELECT * FROM episodes WHERE id = ?", (episode_id,))
        return None if row is None else _episode_row(row)

    def episodes(self, episode_ids: Sequence[str]) -> list[EpisodeRecord]:
        found: dict[str, EpisodeRow] = {}
        for chunk in _chunks(list(dict.fromkeys(episode_ids))):
            for row in self._all(
                f"SELECT * FROM episodes WHERE id IN ({_marks(len(chunk))})", chunk
            ):
                ep = _episode_row(row)
                found[ep.id] = ep
        return [episode_record(found[i]) for i in episode_ids if i in found]

    def episodes_by_status(self, group_id: str | None, statuses: Sequence[str]) -> list[EpisodeRow]:
        sql = f"SELECT * FROM episodes WHERE status IN ({_marks(len(statuses))})"
        params: list[Any] = list(statuses)
        if group_id is not None:
            sql += " AND group_id = ?"
            params.append(group_id)
        sql += " ORDER BY reference_time, rowid"
        return [_episode_row(r) for r in self._all(sql, params)]

    def episode_ids_by_kind(self, group_id: str, kind: str) -> list[str]:
        rows = self._all(
            "SELECT id FROM episodes INDEXED BY episodes_group_kind "
            "WHERE group_id = ? AND kind = ? ORDER BY rowid",
            (group_id, kind),
        )
        return [r[0] for r in rows]

    def change_token(self) -> object | None:
        # Another connection's commit moves data_version; this one's writes move _write_count.
        with self._lock:
            version = self.conn.execute("PRAGMA data_version").fetchone()[0]
            return (version, self._write_count)

    def recent_episodes(
        self, group_id: str, source: str | None, before: int, limit: int
    ) -> list[EpisodeRow]:
        rows = self._all(
            "SELECT * FROM episodes WHERE group_id = ? AND source IS ? AND reference_time <= ? "
            "ORDER BY reference_time DESC, rowid DESC LIMIT ?",
            (group_id, source, before, limit),
        )
        return [_episode_row(r) for r in reversed(rows)]

    # ------------------------------------------------------------------ the write unit
    def write(self, work: Callable[[StoreReader], WritePlan]) -> WritePlan:
        return self.write_many([work])[0]

    def write_many(self, works: Sequence[Callable[[StoreReader], WritePlan]]) -> list[WritePlan]:
        if not works:
            return []
        with self._lock:
            self._require_writable()
            conn = self.conn
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.DatabaseError as exc:
                raise StoreError(f"could not start a write on {self.path}: {exc}") from exc
            plans: list[WritePlan] = []
            try:
                reader = _Reader(conn, _next_write_seq(conn))
                for work in works:
                    plan = work(reader)
                    self._apply(conn, plan)
                    plans.append(plan)
                purge = _purged_tables(plans)
                deleted = bool(purge)
                if deleted:
                    # Deleted rows invalidate every process's cached vector matrix.
                    conn.execute(
                        "INSERT INTO graphmem_meta VALUES ('vector_epoch', ?) "
                        "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                        (make_id("epoch", str(utcnow()), str(os.getpid())),),
                    )
                    _purge_fts(conn, purge)
                conn.execute("COMMIT")
                self._write_count += 1
            except sqlite3.DatabaseError as exc:
                conn.execute("ROLLBACK")
                raise StoreError(f"write failed on {self.path}: {exc}") from exc
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            if deleted:
                self._vectors.clear()
                self._truncate_wal()
            return plans

    def _truncate_wal(self) -> None:
        """Copy the WAL into the database and truncate it to 0 bytes after a deletion: the WAL
        keeps every page image written since the last checkpoint, forgotten text included. A
        reader of another connection that holds an older snapshot makes this wait (busy
        timeout) and, past it, leave the WAL to the next checkpoint."""
        if self.path == ":memory:":
            return
        conn = self.conn
        try:
            conn.execute(f"PRAGMA busy_timeout = {_CHECKPOINT_WAIT_MS}")
            busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
        except sqlite3.DatabaseError as exc:
            busy, why = 1, str(exc)
        else:
            why = "another connection is reading an older snapshot"
        finally:
            conn.execute("PRAGMA busy_timeout = 60000")
        if busy:
            # The next checkpoint (at the latest, the last connection's close) copies it over.
            _log.warning(
                "forget: %s still holds the deleted rows' old pages in its WAL (%s)",
                self.path,
                why,
            )

    def _apply(self, conn: sqlite3.Connection, plan: WritePlan) -> None:
        # Deletions first (forget), then inserts and updates.
        for chunk in _chunks(plan.delete_fact_ids):
            marks = _marks(len(chunk))
            conn.execute(f"DELETE FROM fact_links WHERE src IN ({marks})", chunk)
            conn.execute(f"DELETE FROM fact_links WHERE dst IN ({marks})", chunk)
            conn.execute(f"DELETE FROM fact_episodes WHERE fact_id IN ({marks})", chunk)
            conn.execute(f"DELETE FROM fact_endings WHERE fact_id IN ({marks})", chunk)
            conn.execute(f"DELETE FROM facts WHERE id IN ({marks})", chunk)
        for chunk in _chunks(plan.delete_episode_ids):
            marks = _marks(len(chunk))
            conn.execute(f"DELETE FROM fact_episodes WHERE episode_id IN ({marks})", chunk)
            conn.execute(f"DELETE FROM fact_endings WHERE episode_id IN ({marks})", chunk)
            conn.execute(f"DELETE FROM mentions WHERE episode_id IN ({marks})", chunk)
            conn.execute(f"DELETE FROM episodes WHERE id IN ({marks})", chunk)
        for chunk in _chunks(plan.delete_entity_ids):
            _delete_entities(conn, chunk)
        if plan.entities_new:
            conn.executemany(
                "INSERT INTO entities VALUES (?,?,?,?,?,?,?,?,?,?,?) "
                "ON CONFLICT(group_id, key, type) DO NOTHING",
                [
                    (
                        e.id,
                        e.group_id,
                        e.name,
                        e.key,
                        e.type,
                        json.dumps(e.aliases, ensure_ascii=False),
                        _search_text(e.name, e.aliases),
                        e.summary,
                        to_blob(e.embedding),
                        e.created_at,
                        json.dumps(e.attributes, ensure_ascii=False, default=str),
                    )
                    for e in plan.entities_new
                ],
            )
            conn.executemany(
                "INSERT OR IGNORE INTO entity_aliases VALUES (?,?,?)",
                [
                    (e.group_id, alias_key, e.id)
                    for e in plan.entities_new
                    for alias_key in _alias_keys(e.aliases)
                ],
            )
        for entity_id, aliases in plan.entity_aliases.items():
            row = conn.execute(
                "SELECT group_id, name FROM entities WHERE id = ?", (entity_id,)
            ).fetchone()
            if row is None:
                continue
            conn.execute(
                "UPDATE entities SET aliases = ?, search_text = ? WHERE id = ?",
                (json.dumps(aliases, ensure_ascii=False), _search_text(row[1], aliases), entity_id),
            )
            conn.executemany(
                "INSERT OR IGNORE INTO entity_aliases VALUES (?,?,?)",
                [(row[0], k, entity_id) for k in _alias_keys(aliases)],
            )
        if plan.facts_new:
            conn.executemany(
                "INSERT INTO facts VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                [
                    (
                        f.id,
                        f.group_id,
                        f.subject_id,
                        f.predicate,
                        f.object_id,
                        f.value_json,
                        f.statement,
                        to_blob(f.embedding),
                        f.valid_from,
                        f.valid_to,
                        f.recorded_at,
                        f.expired_at,
                        f.ended_at,
                        f.end_reason,
                        f.confidence,
                        f.decided_by,
                    )
                    for f in plan.facts_new
                ],
            )
        if plan.facts_update:
            conn.executemany(
                "UPDATE facts SET valid_from = ?, valid_to = ?, expired_at = ?, ended_at = ?, "
                "end_reason = ?, confidence = ? WHERE id = ?",
                [
                    (
                        u.valid_from,
                        u.valid_to,
                        u.expired_at,
                        u.ended_at,
                        u.end_reason,
                        u.confidence,
                        u.id,
                    )
                    for u in plan.facts_update
                ],
            )
        for chunk in _chunks(plan.claims_reset):
            marks = _marks(len(chunk))
            conn.execute(f"DELETE FROM fact_episodes WHERE fact_id IN ({marks})", chunk)
            conn.execute(f"DELETE FROM fact_endings WHERE fact_id IN ({marks})", chunk)
        if plan.provenance:
            conn.executemany(
                "INSERT OR IGNORE INTO fact_episodes (fact_id, episode_id, span, claim) "
                "VALUES (?,?,?,?)",
                [(r.fact_id, r.episode_id, r.span, r.claim) for r in plan.provenance],
            )
        if plan.endings:
            conn.executemany(
                "INSERT OR IGNORE INTO fact_endings (fact_id, episode_id, span, claim) "
                "VALUES (?,?,?,?)",
                [(r.fact_id, r.episode_id, r.span, r.claim) for r in plan.endings],
            )
        if plan.links_remove:
            conn.executemany(
                "DELETE FROM fact_links WHERE kind = ? AND src = ? AND dst = ?", plan.links_remove
            )
        if plan.links_add:
            conn.executemany(
                "INSERT INTO fact_links VALUES (?,?,?,?,?,?) ON CONFLICT(kind, src, dst) DO UPDATE "
                "SET reason = excluded.reason, decided_by = excluded.decided_by, "
                "decided_at = excluded.decided_at",
                [
                    (lk.kind, lk.src, lk.dst, lk.reason, lk.decided_by, lk.decided_at)
                    for lk in plan.links_add
                ],
            )
        if plan.mentions:
            conn.executemany("INSERT OR IGNORE INTO mentions VALUES (?,?)", plan.mentions)
        if plan.prune_entity_ids:
            orphans: list[str] = []
            for entity_id in dict.fromkeys(plan.prune_entity_ids):
                used = conn.execute(
                    "SELECT 1 FROM facts WHERE subject_id = ?1 OR object_id = ?1 "
                    "UNION ALL SELECT 1 FROM mentions WHERE entity_id = ?1 LIMIT 1",
                    (entity_id,),
                ).fetchone()
                if used is None:
                    orphans.append(entity_id)
            for chunk in _chunks(orphans):
                _delete_entities(conn, chunk)
            if orphans and plan.audit is not None:
                plan.audit["entities_removed"] = plan.audit.get("entities_removed", 0) + len(
                    orphans
                )
        # One UPDATE: an episode row is large (content, metadata, embedding), and each UPDATE
        # rewrites it whole, overflow pages included.
        if plan.episode_id is not None and plan.episode_status is not None:
            status, extractor, error = plan.episode_status
            conn.execute(
                "UPDATE episodes SET status = ?, extractor = ?, error = ?, "
                "embedding = coalesce(?, embedding) WHERE id = ?",
                (status, extractor, error, to_blob(plan.episode_embedding), plan.episode_id),
            )
        elif plan.episode_id is not None and plan.episode_embedding is not None:
            conn.execute(
                "UPDATE episodes SET embedding = ? WHERE id = ?",
                (to_blob(plan.episode_embedding), plan.episode_id),
            )
        if plan.audit is not None:
            audit = dict(plan.audit)
            audit_id = make_id("audit", json.dumps(audit, sort_keys=True, default=str))
            audit["id"] = audit_id
            plan.audit["id"] = audit_id
            conn.execute(
                "INSERT OR REPLACE INTO audit_log VALUES (?,?,?,?,?)",
                (
                    audit_id,
                    int(audit.get("at", to_ms(utcnow()))),
                    str(audit.get("group_id", "")),
                    str(audit.get("action", "")),
                    json.dumps(audit, ensure_ascii=False, default=str),
                ),
            )

    # ------------------------------------------------------------------ search
    def _sync_vectors(self) -> None:
        version = self.conn.execute("PRAGMA data_version").fetchone()[0]
        if version != self._data_version:
            # Another connection committed: deletions may have happened there.
            epoch = self.get_meta("vector_epoch") or ""
            for key in list(self._vectors):
                if self._vectors[key].epoch != epoch:
                    del self._vectors[key]
            self._data_version = version

    def _matrix(self, table: str, group_id: str, dim: int) -> VectorMatrix:
        key = (table, group_id)
        cache = self._vectors.get(key)
        if cache is None or cache.dim != dim:
            cache = VectorMatrix(dim=dim, epoch=self.get_meta("vector_epoch") or "")
            self._vectors[key] = cache
        seen = (self._data_version, self._write_count)
        if cache.seen == seen:
            return cache  # nothing committed since the last look
        # The group's new rows only, through its (group_id) index in rowid order: other
        # groups' rows are never read. Read in batches into a buffer sized first, so a first
        # load of 1M vectors does not hold every fetched row at once.
        start = cache.high_rowid
        (count,) = self._execute(
            f"SELECT count(*) FROM {table} INDEXED BY {table}_group "
            "WHERE group_id = ? AND rowid > ?",
            (group_id, start),
        ).fetchone()
        cache.reserve(int(count))
        cursor = self._execute(
            f"SELECT rowid, id, embedding FROM {table} INDEXED BY {table}_group "
            "WHERE group_id = ? AND rowid > ? ORDER BY rowid",
            (group_id, start),
        )
        while batch := cursor.fetchmany(20_000):
            # Blobs of any format (``_vectors``); another dimension's are skipped there.
            cache.append([(r[0], r[1], r[2]) for r in batch if r[2] is not None])
            cache.high_rowid = max(cache.high_rowid, batch[-1][0])
        cache.seen = seen
        self._evict_vectors(key)
        return cache

    def _evict_vectors(self, keep: tuple[str, str]) -> None:
        """Hold room for at most ``_VECTOR_CACHE_ROWS`` vectors: the least recently searched
        groups' matrices go first (never the one being searched), so memory follows the group
        being searched and a few recent ones, not the store."""
        self._vectors[keep] = self._vectors.pop(keep)  # most recent last
        held = sum(m.capacity for m in self._vectors.values())
        for key in list(self._vectors):
            if held <= _VECTOR_CACHE_ROWS or key == keep:
                break
            held -= self._vectors.pop(key).capacity
            self.__dict__.get("_bit_cache", {}).pop(key, None)

    def _vector_search(
        self, table: str, group_id: str, vector: Vector, n: int
    ) -> list[tuple[str, float]]:
        """Top ``n`` rows by cosine. Exact up to ``_EXACT_ROWS`` rows; above, the rows' sign bits
        (48 bytes a row at 384 dimensions, 32x less memory to read) pick ``_OVERSAMPLE`` x n
        candidates by Hamming distance, which are then scored exactly.

        The products use numpy's own single-threaded loop, not BLAS: on a busy machine a
        multi-threaded BLAS call waits for a second core (measured p95 16 ms for 10k rows).
        """
        with self._lock:
            self._sync_vectors()
            cache = self._matrix(table, group_id, vector.shape[0])
            ids, matrix = cache.ids, cache.matrix()
            bits = self._sign_bits((table, group_id), cache, matrix)
        # The products run outside the lock (numpy releases the GIL): full-text queries of the
        # same recall proceed on the connection meanwhile.
        rows = min(len(ids), matrix.shape[0])
        if rows == 0 or n <= 0:
            return []
        query = np.array(vector, dtype=np.float32)  # an own, aligned copy
        if bits is None:
            scores = np.einsum("ij,j->i", matrix[:rows], query)
            candidates = None
        else:
            distance = _hamming(bits[:, :rows], _pack_signs(query[None, :])[:, 0])
            want = min(rows, max(_OVERSAMPLE * n, _MIN_CANDIDATES))
            counts = np.cumsum(np.bincount(distance, minlength=distance.max(initial=0) + 1))
            cut = int(np.searchsorted(counts, want))
            candidates = np.flatnonzero(distance <= cut)
            scores = np.einsum("ij,j->i", matrix[candidates], query)
        k = min(n, scores.shape[0])
        best = np.argpartition(-scores, k - 1)[:k] if k < scores.shape[0] else np.arange(k)
        best = best[np.argsort(-scores[best], kind="stable")]
        rows_of = best if candidates is None else candidates[best]
        return [(ids[int(r)], float(scores[b])) for r, b in zip(rows_of, best, strict=True)]

    def _sign_bits(
        self, key: tuple[str, str], cache: VectorMatrix, matrix: Vector
    ) -> np.ndarray | None:
        """Packed sign bits of a large matrix, (words, rows) uint64, extended as rows append."""
        if matrix.shape[0] <= _EXACT_ROWS or matrix.shape[1] % 64:
            return None
        store: dict[tuple[str, str], tuple[int, int, np.ndarray]] = self.__dict__.setdefault(
            "_bit_cache", {}
        )
        held = store.get(key)
        if held is not None and held[0] == id(cache) and held[1] == matrix.shape[0]:
            return held[2]
        start = held[1] if held is not None and held[0] == id(cache) else 0
        fresh = _pack_signs(matrix[start:])
        bits = fresh if start == 0 or held is None else np.hstack([held[2], fresh])
        store[key] = (id(cache), matrix.shape[0], np.ascontiguousarray(bits))
        return store[key][2]

    def vector_facts(self, group_id: str, vector: Vector, n: int) -> list[tuple[str, float]]:
        return self._vector_search("facts", group_id, vector, n)

    def vector_entities(self, group_id: str, vector: Vector, n: int) -> list[tuple[str, float]]:
        return self._vector_search("entities", group_id, vector, n)

    def vector_episodes(self, group_id: str, vector: Vector, n: int) -> list[tuple[str, float]]:
        return self._vector_search("episodes", group_id, vector, n)

    def _term_plan(self, table: str, group_id: str, words: list[str]) -> tuple[list[str], int]:
        """(words to query, rowid floor) for a full-text query inside one group.

        Ranking costs about a microsecond per matching row, so a query costs the sum of its
        words' postings in the group; a very common word costs most and, with its low IDF,
        weighs least. A group of at most ``_POSTINGS`` rows keeps every word. In a larger one a
        word's postings are estimated from its store-wide document frequency scaled by the
        group's share of the rows, and words are kept rarest first while they fit
        ``_POSTINGS``; the rarest is always kept, and a floor above 0 limits it to the group's
        newest rows, about ``_POSTINGS`` matches. Porter stems are found as the longest
        vocabulary entry that is a prefix of the word."""
        rows = self._group_rows(table, group_id)
        if rows <= _POSTINGS or not words:
            return words, 0
        total = self._row_count(table)
        share = rows / max(total, rows, 1)
        # Document frequencies, remembered until the table grows (or another connection writes).
        cache: dict[tuple[str, str], tuple[int, int]] = self.__dict__.setdefault(
            "_vocab_cache", {}
        )
        if len(cache) > 50_000:
            cache.clear()
        frequency: dict[str, float] = {}
        for word in words:
            held = cache.get((table, word))
            if held is None or held[0] != total:
                prefixes = [word[:n] for n in range(len(word), 2, -1)] or [word]
                found = self._execute(
                    f"SELECT term, doc FROM temp.{table}_vocab "
                    f"WHERE term IN ({_marks(len(prefixes))})",
                    prefixes,
                ).fetchall()
                best = max(found, key=lambda r: len(r[0]), default=None)
                held = (total, int(best[1]) if best is not None else 0)
                cache[(table, word)] = held
            frequency[word] = held[1] * share
        # A word not in the vocabulary matches nothing and costs nothing: it must not take the
        # place of the rarest word that does match.
        ordered = sorted((w for w in words if frequency[w] > 0), key=lambda w: frequency[w])
        if not ordered:
            return words, 0
        keep: set[str] = set()
        spent = 0.0
        for word in ordered:
            if keep and spent + frequency[word] > _POSTINGS:
                break
            keep.add(word)
            spent += frequency[word]
        floor = 0
        if spent > _POSTINGS:  # only the rarest word, and it is common: the newest rows only
            newest = int(rows * _POSTINGS / spent)
            row = self._execute(
                f"SELECT rowid FROM {table} INDEXED BY {table}_group WHERE group_id = ? "
                "ORDER BY rowid DESC LIMIT 1 OFFSET ?",
                (group_id, newest),
            ).fetchone()
            floor = int(row[0]) if row is not None else 0
        return [w for w in words if w in keep], floor

    def _row_count(self, table: str) -> int:
        version = self.conn.execute("PRAGMA data_version").fetchone()[0]
        key = (table, self._write_count)
        cached = self._counts.get(table)
        if cached is None or cached[0] != (version, key):
            count = int(self._execute(f"SELECT max(rowid) FROM {table}").fetchone()[0] or 0)
            self._counts[table] = ((version, key), count)
            return count
        return cached[1]

    def _group_rows(self, table: str, group_id: str) -> int:
        """The group's row count (its index only), remembered until the next write."""
        version = self.conn.execute("PRAGMA data_version").fetchone()[0]
        seen = (version, self._write_count)
        cache: dict[tuple[str, str], tuple[tuple[int, int], int]] = self.__dict__.setdefault(
            "_group_counts", {}
        )
        held = cache.get((table, group_id))
        if held is not None and held[0] == seen:
            return held[1]
        if len(cache) > 10_000:
            cache.clear()
        (count,) = self._execute(
            f"SELECT count(*) FROM {table} INDEXED BY {table}_group WHERE group_id = ?",
            (group_id,),
        ).fetchone()
        cache[(table, group_id)] = (seen, int(count))
        return int(count)

    def _text(self, table: str, group_id: str, query: str, n: int) -> list[tuple[str, float]]:
        """BM25 top ``n`` of the group's rows. The group's token is ANDed into the match, so
        the index returns only the group's rows and ranks only those (the token's own column
        weighs 0)."""
        words = fts_words(query)
        if not words:
            return []
        column = _FTS_COLUMN[table]
        token = _group_token(group_id)
        with self._lock:
            words, floor = self._term_plan(table, group_id, words)
            terms = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
            match = f'fts_group : "{token}" AND {column} : ({terms})'
            rows = self._execute(
                f"SELECT t.id, -bm25({table}_fts, 1.0, 0.0) FROM {table}_fts "
                f"JOIN {table} t ON t.rowid = {table}_fts.rowid "
                f"WHERE {table}_fts MATCH ? AND {table}_fts.rowid > ? AND t.group_id = ? "
                f"ORDER BY bm25({table}_fts, 1.0, 0.0) LIMIT ?",
                (match, floor, group_id, n),
            ).fetchall()
        return [(r[0], float(r[1])) for r in rows]

    def text_facts(self, group_id: str, query: str, n: int) -> list[tuple[str, float]]:
        return self._text("facts", group_id, query, n)

    def text_entities(self, group_id: str, query: str, n: int) -> list[tuple[str, float]]:
        return self._text("entities", group_id, query, n)

    def text_episodes(self, group_id: str, query: str, n: int) -> list[tuple[str, float]]:
        return self._text("episodes", group_id, query, n)

    def speakers(self, group_id: str) -> dict[str, str]:
        """The speakers of the group's episodes (``metadata.speaker`` or ``.name``) by name key.

        Kept in memory per group and brought up to date by a scan of the group's new episodes
        only (its (group_id) index, in rowid order), like the vector matrices; a deletion
        elsewhere (new vector epoch) rebuilds it.
        """
        from .._ids import entity_key

        with self._lock:
            version = self.conn.execute("PRAGMA data_version").fetchone()[0]
            seen = (version, self._write_count)
            epoch = self.get_meta("vector_epoch") or ""
            groups: dict[str, dict[str, Any]] = self.__dict__.setdefault("_speaker_cache", {})
            cache = groups.get(group_id)
            if cache is None or cache["epoch"] != epoch:
                cache = {"epoch": epoch, "high": 0, "names": {}, "seen": None}
                if len(groups) > 10_000:
                    groups.clear()
                groups[group_id] = cache
            if cache["seen"] != seen:
                rows = self._execute(
                    "SELECT rowid, coalesce(json_extract(metadata, '$.speaker'), "
                    "json_extract(metadata, '$.name')) FROM episodes INDEXED BY episodes_group "
                    "WHERE group_id = ? AND rowid > ? ORDER BY rowid",
                    (group_id, cache["high"]),
                ).fetchall()
                for _rowid, name in rows:
                    if isinstance(name, str) and name.strip():
                        cache["names"][entity_key(name)] = name.strip()
                if rows:
                    cache["high"] = rows[-1][0]
                cache["seen"] = seen
            return dict(cache["names"])

    def episode_context(
        self, episode_ids: Sequence[str], window: int = 1
    ) -> tuple[dict[str, tuple[str | None, int]], dict[str, list[tuple[str, int]]]]:
        """Each episode's speaker and reference time, and its neighbours: the ``window`` episodes
        before and after it in arrival order within the same group and source (a conversation's
        adjacent turns).

        Returns ((speaker, reference_time ms) by episode id, for the episodes and their
        neighbours; (neighbour id, distance) by episode id). Index lookups only: cheap at any
        store size.
        """
        wanted = list(dict.fromkeys(episode_ids))
        speaker_sql = (
            "coalesce(json_extract(metadata, '$.speaker'), json_extract(metadata, '$.name'))"
        )
        base: dict[str, tuple[int, str, str | None]] = {}
        speakers: dict[str, tuple[str | None, int]] = {}
        for chunk in _chunks(wanted):
            for rowid, eid, gid, source, who, when in self._all(
                f"SELECT rowid, id, group_id, source, {speaker_sql}, reference_time "
                f"FROM episodes WHERE id IN ({_marks(len(chunk))})",
                chunk,
            ):
                base[eid] = (rowid, gid, source)
                speakers[eid] = (who if isinstance(who, str) else None, when)
        neighbours: dict[str, list[tuple[str, int]]] = {eid: [] for eid in base}
        if window <= 0 or not base:
            return speakers, neighbours
        # The group's and source's previous and next turns, through the (group_id, source)
        # index in rowid order: other groups' or sources' episodes written in between (another
        # tenant's ingest, another conversation) are never read.
        side = (
            f"SELECT rowid, id, {speaker_sql}, reference_time FROM episodes "
            "INDEXED BY episodes_group_source WHERE group_id = ? AND source IS ? AND rowid {op} ? "
            "ORDER BY rowid {order} LIMIT ?"
        )
        before = side.format(op="<", order="DESC")
        after = side.format(op=">", order="ASC")
        sql = f"SELECT * FROM ({before}) UNION ALL SELECT * FROM ({after})"
        with self._lock:
            for eid, (rowid, gid, source) in base.items():
                rows = self._execute(
                    sql, (gid, source, rowid, window, gid, source, rowid, window)
                ).fetchall()
                steps = {-1: 0, 1: 0}
                for near_rowid, near_id, who, when in rows:
                    step = -1 if near_rowid < rowid else 1
                    steps[step] += 1
                    neighbours[eid].append((near_id, steps[step]))
                    speakers.setdefault(near_id, (who if isinstance(who, str) else None, when))
        return speakers, neighbours

    def find_entities(self, group_id: str, keys: Sequence[str]) -> list[EntityRecord]:
        with self._lock:
            rows = _Reader(self.conn).entities_by_keys(group_id, keys)
        return [
            EntityRecord(id=r.id, name=r.name, type=r.type, aliases=r.aliases, summary=r.summary)
            for r in rows
        ]

    def find_entities_by_ids(self, group_id: str, entity_ids: Sequence[str]) -> list[EntityRecord]:
        out: list[EntityRecord] = []
        for chunk in _chunks(list(dict.fromkeys(entity_ids))):
            # By primary key only: a group_id condition makes SQLite scan the group's index.
            rows = self._all(
                "SELECT id, group_id, name, type, aliases, summary FROM entities "
                f"WHERE id IN ({_marks(len(chunk))})",
                chunk,
            )
            out.extend(
                EntityRecord(
                    id=r["id"],
                    name=r["name"],
                    type=r["type"],
                    aliases=json.loads(r["aliases"]),
                    summary=r["summary"],
                )
                for r in rows
                if r["group_id"] == group_id
            )
        return out

    def expand(
        self, group_id: str, entity_ids: Sequence[str], hops: int, view: TimeView, limit: int
    ) -> list[tuple[str, int, str]]:
        params = {"at": view.at, "known": view.known, "g": group_id}

        def fetch(ids: list[str]) -> Iterator[tuple[str, str, str | None]]:
            for chunk in _chunks(ids, 400):
                names = {f"e{i}": v for i, v in enumerate(chunk)}
                marks = ",".join(f":{k}" for k in names)
                # Two indexed lookups (subject, object) instead of an OR that scans. The unary
                # "+" keeps SQLite from answering the object half from the (group_id, predicate)
                # index, a scan of the whole group (1 s at 100k facts, found by bench/scale.py).
                yield from self._all(
                    f"SELECT f.id, f.subject_id, f.object_id FROM facts f "
                    f"WHERE f.group_id = :g AND f.subject_id IN ({marks}) AND {_VIEW_SQL} "
                    f"UNION ALL SELECT f.id, f.subject_id, f.object_id FROM facts f "
                    f"WHERE f.object_id IN ({marks}) AND +f.group_id = :g AND {_VIEW_SQL} "
                    f"LIMIT :lim",
                    {**params, **names, "lim": limit},
                )

        return breadth_first(entity_ids, hops, limit, fetch)

    # ------------------------------------------------------------------ fact reads
    def fact_records(
        self, fact_ids: Sequence[str], view: TimeView | None = None
    ) -> list[FactRecord]:
        wanted = list(dict.fromkeys(fact_ids))
        found: dict[str, FactRecord] = {}
        for chunk in _chunks(wanted, 400):
            names = {f"i{i}": v for i, v in enumerate(chunk)}
            sql = _FACT_SELECT + f" WHERE f.id IN ({','.join(':' + k for k in names)})"
            params: dict[str, Any] = dict(names)
            if view is not None:
                sql += f" AND {_VIEW_SQL}"
                params.update(at=view.at, known=view.known)
            for row in self._all(sql, params):
                record = _fact_record(row, view)
                found[record.id] = record
        return [found[i] for i in wanted if i in found]

    def _episode_pairs(self, sql: str, episode_ids: Sequence[str]) -> list[tuple[str, str]]:
        """(episode id, other id) rows of ``sql``, whose ``{marks}`` takes the episode ids."""
        out: list[tuple[str, str]] = []
        for chunk in _chunks(list(dict.fromkeys(episode_ids))):
            out.extend((r[0], r[1]) for r in self._all(sql.format(marks=_marks(len(chunk))), chunk))
        return out

    def episode_mentions(self, episode_ids: Sequence[str]) -> list[tuple[str, str]]:
        """(episode id, entity id) for each entity the episodes mention."""
        return self._episode_pairs(
            "SELECT episode_id, entity_id FROM mentions WHERE episode_id IN ({marks}) "
            "ORDER BY episode_id, entity_id",
            episode_ids,
        )

    def record_facts(self, episode_ids: Sequence[str]) -> list[tuple[str, str]]:
        """(episode id, fact id) for each fact that those of the episodes which are JSON
        records support (FROM_EPISODE), in any view: callers narrow them with ``fact_stubs``."""
        return self._episode_pairs(
            "SELECT fe.episode_id, fe.fact_id FROM fact_episodes fe "
            "JOIN episodes e ON e.id = fe.episode_id "
            "WHERE fe.episode_id IN ({marks}) AND e.kind = 'json' "
            "ORDER BY fe.episode_id, fe.fact_id",
            episode_ids,
        )

    def fact_stubs(
        self, fact_ids: Sequence[str], view: TimeView
    ) -> list[tuple[str, str, str | None, int, float]]:
        out: list[tuple[str, str, str | None, int, float]] = []
        for chunk in _chunks(list(dict.fromkeys(fact_ids)), 400):
            names = {f"i{i}": v for i, v in enumerate(chunk)}
            rows = self._all(
                "SELECT f.id, f.subject_id, f.object_id, f.valid_from, f.confidence FROM facts f "
                f"WHERE f.id IN ({','.join(':' + k for k in names)}) AND {_VIEW_SQL}",
                {**names, "at": view.at, "known": view.known},
            )
            out.extend((r[0], r[1], r[2], r[3], r[4]) for r in rows)
        return out

    def links(self, fact_ids: Sequence[str]) -> list[LinkRow]:
        out: dict[tuple[str, str, str], LinkRow] = {}
        for chunk in _chunks(list(dict.fromkeys(fact_ids)), 400):
            marks = _marks(len(chunk))
            for row in self._all(
                f"SELECT * FROM fact_links WHERE src IN ({marks}) "
                f"UNION SELECT * FROM fact_links WHERE dst IN ({marks})",
                [*chunk, *chunk],
            ):
                link = LinkRow(row[0], row[1], row[2], row[3], row[4], row[5])
                out[(link.kind, link.src, link.dst)] = link
        return list(out.values())

    def list_facts(
        self,
        group_id: str,
        *,
        entity_ids: Sequence[str] | None = None,
        predicate: str | None = None,
        view: TimeView | None = None,
        subject_only: bool = False,
    ) -> list[FactRecord]:
        sql = _FACT_SELECT + " WHERE f.group_id = :g"
        params: dict[str, Any] = {"g": group_id}
        if entity_ids is not None:
            if not entity_ids:
                return []
            names = {f"e{i}": v for i, v in enumerate(entity_ids[:400])}
            marks = ",".join(":" + k for k in names)
            params.update(names)
            if subject_only:
                sql += f" AND f.subject_id IN ({marks})"
            else:
                sql += f" AND (f.subject_id IN ({marks}) OR f.object_id IN ({marks}))"
        if predicate is not None:
            sql += " AND f.predicate = :p"
            params["p"] = predicate
        if view is not None:
            sql += f" AND {_VIEW_SQL}"
            params.update(at=view.at, known=view.known)
        sql += " ORDER BY f.valid_from, f.recorded_at, f.rowid"
        return [_fact_record(row, view) for row in self._all(sql, params)]

    def facts_with_values(
        self,
        group_id: str,
        predicates: Sequence[str],
        view: TimeView,
        subject_ids: Sequence[str] | None = None,
    ) -> dict[str, dict[str, Any]]:
        if not predicates or (subject_ids is not None and not subject_ids):
            return {}
        names = {f"p{i}": v for i, v in enumerate(predicates)}
        sql = (
            f"SELECT f.subject_id, f.predicate, f.value_json FROM facts f WHERE f.group_id = :g "
            f"AND f.predicate IN ({','.join(':' + k for k in names)}) "
            f"AND f.value_json IS NOT NULL AND {_VIEW_SQL}"
        )
        params = {"g": group_id, "at": view.at, "known": view.known, **names}
        if subject_ids is None:
            rows = self._all(sql, params)
        else:  # (group_id, subject_id, predicate) index: a few rows per subject
            rows = []
            unique = list(dict.fromkeys(subject_ids))
            for chunk in _chunks(unique, max(_MAX_VARS - len(names), 1)):
                ids = {f"s{i}": v for i, v in enumerate(chunk)}
                marks = ",".join(":" + k for k in ids)
                rows += self._all(f"{sql} AND f.subject_id IN ({marks})", params | ids)
        out: dict[str, dict[str, Any]] = {}
        for subject_id, predicate, raw in rows:
            values = out.setdefault(subject_id, {}).setdefault(predicate, [])
            values.append(json.loads(raw))
        return out

    def filter_candidates(
        self, group_id: str, conditions: Sequence[Condition], view: TimeView, limit: int
    ) -> list[str]:
        """All conditions in one query: a scan of the driving condition's predicate, newest
        first, that stops at ``limit`` subjects; the others as EXISTS on the subject's timeline
        index. ``$ne`` drops a subject only when an equal value is stored as its exact text."""
        if limit <= 0 or not conditions:
            return []
        params: dict[str, Any] = {"g": group_id, "at": view.at, "known": view.known, "lim": limit}
        drive = driving(conditions)
        where: list[str] = []
        for i, cond in enumerate(conditions):
            if cond is drive:
                continue
            params[f"p{i}"] = cond.path
            inner = (
                "SELECT 1 FROM facts x WHERE x.group_id = :g AND x.subject_id = f.subject_id "
                f"AND x.predicate = :p{i} AND {_VIEW_SQL_X} AND "
            )
            if cond.op != "$ne":
                test = _maybe_sql("x", cond, f"c{i}", params)
                where.append(f"EXISTS ({inner}x.value_json IS NOT NULL AND {test})")
            elif texts := equal_texts(cond.operand):
                equal = _bind(params, f"c{i}", texts)
                where.append(f"NOT EXISTS ({inner}x.value_json IN ({equal}))")
        if drive is None:  # only $ne: subjects with any value of the paths
            paths = _bind(params, "d", sorted({c.path for c in conditions}))
            head = f"SELECT f.subject_id FROM facts f WHERE f.predicate IN ({paths})"
            tail = "GROUP BY f.subject_id ORDER BY max(f.rowid) DESC LIMIT :lim"
        else:
            params["d"] = drive.path
            head = "SELECT DISTINCT f.subject_id FROM facts f WHERE f.predicate = :d"
            where.append(_maybe_sql("f", drive, "dv", params))
            tail = "ORDER BY f.rowid DESC LIMIT :lim"
        sql = " AND ".join([head, "f.group_id = :g", "f.value_json IS NOT NULL", _VIEW_SQL, *where])
        return [str(row[0]) for row in self._all(f"{sql} {tail}", params)]

    # ------------------------------------------------------------------ stats, export, import
    def stats(self, group_id: str | None) -> dict[str, Any]:
        where, params = ("WHERE group_id = ?", [group_id]) if group_id is not None else ("", [])
        now = to_ms(utcnow())

        def count(sql: str, extra: Sequence[Any] = ()) -> int:
            return int(self._one(sql, [*params, *extra])[0])

        and_ = "AND" if where else "WHERE"
        facts_where = where.replace("group_id", "f.group_id")
        facts_and = "AND" if facts_where else "WHERE"
        return {
            "store": self.url,
            "group_id": group_id,
            "episodes": count(f"SELECT count(*) FROM episodes {where}"),
            "episodes_failed": count(
                f"SELECT count(*) FROM episodes {where} {and_} status = ?", ["failed"]
            ),
            "episodes_pending": count(
                f"SELECT count(*) FROM episodes {where} {and_} status = ?", ["pending"]
            ),
            "entities": count(f"SELECT count(*) FROM entities {where}"),
            "facts": count(f"SELECT count(*) FROM facts {where}"),
            "facts_current": count(
                f"SELECT count(*) FROM facts {where} {and_} expired_at IS NULL "
                "AND (valid_to IS NULL OR valid_to > ?)",
                [now],
            ),
            "facts_expired": count(
                f"SELECT count(*) FROM facts {where} {and_} expired_at IS NOT NULL"
            ),
            "supersedes_links": count(
                f"SELECT count(*) FROM fact_links l JOIN facts f ON f.id = l.src {facts_where} "
                f"{facts_and} l.kind = 'SUPERSEDES'"
            ),
            "contradicts_links": count(
                f"SELECT count(*) FROM fact_links l JOIN facts f ON f.id = l.src {facts_where} "
                f"{facts_and} l.kind = 'CONTRADICTS'"
            ),
            "groups": [r[0] for r in self._all("SELECT DISTINCT group_id FROM episodes ORDER BY 1")]
            if group_id is None
            else [group_id],
            "embedder": self.get_meta("embedder"),
        }

    def table_counts(self, group_id: str | None = None) -> dict[str, int]:
        """Row counts per table, FTS tables included (for residue checks after forget)."""
        out: dict[str, int] = {}
        for table in (
            "episodes",
            "entities",
            "entity_aliases",
            "facts",
            "fact_episodes",
            "fact_endings",
            "fact_links",
            "mentions",
        ):
            out[table] = int(self._one(f"SELECT count(*) FROM {table}")[0])
        for table in ("facts_fts", "entities_fts", "episodes_fts"):
            # Rows the index really holds: count(*) on an external-content FTS5 table reads the
            # content table, so it would always equal the table's count and hide residue.
            out[table] = int(self._one(f"SELECT count(*) FROM {table}_docsize")[0])
        out["fact_vectors"] = int(
            self._one("SELECT count(*) FROM facts WHERE embedding IS NOT NULL")[0]
        )
        return out

    def export_rows(self, group_id: str | None) -> Iterator[dict[str, Any]]:
        where, params = ("WHERE group_id = ?", [group_id]) if group_id is not None else ("", [])
        for row in self._all(f"SELECT * FROM episodes {where} ORDER BY rowid", params):
            yield episode_export(_episode_row(row))
        for row in self._all(f"SELECT * FROM entities {where} ORDER BY rowid", params):
            yield entity_export(_entity_row(row))
        for row in self._all(f"SELECT * FROM facts {where} ORDER BY rowid", params):
            yield fact_export(_fact_row(row))
        join = "JOIN facts f ON f.id = x.fact_id" if group_id is not None else ""
        fwhere = "WHERE f.group_id = ?" if group_id is not None else ""
        for table, kind in (("fact_episodes", "provenance"), ("fact_endings", "ending")):
            for row in self._all(
                f"SELECT x.fact_id, x.episode_id, x.span, x.claim FROM {table} x {join} {fwhere} "
                "ORDER BY x.rowid",
                params,
            ):
                yield provenance_export(kind, ProvenanceRow(row[0], row[1], row[2], row[3]))
        join = "JOIN facts f ON f.id = x.src" if group_id is not None else ""
        for row in self._all(
            f"SELECT x.* FROM fact_links x {join} {fwhere} ORDER BY x.rowid", params
        ):
            yield link_export(LinkRow(row[0], row[1], row[2], row[3], row[4], row[5]))
        join = "JOIN episodes f ON f.id = x.episode_id" if group_id is not None else ""
        for row in self._all(
            f"SELECT x.* FROM mentions x {join} {fwhere} ORDER BY x.rowid", params
        ):
            yield {"type": "mention", "episode_id": row[0], "entity_id": row[1]}

    def import_rows(self, rows: Sequence[dict[str, Any]]) -> dict[str, int]:
        """Insert an export's rows; what the store already holds is left alone (and not
        counted), so importing twice changes nothing."""
        plan = plan_from_export(rows)
        episodes = [episode_from_export(r) for r in rows if r.get("type") == "episode"]
        counts = {"episodes": 0, "entities": 0, "facts": 0, "links": 0}

        def present(table: str, ids: list[str]) -> set[str]:
            return {
                r[0]
                for chunk in _chunks(ids)
                for r in self.conn.execute(
                    f"SELECT id FROM {table} WHERE id IN ({_marks(len(chunk))})", chunk
                )
            }

        def work(reader: StoreReader) -> WritePlan:
            counts["episodes"] = sum(self._insert_episode(self.conn, ep)[1] for ep in episodes)
            known = present("facts", [f.id for f in plan.facts_new])
            plan.facts_new = [f for f in plan.facts_new if f.id not in known]
            known = present("entities", [e.id for e in plan.entities_new])
            plan.entities_new = [e for e in plan.entities_new if e.id not in known]
            plan.links_add = [
                lk
                for lk in plan.links_add
                if self.conn.execute(
                    "SELECT 1 FROM fact_links WHERE kind = ? AND src = ? AND dst = ?",
                    (lk.kind, lk.src, lk.dst),
                ).fetchone()
                is None
            ]
            counts.update(
                facts=len(plan.facts_new),
                entities=len(plan.entities_new),
                links=len(plan.links_add),
            )
            return plan

        self.write(work)
        return counts


# ---------------------------------------------------------------------- the in-transaction reader
def _next_write_seq(conn: sqlite3.Connection) -> int:
    """The next commit sequence number (inside the write transaction: writers are serialised)."""
    conn.execute("INSERT OR IGNORE INTO graphmem_meta VALUES ('write_seq', '0')")
    conn.execute(
        "UPDATE graphmem_meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'write_seq'"
    )
    (value,) = conn.execute("SELECT value FROM graphmem_meta WHERE key = 'write_seq'").fetchone()
    return int(value)


class _Reader:
    def __init__(self, conn: sqlite3.Connection, write_seq: int = 0) -> None:
        self.conn = conn
        self.write_seq = write_seq

    def get_episode(self, episode_id: str) -> EpisodeRow | None:
        row = self.conn.execute("SELECT * FROM episodes WHERE id = ?", (episode_id,)).fetchone()
        return None if row is None else _episode_row(row)

    def entities_by_keys(self, group_id: str, keys: Sequence[str]) -> list[EntityRow]:
        out: dict[str, EntityRow] = {}
        unique = list(dict.fromkeys(keys))
        for chunk in _chunks(unique, 400):
            marks = _marks(len(chunk))
            rows = self.conn.execute(
                f"SELECT * FROM entities WHERE group_id = ? AND key IN ({marks}) "
                f"UNION SELECT e.* FROM entity_aliases a JOIN entities e ON e.id = a.entity_id "
                f"WHERE a.group_id = ? AND a.alias_key IN ({marks})",
                [group_id, *chunk, group_id, *chunk],
            ).fetchall()
            for row in rows:
                out[row["id"]] = _entity_row(row)
        return sorted(out.values(), key=lambda e: e.created_at)

    def timelines(
        self,
        group_id: str,
        pairs: Sequence[tuple[str, str]],
        *,
        include_expired: bool = False,
    ) -> dict[tuple[str, str], Timeline]:
        result: dict[tuple[str, str], Timeline] = {pair: Timeline() for pair in pairs}
        ids: list[str] = []
        for subject_id, predicate in dict.fromkeys(pairs):
            rows = self.conn.execute(
                "SELECT * FROM facts WHERE group_id = ? AND subject_id = ? AND predicate = ? "
                "AND (? OR expired_at IS NULL) ORDER BY valid_from, recorded_at, rowid",
                (group_id, subject_id, predicate, include_expired),
            ).fetchall()
            facts = [_fact_row(r) for r in rows]
            result[(subject_id, predicate)].facts = facts
            ids.extend(f.id for f in facts)
        if ids:
            owner = {f.id: pair for pair, tl in result.items() for f in tl.facts}
            seen: set[LinkRow] = set()
            for chunk in _chunks(ids, 400):
                marks = _marks(len(chunk))
                for row in self.conn.execute(
                    f"SELECT * FROM fact_links WHERE src IN ({marks}) "
                    f"UNION SELECT * FROM fact_links WHERE dst IN ({marks})",
                    [*chunk, *chunk],
                ):
                    link = LinkRow(row[0], row[1], row[2], row[3], row[4], row[5])
                    pair = owner.get(link.src) or owner.get(link.dst)
                    if pair is not None and link not in seen:
                        seen.add(link)
                        result[pair].links.append(link)
        return result

    def facts_by_ids(self, fact_ids: Sequence[str]) -> list[FactRow]:
        out: list[FactRow] = []
        for chunk in _chunks(list(fact_ids)):
            rows = self.conn.execute(
                f"SELECT * FROM facts WHERE id IN ({_marks(len(chunk))})", chunk
            ).fetchall()
            out.extend(_fact_row(r) for r in rows)
        return out

    def fact_claims(
        self, fact_ids: Sequence[str]
    ) -> tuple[list[ProvenanceRow], list[ProvenanceRow]]:
        out: tuple[list[ProvenanceRow], list[ProvenanceRow]] = ([], [])
        for rows, table in zip(out, ("fact_episodes", "fact_endings"), strict=True):
            for chunk in _chunks(list(fact_ids)):
                rows.extend(
                    ProvenanceRow(r[0], r[1], r[2], r[3])
                    for r in self.conn.execute(
                        f"SELECT fact_id, episode_id, span, claim FROM {table} "
                        f"WHERE fact_id IN ({_marks(len(chunk))}) ORDER BY rowid",
                        chunk,
                    )
                )
        return out

    def episode_ended_fact_ids(self, episode_ids: Sequence[str]) -> list[str]:
        out: list[str] = []
        for chunk in _chunks(list(episode_ids)):
            out.extend(
                r[0]
                for r in self.conn.execute(
                    "SELECT DISTINCT fact_id FROM fact_endings "
                    f"WHERE episode_id IN ({_marks(len(chunk))})",
                    chunk,
                )
            )
        return out

    def episode_fact_ids(self, episode_ids: Sequence[str]) -> dict[str, int]:
        out: dict[str, int] = {}
        for chunk in _chunks(list(episode_ids)):
            rows = self.conn.execute(
                "SELECT fe.fact_id, (SELECT count(*) FROM fact_episodes x "
                "WHERE x.fact_id = fe.fact_id) FROM fact_episodes fe "
                f"WHERE fe.episode_id IN ({_marks(len(chunk))})",
                chunk,
            ).fetchall()
            out.update({r[0]: int(r[1]) for r in rows})
        return out

    def entity_fact_ids(self, entity_id: str) -> list[str]:
        rows = self.conn.execute(
            "SELECT id FROM facts WHERE subject_id = ?1 OR object_id = ?1", (entity_id,)
        ).fetchall()
        return [r[0] for r in rows]

    def group_episode_ids(self, group_id: str) -> list[str]:
        rows = self.conn.execute("SELECT id FROM episodes WHERE group_id = ?", (group_id,))
        return [r[0] for r in rows]

    def group_fact_ids(self, group_id: str) -> list[str]:
        rows = self.conn.execute("SELECT id FROM facts WHERE group_id = ?", (group_id,))
        return [r[0] for r in rows]

    def group_entity_ids(self, group_id: str) -> list[str]:
        rows = self.conn.execute("SELECT id FROM entities WHERE group_id = ?", (group_id,))
        return [r[0] for r in rows]

    def episode_entity_ids(self, episode_ids: Sequence[str]) -> list[str]:
        out: list[str] = []
        for chunk in _chunks(list(episode_ids)):
            rows = self.conn.execute(
                f"SELECT entity_id FROM mentions WHERE episode_id IN ({_marks(len(chunk))})",
                chunk,
            ).fetchall()
            out.extend(r[0] for r in rows)
        return out

    def speaker_episode_ids(self, group_id: str, speaker_keys: Sequence[str]) -> list[str]:
        from .._ids import entity_key

        keys = set(speaker_keys)
        rows = self.conn.execute(
            "SELECT id, coalesce(json_extract(metadata, '$.speaker'), "
            "json_extract(metadata, '$.name')) FROM episodes INDEXED BY episodes_group "
            "WHERE group_id = ? ORDER BY rowid",
            (group_id,),
        )
        match: dict[str, bool] = {}  # a group has few speakers and many turns
        out: list[str] = []
        for eid, who in rows:
            if isinstance(who, str):
                if who not in match:
                    match[who] = entity_key(who) in keys
                if match[who]:
                    out.append(eid)
        return out

    def subject_episode_ids(self, group_id: str, entity_ids: Sequence[str]) -> list[str]:
        out: dict[str, None] = {}
        for chunk in _chunks(list(entity_ids)):
            marks = _marks(len(chunk))
            for table in ("fact_episodes", "fact_endings"):
                rows = self.conn.execute(
                    f"SELECT DISTINCT c.episode_id FROM facts f JOIN {table} c "
                    f"ON c.fact_id = f.id WHERE f.group_id = ? AND f.subject_id IN ({marks})",
                    (group_id, *chunk),
                ).fetchall()
                out.update((r[0], None) for r in rows)
        return list(out)


# ---------------------------------------------------------------------- row conversion
def _split_sql(script: str) -> list[str]:
    """Split a migration into statements; trigger bodies keep their inner semicolons."""
    statements: list[str] = []
    buffer = ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            if buffer.strip():
                statements.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        statements.append(buffer.strip())
    return statements


def _purged_tables(plans: Sequence[WritePlan]) -> list[str]:
    """The content tables whose rows these plans delete (a forget): their full-text indexes
    still hold the deleted text until they are merged."""
    tables: list[str] = []
    if any(p.delete_fact_ids for p in plans):
        tables.append("facts")
    if any(p.delete_entity_ids or p.prune_entity_ids for p in plans):
        tables.append("entities")
    if any(p.delete_episode_ids for p in plans):
        tables.append("episodes")
    return tables


def _purge_fts(conn: sqlite3.Connection, tables: Sequence[str]) -> None:
    """Merge each full-text index into one segment, inside the deleting transaction.

    An FTS5 'delete' only appends a tombstone (holding the deleted row's terms) in a new
    segment; the terms stay in the old segment until a merge drops them. 'optimize' merges
    every segment, and ``secure_delete`` zeroes the pages and cells the old ones leave. Its
    cost grows with the index (the whole index is rewritten), not with what was deleted.
    """
    for table in tables:
        conn.execute(f"INSERT INTO {table}_fts({table}_fts) VALUES ('optimize')")


def _delete_entities(conn: sqlite3.Connection, ids: Sequence[str]) -> None:
    marks = _marks(len(ids))
    conn.execute(f"DELETE FROM entity_aliases WHERE entity_id IN ({marks})", ids)
    conn.execute(f"DELETE FROM mentions WHERE entity_id IN ({marks})", ids)
    conn.execute(f"DELETE FROM entities WHERE id IN ({marks})", ids)


def _alias_keys(aliases: Sequence[str]) -> list[str]:
    from .._ids import entity_key

    return list(dict.fromkeys(entity_key(a) for a in aliases if a.strip()))


def _search_text(name: str, aliases: Sequence[str]) -> str:
    return " ".join([name, *aliases])


def _episode_row(row: sqlite3.Row | tuple[Any, ...]) -> EpisodeRow:
    return EpisodeRow(
        id=row[0],
        group_id=row[1],
        source=row[2],
        kind=row[3],
        content=row[4],
        reference_time=row[5],
        ingested_at=row[6],
        content_hash=row[7],
        status=row[8],
        extractor=row[9],
        error=row[10],
        metadata=json.loads(row[11] or "{}"),
        embedding=from_blob(row[12]) if len(row) > 12 else None,
    )


def _entity_row(row: sqlite3.Row) -> EntityRow:
    return EntityRow(
        id=row["id"],
        group_id=row["group_id"],
        name=row["name"],
        key=row["key"],
        type=row["type"],
        aliases=json.loads(row["aliases"]),
        summary=row["summary"],
        embedding=from_blob(row["embedding"]),
        created_at=row["created_at"],
        attributes=json.loads(row["attributes"]),
    )


def _fact_row(row: sqlite3.Row) -> FactRow:
    return FactRow(
        id=row["id"],
        group_id=row["group_id"],
        subject_id=row["subject_id"],
        predicate=row["predicate"],
        object_id=row["object_id"],
        value_json=row["value_json"],
        statement=row["statement"],
        valid_from=row["valid_from"],
        valid_to=row["valid_to"],
        recorded_at=row["recorded_at"],
        expired_at=row["expired_at"],
        ended_at=row["ended_at"],
        end_reason=row["end_reason"],
        confidence=row["confidence"],
        decided_by=row["decided_by"],
        embedding=from_blob(row["embedding"]),
    )


def _fact_record(row: sqlite3.Row, view: TimeView | None) -> FactRecord:
    valid_to = row["valid_to"]
    ended_at = row["ended_at"]
    if view is not None and valid_to is not None and ended_at is not None and ended_at > view.known:
        valid_to = None  # not yet known at `known`
    superseded_by = reason = None
    if row["superseded"]:
        superseded_by, _, reason = str(row["superseded"]).partition("|")
    if reason is None and row["end_reason"]:
        reason = row["end_reason"]
    raw = row["value_json"]
    return FactRecord(
        id=row["id"],
        statement=row["statement"],
        subject=row["subject_name"],
        predicate=row["predicate"],
        object=row["object_name"],
        value=None if raw is None else json.loads(raw),
        valid_from=from_ms(row["valid_from"]),
        valid_to=None if valid_to is None else from_ms(valid_to),
        recorded_at=from_ms(row["recorded_at"]),
        expired_at=None if row["expired_at"] is None else from_ms(row["expired_at"]),
        confidence=row["confidence"],
        superseded_by=superseded_by,
        reason=reason,
        episode_ids=sorted((row["episode_ids"] or "").split(",")) if row["episode_ids"] else [],
        group_id=row["group_id"],
        subject_id=row["subject_id"],
        object_id=row["object_id"],
        decided_by=row["decided_by"],
    )
