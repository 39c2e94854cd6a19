"""The full-text vocabularies of a SQLite connection: made when a connection opens and again
after a migration adds a full-text table (the schema and the connection both need them)."""

from __future__ import annotations

import sqlite3

__all__ = ["create_vocab_tables"]


def create_vocab_tables(conn: sqlite3.Connection) -> None:
    """The full-text vocabularies (``temp.<table>_vocab``) whose document frequencies
    the text search's term plan reads: temporary tables, so made again on each connection."""
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    for table in ("facts", "entities", "episodes"):
        if f"{table}_fts" in tables:
            conn.execute(
                f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{table}_vocab "
                f"USING fts5vocab(main, '{table}_fts', 'row')"
            )
