"""The one place where the Neo4j store branches on the Bolt server it talks to.

``Neo4jStore.connect()`` reads the server agent (``driver.get_server_info().agent``) and picks a
dialect here; nothing else in the store looks at the server. What differs (measured, see
docs/dev/bolt-test-server.md):

- Neo4j 5: vector and full-text indexes are Cypher DDL (``cypher/schema/*.cypher``),
  named ``graphmem_fact_embedding`` etc.; new indexes are awaited with ``db.awaitIndexes``;
  ``vector.similarity.cosine`` scores ``(1 + cos) / 2``.
- Neo4j 2026.01 and later: vector indexes also hold ``group_id`` as a filter property
  (``WITH [n.group_id]``, Cypher 25) and a large group is searched with ``SEARCH … WHERE
  n.group_id = $group_id`` (filtered inside the index); their names end in ``_by_group``.
- ArcadeDB ("Neo4j/5.26.0 compatible (ArcadeDB …)"): Cypher refuses ``CREATE VECTOR INDEX``
  and ``CREATE FULLTEXT INDEX``, so those are ArcadeDB SQL sent over its HTTP API (stdlib
  ``urllib``, same credentials and database); the query procedures name indexes
  ``'Label[prop]'`` / ``'Label[p1,p2]'``; ``db.awaitIndexes`` does not exist (indexes are usable
  as soon as the DDL returns); ``vector.similarity.cosine`` is the raw cosine in [-1, 1]; the
  vector index cannot filter (a large group's vectors are searched in the whole index and
  filtered after).

Range indexes, composite ones included (migrations 2, 4 and 7), are the same Cypher DDL on both
servers: ArcadeDB keeps the Cypher name (``DROP INDEX name IF EXISTS`` works) and seeks a
composite index when a ``MATCH`` names all of its properties in the inline property map.
"""

from __future__ import annotations

import base64
import json
import os
import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..._errors import SchemaError, StoreError

__all__ = [
    "GROUP_TOKEN",
    "TEXT_FIELDS",
    "ArcadeDBDialect",
    "Dialect",
    "Neo4jDialect",
    "neo4j_version",
    "select_dialect",
]

# What the search methods ask for, by role: (vector index of Fact, of Entity, of Episode;
# full-text index of Fact statements, of Entity names + alias text, of Episode content).
ROLES = (
    "fact_embedding",
    "entity_embedding",
    "episode_embedding",
    "fact_text",
    "entity_text",
    "episode_text",
)
# The text properties each full-text role searches; since migration 6 every full-text index also
# holds the node's group token (GROUP_TOKEN), which a search requires.
TEXT_FIELDS: dict[str, tuple[str, ...]] = {
    "fact_text": ("statement",),
    "entity_text": ("name", "alias_text"),
    "episode_text": ("content",),
}
GROUP_TOKEN = "group_token"
# The first Neo4j release with vector search filtered inside the index (SEARCH, Cypher 25).
FILTERED_VECTORS_SINCE = (2026, 1)
# The first Neo4j release that filters notifications for the driver (Bolt 5.2).
NOTIFICATION_FILTERS_SINCE = (5, 7)

# Runs one named Cypher file's statements (the store's auto-commit schema runner).
CypherRunner = Callable[[str, dict[str, Any]], None]
# Runs one named read query and returns its records (the store's routed read).
CypherReader = Callable[[str], Sequence[Mapping[str, Any]]]


@dataclass(frozen=True)
class Dialect:
    """Neo4j 5 behaviour; subclasses override only what their server does differently."""

    name: str = "neo4j"
    # vector.similarity.cosine gives the raw cosine (True) or (1 + cos) / 2 like Neo4j (False).
    raw_cosine: bool = False
    # Vector indexes filter by group inside the index (SEARCH ... WHERE; Neo4j 2026.01+).
    filtered_vectors: bool = False
    # Notification classifications the server is asked to leave out (it filters them: Neo4j
    # 5.7+, Bolt 5.2+): warnings about labels and relationship types no node holds yet.
    muted_notifications: tuple[str, ...] = ()

    def index_name(self, role: str) -> str:
        suffix = "_by_group" if self.filtered_vectors else ""
        return {
            "fact_embedding": "graphmem_fact_embedding" + suffix,
            "entity_embedding": "graphmem_entity_embedding" + suffix,
            "episode_embedding": "graphmem_episode_embedding" + suffix,
            "fact_text": "graphmem_fact_statement_group",
            "entity_text": "graphmem_entity_names_group",
            "episode_text": "graphmem_episode_content_group",
        }[role]

    def fulltext_indexes(self, run_cypher: CypherRunner) -> None:
        """Migration 3: the first full-text indexes (text only; migration 6 replaces them)."""
        run_cypher("schema/003_fulltext_indexes", {})

    def group_fulltext_indexes(self, run_cypher: CypherRunner) -> None:
        """Migration 6: full-text indexes holding the group token beside the text (the nodes'
        tokens are written first), and the text-only ones of migration 3 dropped."""
        run_cypher("schema/006_group_fulltext_indexes", {})

    def vector_indexes(self, run_cypher: CypherRunner, dim: int) -> None:
        """Cosine vector indexes on Fact, Entity and Episode embeddings (IF NOT EXISTS); with
        group_id as a filter property where the server has it (then the unfiltered ones of an
        older server are dropped)."""
        if self.filtered_vectors:
            run_cypher("schema/vector_indexes_by_group", {"dimensions": int(dim)})
            run_cypher("schema/drop_vector_indexes", {})
        else:
            run_cypher("schema/vector_indexes", {"dimensions": int(dim)})

    def vector_index_dims(self, read: CypherReader) -> dict[str, int]:
        """The size of each graphmem vector index the server holds, by index name."""
        return {
            str(r["name"]): int(r["dimensions"])
            for r in read("schema/vector_index_dims")
            if r["dimensions"] is not None
        }

    def drop_vector_indexes(self, run_cypher: CypherRunner) -> None:
        run_cypher("schema/drop_vector_indexes", {})
        if self.filtered_vectors:
            run_cypher("schema/drop_vector_indexes_by_group", {})

    def await_indexes(self, run_cypher: CypherRunner, timeout_s: int = 300) -> None:
        run_cypher("schema/await_indexes", {"timeout_s": int(timeout_s)})


@dataclass(frozen=True)
class Neo4jDialect(Dialect):
    name: str = "neo4j"
    version: tuple[int, int] = (5, 0)


def neo4j_version(agent: str) -> tuple[int, int]:
    """``Neo4j/5.26.0`` -> (5, 26), ``Neo4j/2026.01.1`` -> (2026, 1); (5, 0) when unreadable."""
    found = re.search(r"Neo4j/(\d+)\.(\d+)", agent)
    return (int(found.group(1)), int(found.group(2))) if found else (5, 0)


@dataclass(frozen=True)
class ArcadeDBDialect(Dialect):
    """ArcadeDB's Bolt plugin: index DDL in ArcadeDB SQL over HTTP, ``Label[prop]`` names."""

    name: str = "arcadedb"
    raw_cosine: bool = True
    http_url: str = "http://127.0.0.1:2480"
    user: str = "root"
    password: str = ""
    database: str = "neo4j"
    timeout_s: float = 60.0

    def index_name(self, role: str) -> str:
        return {
            "fact_embedding": "Fact[embedding]",
            "entity_embedding": "Entity[embedding]",
            "episode_embedding": "Episode[embedding]",
            "fact_text": "Fact[statement,group_token]",
            "entity_text": "Entity[name,alias_text,group_token]",
            "episode_text": "Episode[content,group_token]",
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

    def group_fulltext_indexes(self, run_cypher: CypherRunner) -> None:
        # The token is a STRING property with no other index (an LSM index on it would block
        # the FULL_TEXT one); the new index indexes the rows already there. The analyzers are
        # Neo4j's (schema/006_group_fulltext_indexes): statements and episodes are stemmed
        # (Lucene's EnglishAnalyzer), names are not (StandardAnalyzer: no stop words).
        english = " METADATA {analyzer: 'org.apache.lucene.analysis.en.EnglishAnalyzer'}"
        for label, fields, options in (
            ("Fact", "statement", english),
            ("Entity", "name, alias_text", ""),
            ("Episode", "content", english),
        ):
            self.sql(f"CREATE PROPERTY {label}.{GROUP_TOKEN} IF NOT EXISTS STRING")
            self.sql(
                f"CREATE INDEX IF NOT EXISTS ON {label} ({fields}, {GROUP_TOKEN}) FULL_TEXT"
                + options
            )
            old = fields.replace(" ", "")
            self.sql(f"DROP INDEX `{label}[{old}]` IF EXISTS")

    def vector_indexes(self, run_cypher: CypherRunner, dim: int) -> None:
        dim = int(dim)  # an int from the embedder record, never text from data
        if dim <= 0:
            raise SchemaError(f"vector dimension must be positive, got {dim}")
        for label in ("Fact", "Entity", "Episode"):
            self.sql(f"CREATE VERTEX TYPE {label} IF NOT EXISTS")
            self.sql(f"CREATE PROPERTY {label}.embedding IF NOT EXISTS ARRAY_OF_FLOATS")
            self.sql(
                f"CREATE INDEX IF NOT EXISTS ON {label} (embedding) LSM_VECTOR "
                f"METADATA {{dimensions: {dim}, similarity: 'COSINE'}}"
            )

    def vector_index_dims(self, read: CypherReader) -> dict[str, int]:
        return {}  # not read back: the store rebuilds the indexes whenever it may

    def drop_vector_indexes(self, run_cypher: CypherRunner) -> None:
        for label in ("Fact", "Entity", "Episode"):
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
    """The dialect for a server agent string such as ``Neo4j/5.26.0``, ``Neo4j/2026.01.0`` or
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
    version = neo4j_version(agent)
    return Neo4jDialect(
        version=version,
        filtered_vectors=version >= FILTERED_VECTORS_SINCE,
        muted_notifications=("UNRECOGNIZED",) if version >= NOTIFICATION_FILTERS_SINCE else (),
    )
