"""The embedded default store: one SQLite file, WAL mode, FTS5, compact vectors, one module per
concern (connection, schema, reads, writes, full text, vectors, filters, upkeep)."""

from __future__ import annotations

from .store import SQLiteStore

__all__ = ["SQLiteStore"]
