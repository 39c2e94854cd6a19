"""Full-text search in the SQLite store: BM25 over FTS5 inside one group, with a plan that
bounds what a query of common words costs in a large group."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..._text import fts_words
from .rows import qmarks

if TYPE_CHECKING:
    from .db import SQLiteDB

__all__ = ["TextIndex"]

_FTS_COLUMN = {"facts": "statement", "entities": "search_text", "episodes": "content"}


def _group_token(group_id: str) -> str:
    """The full-text token of a group (migration 4's ``fts_group``: 'g' + hex + '0')."""
    return "g" + group_id.encode("utf-8").hex() + "0"


class TextIndex:
    def __init__(self, db: SQLiteDB, postings: Callable[[], int]) -> None:
        self._db = db
        self._postings = postings  # matching rows one query may rank, read at each query
        self._counts: dict[str, tuple[tuple[int, tuple[str, int]], int]] = {}
        self._frequencies: dict[tuple[str, str], tuple[int, int]] = {}  # (rows then, frequency)
        self._group_counts: dict[tuple[str, str], tuple[tuple[int, int], int]] = {}

    def term_plan(self, table: str, group_id: str, words: list[str]) -> tuple[list[str], int]:
        """(words to query, rowid floor) for a full-text query inside one group.

        Ranking costs about a microsecond per matching row, so a query costs the sum of its
        words' postings in the group; a very common word costs most and, with its low IDF,
        weighs least. A group of at most ``postings`` rows keeps every word. In a larger one a
        word's postings are estimated from its store-wide document frequency scaled by the
        group's share of the rows, and words are kept rarest first while they fit
        ``postings``; the rarest is always kept, and a floor above 0 limits it to the group's
        newest rows, about ``postings`` matches. Porter stems are found as the longest
        vocabulary entry that is a prefix of the word."""
        postings = self._postings()
        rows = self._group_rows(table, group_id)
        if rows <= postings or not words:
            return words, 0
        total = self._row_count(table)
        share = rows / max(total, rows, 1)
        # Document frequencies, remembered until the table grows (or another connection writes).
        cache = self._frequencies
        if len(cache) > 50_000:
            cache.clear()
        frequency: dict[str, float] = {}
        for word in words:
            held = cache.get((table, word))
            if held is None or held[0] != total:
                prefixes = [word[:n] for n in range(len(word), 2, -1)] or [word]
                found = self._db.execute(
                    f"SELECT term, doc FROM temp.{table}_vocab "
                    f"WHERE term IN ({qmarks(len(prefixes))})",
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
            if keep and spent + frequency[word] > postings:
                break
            keep.add(word)
            spent += frequency[word]
        floor = 0
        if spent > postings:  # only the rarest word, and it is common: the newest rows only
            newest = int(rows * postings / spent)
            row = self._db.execute(
                f"SELECT rowid FROM {table} INDEXED BY {table}_group WHERE group_id = ? "
                "ORDER BY rowid DESC LIMIT 1 OFFSET ?",
                (group_id, newest),
            ).fetchone()
            floor = int(row[0]) if row is not None else 0
        return [w for w in words if w in keep], floor

    def _row_count(self, table: str) -> int:
        version = self._db.data_version()
        key = (table, self._db.write_count)
        cached = self._counts.get(table)
        if cached is None or cached[0] != (version, key):
            count = int(self._db.execute(f"SELECT max(rowid) FROM {table}").fetchone()[0] or 0)
            self._counts[table] = ((version, key), count)
            return count
        return cached[1]

    def _group_rows(self, table: str, group_id: str) -> int:
        """The group's row count (its index only), remembered until the next write."""
        seen = (self._db.data_version(), self._db.write_count)
        cache = self._group_counts
        held = cache.get((table, group_id))
        if held is not None and held[0] == seen:
            return held[1]
        if len(cache) > 10_000:
            cache.clear()
        (count,) = self._db.execute(
            f"SELECT count(*) FROM {table} INDEXED BY {table}_group WHERE group_id = ?",
            (group_id,),
        ).fetchone()
        cache[(table, group_id)] = (seen, int(count))
        return int(count)

    def search(self, table: str, group_id: str, query: str, n: int) -> list[tuple[str, float]]:
        """BM25 top ``n`` of the group's rows. The group's token is ANDed into the match, so
        the index returns only the group's rows and ranks only those (the token's own column
        weighs 0)."""
        words = fts_words(query)
        if not words:
            return []
        column = _FTS_COLUMN[table]
        token = _group_token(group_id)
        with self._db.lock:
            words, floor = self.term_plan(table, group_id, words)
            terms = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
            match = f'fts_group : "{token}" AND {column} : ({terms})'
            rows = self._db.execute(
                f"SELECT t.id, -bm25({table}_fts, 1.0, 0.0) FROM {table}_fts "
                f"JOIN {table} t ON t.rowid = {table}_fts.rowid "
                f"WHERE {table}_fts MATCH ? AND {table}_fts.rowid > ? AND t.group_id = ? "
                f"ORDER BY bm25({table}_fts, 1.0, 0.0) LIMIT ?",
                (match, floor, group_id, n),
            ).fetchall()
        return [(r[0], float(r[1])) for r in rows]
