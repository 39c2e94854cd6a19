"""The one place where the Neo4j store branches on the Bolt server it talks to.

``Neo4jStore.connect()`` reads the server agent (``driver.get_server_info().agent``) and picks a
dialect here; nothing else in the store looks at the server. What differs (measured, see
docs/dev/bolt-test-server.md):

- Neo4j 5: vector and full-text indexes are Cypher DDL (``graphmem/cypher/schema/*.cypher``),
  named ``graphmem_fact_embedding`` etc.; new indexes are awaited with ``db.awaitIndexes``.
- ArcadeDB ("Neo4j/5.26.0 compatible (ArcadeDB …)"): Cypher refuses ``CREATE VECTOR INDEX``
  and ``CREATE FULLTEXT INDEX``, so those are ArcadeDB SQL sent over its HTTP API (stdlib
  ``urllib``, same credentials and database); the query procedures name indexes
  ``'Label[prop]'`` / ``'Label[p1,p2]'``; ``db.awaitIndexes`` does not exist (indexes are usable
  as soon as the DDL returns).
"""

from __future__ import annotations

import base64
import json
import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .._errors import SchemaError, StoreError

__all__ = ["ArcadeDBDialect", "Dialect", "Neo4jDialect", "select_dialect"]

# What the search methods ask for, by role: (vector index of Fact, of Entity; full-text index
# of Fact statements, of Entity names + alias text, of Episode content).
ROLES = ("fact_embedding", "entity_embedding", "fact_text", "entity_text", "episode_text")

# Runs one named Cypher file's statements (the store's auto-commit schema runner).
CypherRunner = Callable[[str, dict[str, Any]], None]


@dataclass(frozen=True)
class Dialect:
    """Neo4j 5 behaviour; subclasses override only what their server does differently."""

    name: str = "neo4j"

    def index_name(self, role: str) -> str:
        return {
            "fact_embedding": "graphmem_fact_embedding",
            "entity_embedding": "graphmem_entity_embedding",
            "fact_text": "graphmem_fact_statement",
            "entity_text": "graphmem_entity_names",
            "episode_text": "graphmem_episode_content",
        }[role]

    def fulltext_indexes(self, run_cypher: CypherRunner) -> None:
        """Migration 3: the full-text indexes."""
        run_cypher("schema/003_fulltext_indexes", {})

    def vector_indexes(self, run_cypher: CypherRunner, dim: int) -> None:
        """Cosine vector indexes on Fact.embedding and Entity.embedding (IF NOT EXISTS)."""
        run_cypher("schema/vector_indexes", {"dimensions": int(dim)})

    def drop_vector_indexes(self, run_cypher: CypherRunner) -> None:
        run_cypher("schema/drop_vector_indexes", {})

    def await_indexes(self, run_cypher: CypherRunner, timeout_s: int = 300) -> None:
        run_cypher("schema/await_indexes", {"timeout_s": int(timeout_s)})


@dataclass(frozen=True)
class Neo4jDialect(Dialect):
    name: str = "neo4j"


@dataclass(frozen=True)
class ArcadeDBDialect(Dialect):
    """ArcadeDB's Bolt plugin: index DDL in ArcadeDB SQL over HTTP, ``Label[prop]`` names."""

    name: str = "arcadedb"
    http_url: str = "http://127.0.0.1:2480"
    user: str = "root"
    password: str = ""
    database: str = "neo4j"
    timeout_s: float = 60.0

    def index_name(self, role: str) -> str:
        return {
            "fact_embedding": "Fact[embedding]",
            "entity_embedding": "Entity[embedding]",
            "fact_text": "Fact[statement]",
            "entity_text": "Entity[name,alias_text]",
            "episode_text": "Episode[content]",
        }[role]

    def fulltext_indexes(self, run_cypher: CypherRunner) -> None:
        # The type and the STRING property must exist before the index; every command is
        # idempotent (IF NOT EXISTS). Aliases are a LIST (not indexable for full text), so the
        # store also writes them joined into the STRING property alias_text.
        for command in (
            "CREATE VERTEX TYPE Fact IF NOT EXISTS",
            "CREATE PROPERTY Fact.statement IF NOT EXISTS STRING",
            "CREATE INDEX IF NOT EXISTS ON Fact (statement) FULL_TEXT",
            "CREATE VERTEX TYPE Entity IF NOT EXISTS",
            "CREATE PROPERTY Entity.name IF NOT EXISTS STRING",
            "CREATE PROPERTY Entity.alias_text IF NOT EXISTS STRING",
            "CREATE INDEX IF NOT EXISTS ON Entity (name, alias_text) FULL_TEXT",
            "CREATE VERTEX TYPE Episode IF NOT EXISTS",
            "CREATE PROPERTY Episode.content IF NOT EXISTS STRING",
            "CREATE INDEX IF NOT EXISTS ON Episode (content) FULL_TEXT",
        ):
            self.sql(command)

    def vector_indexes(self, run_cypher: CypherRunner, dim: int) -> None:
        dim = int(dim)  # an int from the embedder record, never text from data
        if dim <= 0:
            raise SchemaError(f"vector dimension must be positive, got {dim}")
        for label in ("Fact", "Entity"):
            self.sql(f"CREATE VERTEX TYPE {label} IF NOT EXISTS")
            self.sql(f"CREATE PROPERTY {label}.embedding IF NOT EXISTS ARRAY_OF_FLOATS")
            self.sql(
                f"CREATE INDEX IF NOT EXISTS ON {label} (embedding) LSM_VECTOR "
                f"METADATA {{dimensions: {dim}, similarity: 'COSINE'}}"
            )

    def drop_vector_indexes(self, run_cypher: CypherRunner) -> None:
        for label in ("Fact", "Entity"):
            self.sql(f"DROP INDEX `{label}[embedding]` IF EXISTS")

    def await_indexes(self, run_cypher: CypherRunner, timeout_s: int = 300) -> None:
        return None  # no db.awaitIndexes; ArcadeDB indexes are online when the DDL returns

    def sql(self, command: str) -> list[Any]:
        """One ArcadeDB SQL command over HTTP (``POST /api/v1/command/<db>``)."""
        url = (
            f"{self.http_url.rstrip('/')}/api/v1/command/"
            f"{urllib.parse.quote(self.database, safe='')}"
        )
        token = base64.b64encode(f"{self.user}:{self.password}".encode()).decode("ascii")
        request = urllib.request.Request(
            url,
            data=json.dumps({"language": "sql", "command": command}).encode("utf-8"),
            method="POST",
            headers={
                "Content-Type": "application/json",
                "Accept": "application/json",
                "Authorization": f"Basic {token}",
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                body = response.read()
        except urllib.error.HTTPError as exc:
            raw = exc.read().decode("utf-8", errors="replace")
            try:
                detail = json.loads(raw)
                message = detail.get("detail") or detail.get("error") or raw
            except ValueError:
                message = raw or str(exc.reason)
            raise SchemaError(
                f"ArcadeDB refused schema command {command!r} (HTTP {exc.code}): {message}"
            ) from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise StoreError(
                f"ArcadeDB's HTTP API is unreachable at {self.http_url} ({reason}); the store "
                "needs it for index DDL: set GRAPHMEM_ARCADEDB_HTTP=http://host:2480"
            ) from None
        try:
            data = json.loads(body)
        except ValueError:
            raise SchemaError(
                f"ArcadeDB returned non-JSON for {command!r}: {body[:200]!r}"
            ) from None
        if isinstance(data, dict) and "error" in data:
            raise SchemaError(f"ArcadeDB refused schema command {command!r}: {data['error']}")
        return list(data.get("result", [])) if isinstance(data, dict) else []


def _default_http(bolt_host: str | None) -> str:
    return f"http://{bolt_host or '127.0.0.1'}:2480"


def select_dialect(
    agent: str,
    *,
    bolt_host: str | None,
    user: str,
    password: str,
    database: str | None,
    http_url: str | None = None,
) -> Dialect:
    """The dialect for a server agent string such as ``Neo4j/5.26.0`` or
    ``Neo4j/5.26.0 compatible (ArcadeDB 26.10.2)``."""
    if "arcadedb" in agent.lower():
        url = (
            http_url
            or os.environ.get("GRAPHMEM_ARCADEDB_HTTP")
            or os.environ.get("GRAPHMEM_TEST_BOLT_HTTP")
            or _default_http(bolt_host)
        )
        return ArcadeDBDialect(
            http_url=url, user=user, password=password, database=database or "neo4j"
        )
    return Neo4jDialect()
