"""The SQLite store's one connection, shared by its parts (``SQLiteStore`` holds one
``SQLiteDB`` and hands it to each): opened on first use (constructors do no I/O), guarded by
one re-entrant lock, with the read-only state found at opening and a count of this
connection's own commits (which ``PRAGMA data_version`` does not see)."""

from __future__ import annotations

import functools
import os
import sqlite3
import threading
import types
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from ..._errors import SchemaError, StoreError
from .fts_vocab import create_vocab_tables

__all__ = ["SQLiteDB", "sqlite_error", "store_errors"]

C = TypeVar("C", bound=type)


def sqlite_error(path: str, exc: sqlite3.Error) -> StoreError:
    """The ``StoreError`` for a SQLite failure; a damaged file says how to get it back."""
    if getattr(exc, "sqlite_errorname", "") in ("SQLITE_CORRUPT", "SQLITE_NOTADB"):
        return StoreError(
            f"the store {path} is damaged (SQLite says: {exc}); restore it from a backup, or "
            f"recover what is left with `sqlite3 {path} .recover`"
        )
    return StoreError(f"SQLite error on {path}: {exc}")


def store_errors(cls: C) -> C:
    """Make every public method of a SQLite store class raise ``StoreError`` for what SQLite
    raises (a damaged page met half-way through a read, a full disk), iterators included: no
    ``sqlite3`` exception reaches the caller, whichever part of the store met it."""

    def guarded(method: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(method)
        def call(self: Any, *args: Any, **kwargs: Any) -> Any:
            try:
                result = method(self, *args, **kwargs)
            except sqlite3.Error as exc:
                raise sqlite_error(self.path, exc) from exc
            if isinstance(result, types.GeneratorType):
                return _guarded_iter(self.path, result)
            return result

        return call

    for name, attr in list(vars(cls).items()):
        if not name.startswith("_") and isinstance(attr, types.FunctionType):
            setattr(cls, name, guarded(attr))
    return cls


def _guarded_iter(path: str, rows: Iterator[Any]) -> Iterator[Any]:
    try:
        yield from rows
    except sqlite3.Error as exc:
        raise sqlite_error(path, exc) from exc


class SQLiteDB:
    def __init__(self, path: str, url: str, *, read_only: bool, immutable: bool) -> None:
        self.path = path
        self.url = url
        self._asked = (read_only or immutable, immutable)
        self.read_only, self.immutable = self._asked
        # What a write would need, for the read-only error.
        self.writes_need = "the store opened without ?mode=ro / ?immutable=1"
        self._conn: sqlite3.Connection | None = None
        self.lock = threading.RLock()
        self.write_count = 0  # this connection's commits: data_version only sees others'

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
            target = self.open_target(file)
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
        create_vocab_tables(conn)

    def close(self) -> None:
        with self.lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def open_target(self, file: Path) -> str:
        """What ``sqlite3.connect`` opens: the path, or a ``file:`` URI with ``mode=ro`` (and
        ``immutable=1``) when the store is read-only, asked for or found so."""
        wal, shm = Path(f"{file}-wal"), Path(f"{file}-shm")
        self.read_only, self.immutable = self._asked  # found again on each connect
        self.writes_need = "the store opened without ?mode=ro / ?immutable=1"
        if not self.read_only and file.exists():
            if not os.access(file, os.W_OK):
                self.read_only = True
                self.writes_need = f"write access to {file}"
            elif not os.access(file.parent, os.W_OK) and not all(
                p.exists() and os.access(p, os.W_OK) for p in (wal, shm)
            ):
                # WAL writes need the -wal and -shm files, made in the directory.
                self.read_only = True
                self.writes_need = (
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

    def require_writable(self) -> None:
        """``StoreError`` before a write on a read-only store (SQLite's own message would be
        'attempt to write a readonly database')."""
        if self._conn is None:
            self.connect()
        if self.read_only:
            raise StoreError(
                f"{self.path} is read-only: reads work, writes need {self.writes_need}"
            )

    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> sqlite3.Cursor:
        try:
            return self.conn.execute(sql, params)
        except sqlite3.DatabaseError as exc:
            raise sqlite_error(self.path, exc) from exc

    def fetch_one(self, sql: str, params: Sequence[Any] = ()) -> Any:
        with self.lock:
            try:
                return self.execute(sql, params).fetchone()
            except sqlite3.DatabaseError as exc:  # met while stepping through the rows
                raise sqlite_error(self.path, exc) from exc

    def fetch_all(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[Any]:
        with self.lock:
            try:
                return self.execute(sql, params).fetchall()
            except sqlite3.DatabaseError as exc:
                raise sqlite_error(self.path, exc) from exc

    def get_meta(self, key: str) -> str | None:
        row = self.fetch_one("SELECT value FROM graphmem_meta WHERE key = ?", (key,))
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        with self.lock:
            self.require_writable()
            self.execute(
                "INSERT INTO graphmem_meta VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

    def data_version(self) -> int:
        """Moves when another connection commits (this one's commits move ``write_count``)."""
        return int(self.conn.execute("PRAGMA data_version").fetchone()[0])
