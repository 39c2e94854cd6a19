"""The Neo4j store's connection and query runner, shared by all of its parts.

``BoltRunner`` holds what every part of ``Neo4jStore`` needs and nothing else: the resolved
connection settings (``BoltConfig``), the driver and the server dialect (opened by
``connect()``), the writers' lock, the insertion-order sequence, and the ways a named query is
run (a routed read, a streamed read, a managed read or write transaction, an auto-commit schema
statement), each turning a driver failure into a ``StoreError`` that says where and why.
"""

from __future__ import annotations

import os
import random
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar
from urllib.parse import unquote, urlparse, urlunparse

import neo4j
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

from ..._errors import ConfigError, StoreError
from ..._time import to_ms, utcnow
from .cypher import query, statements
from .dialect import Dialect, select_dialect

__all__ = ["BoltConfig", "BoltRunner", "chunks", "run"]

T = TypeVar("T")

CHUNK = 1000  # ids per UNWIND batch on reads
_CONSTRAINT_RETRIES = 5  # re-runs of a write that lost a race to a unique key (see write_tx)


def chunks(items: Sequence[T], size: int = CHUNK) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def run(tx: ManagedTransaction, query_name: str, /, **params: Any) -> list[Record]:
    """One named query on an open transaction, its records read."""
    return [record for record in tx.run(query(query_name), params)]


def _env(*names: str) -> str | None:
    for name in names:
        value = os.environ.get(name)
        if value:
            return value
    return None


@dataclass(frozen=True)
class BoltConfig:
    """Connection settings, resolved from the arguments, the URL and the environment (see
    ``graphmem.store.neo4j``); ``url`` never shows a password."""

    url: str
    host: str
    username: str
    password: str | None = field(repr=False)
    database: str | None
    http_url: str | None
    max_retry_time: float
    connection_timeout: float

    @classmethod
    def resolve(
        cls,
        url: str,
        *,
        username: str | None = None,
        password: str | None = None,
        database: str | None = None,
        http_url: str | None = None,
        max_retry_time: float | None = None,
        connection_timeout: float | None = None,
    ) -> BoltConfig:
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
        retry = max_retry_time
        if retry is None:
            raw = _env("GRAPHMEM_NEO4J_RETRY_SECONDS")
            try:
                retry = float(raw) if raw else 30.0
            except ValueError:
                raise ConfigError(
                    f"GRAPHMEM_NEO4J_RETRY_SECONDS must be a number of seconds, got {raw!r}"
                ) from None
        return cls(
            url=urlunparse(parsed._replace(netloc=netloc)),
            host=parsed.hostname,
            username=(
                username
                or url_user
                or _env("NEO4J_USERNAME", "NEO4J_USER", "GRAPHMEM_TEST_BOLT_USER")
                or "neo4j"
            ),
            password=(
                password
                if password is not None
                else url_password or _env("NEO4J_PASSWORD", "GRAPHMEM_TEST_BOLT_PASSWORD")
            ),
            database=database or _env("NEO4J_DATABASE", "GRAPHMEM_TEST_BOLT_DATABASE") or None,
            http_url=http_url,
            max_retry_time=float(retry),
            connection_timeout=float(connection_timeout) if connection_timeout else 30.0,
        )


class BoltRunner:
    """The driver and the ways a named query runs on it. No I/O until ``connect()`` (or the
    first query, which connects).

    ``lock`` (reentrant) serialises this store's writers, schema changes and connect/close;
    ``write_seq`` is the commit sequence of the write transaction running under it. ``clock``
    stamps the write lock (the store passes its module's ``utcnow``, read at call time).
    """

    def __init__(self, config: BoltConfig, clock: Callable[[], datetime] = utcnow) -> None:
        self.config = config
        self._clock = clock
        self.lock = threading.RLock()
        self.write_seq = 0  # the running write transaction's commit sequence (under lock)
        self._driver: neo4j.Driver | None = None
        self._dialect: Dialect | None = None
        self._agent: str | None = None
        self._seq_lock = threading.Lock()
        self._seq_last = 0

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
        cfg = self.config
        with self.lock:
            if self._driver is not None:
                return
            driver = self._open_driver()
            try:
                driver.verify_connectivity()
                agent = driver.get_server_info().agent
            except (DriverError, Neo4jError) as exc:
                driver.close()
                raise self.error("connect", exc) from exc
            dialect = select_dialect(
                str(agent),
                bolt_host=cfg.host,
                user=cfg.username,
                password=cfg.password or "",
                database=cfg.database,
                http_url=cfg.http_url,
            )
            if dialect.muted_notifications:
                # Neo4j warns about every label or relationship type a query names that the
                # store holds none of yet (CONTRADICTS in a store without a contradiction), and
                # the driver logs each warning: the server is told to leave those out. Only a
                # server that filters notifications (Bolt 5.2+) may be asked.
                driver.close()
                driver = self._open_driver(dialect.muted_notifications)
            self._agent = str(agent)
            self._dialect = dialect
            self._driver = driver

    def _open_driver(self, muted: Sequence[str] = ()) -> neo4j.Driver:
        cfg = self.config
        auth = (cfg.username, cfg.password) if cfg.password is not None else None
        extra: dict[str, Any] = {}
        if muted:
            extra["notifications_disabled_classifications"] = list(muted)
        try:
            return GraphDatabase.driver(
                cfg.url,
                auth=auth,
                max_transaction_retry_time=cfg.max_retry_time,
                connection_timeout=cfg.connection_timeout,
                user_agent="graphmem",
                **extra,
            )
        except (ValueError, ConfigError, DriverError) as exc:
            raise ConfigError(f"cannot use the store URL {cfg.url}: {exc}") from exc

    def close(self) -> None:
        with self.lock:
            if self._driver is not None:
                self._driver.close()
            self._driver = None
            self._dialect = None

    def error(self, what: str, exc: BaseException) -> StoreError:
        cfg = self.config
        detail = getattr(exc, "message", None) or str(exc) or type(exc).__name__
        where = f"Neo4j store {cfg.url}" + (f" (database {cfg.database})" if cfg.database else "")
        if isinstance(exc, AuthError):
            hint = (
                "authentication failed: set NEO4J_USERNAME and NEO4J_PASSWORD "
                "(or pass username=/password=)"
            )
        elif isinstance(exc, ServiceUnavailable | SessionExpired):
            hint = (
                "the server is unreachable or went away "
                f"(retried for up to {cfg.max_retry_time:g} s)"
            )
        elif isinstance(exc, TransactionError):
            hint = "the transaction could not be committed"
        elif isinstance(exc, ConstraintError):
            hint = "a uniqueness constraint refused the write"
        else:
            hint = "the server refused the request"
        return StoreError(f"{where}: {what} failed, {hint}: {type(exc).__name__}: {detail}")

    # ------------------------------------------------------------------ running queries
    def read(self, name: str, /, **params: Any) -> list[Record]:
        """One named read query (routed to readers; retried by the driver)."""
        try:
            records, _, _ = self.driver.execute_query(
                query(name),
                parameters_=params,
                routing_=RoutingControl.READ,
                database_=self.config.database,
            )
        except (DriverError, Neo4jError) as exc:
            raise self.error(f"read {name}", exc) from exc
        return list(records)

    def stream(self, name: str, /, **params: Any) -> Iterator[Record]:
        """A read query's records as they arrive (exports do not hold everything in memory)."""
        try:
            with self.session(read=True) as session:
                yield from session.run(query(name), params)
        except (DriverError, Neo4jError) as exc:
            raise self.error(f"read {name}", exc) from exc

    def session(self, *, read: bool = False) -> neo4j.Session:
        return self.driver.session(
            database=self.config.database,
            default_access_mode=neo4j.READ_ACCESS if read else neo4j.WRITE_ACCESS,
            bookmark_manager=self.driver.execute_query_bookmark_manager,
        )

    def read_tx(self, fn: Callable[[ManagedTransaction], T], what: str) -> T:
        try:
            with self.session(read=True) as session:
                return session.execute_read(fn)
        except (DriverError, Neo4jError) as exc:
            raise self.error(what, exc) from exc

    def write_tx(self, fn: Callable[[ManagedTransaction], T], what: str) -> T:
        """One managed write transaction, serialised with the other writers (lock node).

        A server that locks optimistically (ArcadeDB) lets two writers run at once and fails
        the second at commit: a retryable conflict, which the driver re-runs, except when both
        created the same unique key (one episode, one new entity), which it reports as a
        ``ConstraintError``. That is the same lost race, so it is re-run too (the units of work
        are pure and see the other writer's rows on the next run), a few times: a constraint
        error that persists is real and raised.
        """

        def locked(tx: ManagedTransaction) -> T:
            (lock,) = run(tx, "meta/lock", at=to_ms(self._clock()))
            # The lock's counter is the commit sequence (writers are serialised on it); the
            # unit of work reads it from here (self.lock is held for the whole transaction).
            self.write_seq = int(lock["n"])
            return fn(tx)

        deadline = time.monotonic() + self.config.max_retry_time
        with self.lock:
            for attempt in range(_CONSTRAINT_RETRIES + 1):
                try:
                    with self.session() as session:
                        return session.execute_write(locked)
                except ConstraintError as exc:
                    pause = 0.05 * 2**attempt * (0.5 + random.random())
                    if attempt == _CONSTRAINT_RETRIES or time.monotonic() + pause > deadline:
                        raise self.error(what, exc) from exc
                    time.sleep(pause)
                except (DriverError, Neo4jError) as exc:
                    raise self.error(what, exc) from exc
        raise AssertionError("unreachable")

    def schema(self, name: str, params: dict[str, Any]) -> None:
        """Each statement of a schema file in its own transaction (DDL cannot share one)."""
        for statement in statements(name):
            try:
                self.driver.execute_query(
                    statement, parameters_=params, database_=self.config.database
                )
            except (DriverError, Neo4jError) as exc:
                raise self.error(f"schema change {name}", exc) from exc

    def seq(self, n: int) -> int:
        """The first of ``n`` increasing sequence numbers (insertion order, like a rowid)."""
        with self._seq_lock:
            base = max(self._seq_last + 1, time.time_ns() // 1000)
            self._seq_last = base + max(n, 1) - 1
            return base
