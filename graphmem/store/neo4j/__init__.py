"""The Neo4j store: the ``GraphStore`` protocol over Bolt with the official ``neo4j`` driver, one
module per concern (runner, schema, reads, writes, search, rows) over the queries in ``cypher/``."""

from __future__ import annotations

import importlib as _importlib
import typing as _typing

if _typing.TYPE_CHECKING:
    from ._async import AsyncNeo4jStore
    from .store import MIGRATIONS, Neo4jStore, browser_instructions, lucene_query

# Loaded on first use, so that importing one of this folder's parts (or graphmem.extract) does
# not import the third-party client the main module needs.
__all__ = ["MIGRATIONS", "AsyncNeo4jStore", "Neo4jStore", "browser_instructions", "lucene_query"]


def __getattr__(name: str) -> _typing.Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    home = "._async" if name == "AsyncNeo4jStore" else ".store"
    value = getattr(_importlib.import_module(home, __name__), name)
    globals()[name] = value
    return value
