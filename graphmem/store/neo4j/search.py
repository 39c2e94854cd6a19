"""Group-scoped search for the Neo4j store: every full-text and vector search keeps to one group
inside the index, so its cost follows the group searched, not the other groups in the store.

Full text (every Bolt server): each Episode, Fact and Entity node carries ``group_token``, a
decimal number derived from its ``group_id`` (digits only, so every Lucene analyzer keeps it as
one unchanged token), and since migration 6 each full-text index holds that token beside the
text. A search requires the group's token with zero weight::

    +group_token:"1234…"^0 +(statement:"bob" OR statement:"work")

so the index itself returns (and ranks) only the group's rows: the group's best ``n`` in one
query, however many better matches other groups hold. ``group_id`` is still compared after the
index (a guard against a 64-bit token collision only).

Vectors, by group size:

- up to ``SCAN_MAX`` embedded rows (any server): an exact cosine scan of the group's rows, read
  through the group_id range index (``search/vector_scan_*``): no other group's row is read,
  and the answer is the SQLite store's exact top ``n``;
- a larger group, Neo4j 2026.01+: ``SEARCH … WHERE n.group_id = $group_id`` over a vector
  index that holds ``group_id`` as a filter property (Cypher 25, ``search/vector_by_group_*``):
  filtered inside the index;
- a larger group elsewhere (Neo4j 5 / 2025, ArcadeDB: their vector indexes cannot filter): the
  whole-store index, asked for more and more candidates until ``n`` are in the group
  (``search/vector``); cost then grows with the rows of other groups nearer to the query.

A group found too large to scan is remembered (per store instance), so it costs one capped scan.
"""

from __future__ import annotations

import functools
import hashlib
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from neo4j import ManagedTransaction, Record

from ..._text import fts_words
from .cypher import query
from .dialect import GROUP_TOKEN, TEXT_FIELDS, Dialect

__all__ = [
    "MAX_CANDIDATES",
    "SCAN_MAX",
    "GroupSearch",
    "backfill_group_tokens",
    "filtered_candidates",
    "group_lucene_query",
    "group_token",
    "lucene_query",
    "lucene_terms",
]

SCAN_MAX = 5_000  # most embedded rows of one group scored exactly per vector search
MAX_CANDIDATES = 10_000  # most hits asked of an unfiltered vector index for one large group
_CHUNK = 1000
# Candidates a filtered vector search (Neo4j 2026.01+) asks of the index for the best n: the
# index's graph search explores about as many nodes as it is asked for, and asked for n alone
# it missed half of the true top 10 on clustered vectors (bench/filtered_vectors.py).
FILTERED_FACTOR = 4
FILTERED_MIN = 64
_LUCENE_SPECIAL = set('+-&|!(){}[]^"~*?:\\/')
_SCAN = {
    "fact_embedding": "search/vector_scan_facts",
    "entity_embedding": "search/vector_scan_entities",
    "episode_embedding": "search/vector_scan_episodes",
}
_BY_GROUP = {
    "fact_embedding": "search/vector_by_group_facts",
    "entity_embedding": "search/vector_by_group_entities",
    "episode_embedding": "search/vector_by_group_episodes",
}
_TOKEN_SET = {
    "episodes": "episodes/group_token_set",
    "facts": "facts/group_token_set",
    "entities": "entities/group_token_set",
}

# The store's named read query: name, then parameters.
ReadFn = Callable[..., list[Record]]


@functools.lru_cache(maxsize=65536)
def group_token(group_id: str) -> str:
    """The full-text token of a group: 64 bits of SHA-256 of its id, in decimal (a number is
    one token that no analyzer stems, stops or splits)."""
    digest = hashlib.sha256(group_id.encode("utf-8")).digest()
    return str(int.from_bytes(digest[:8], "big"))


def lucene_terms(text: str) -> list[str]:
    """The text's words (the SQLite store's selection: stop words dropped), each quoted and
    escaped, so no query syntax from the user's text reaches the parser."""
    return [
        '"' + "".join("\\" + ch if ch in _LUCENE_SPECIAL else ch for ch in w) + '"'
        for w in fts_words(text)
    ]


def lucene_query(text: str) -> str | None:
    """A Lucene OR-query of the text's words (any field of the index)."""
    terms = lucene_terms(text)
    return " OR ".join(terms) if terms else None


def group_lucene_query(text: str, group_id: str, fields: Sequence[str]) -> str | None:
    """The text's words in ``fields``, required to be in the group (zero-weight clause on its
    token, so scores are the words' alone)."""
    terms = lucene_terms(text)
    if not terms:
        return None
    words = " OR ".join(f"{field}:{term}" for term in terms for field in fields)
    return f'+{GROUP_TOKEN}:"{group_token(group_id)}"^0 +({words})'


def filtered_candidates(n: int) -> int:
    """How many nearest rows of the group a filtered vector search asks the index for."""
    return min(max(FILTERED_FACTOR * n, FILTERED_MIN, n), MAX_CANDIDATES)


class GroupSearch:
    """The store's full-text and vector searches, one group at a time (see the module doc)."""

    def __init__(self, read: ReadFn) -> None:
        self._read = read
        self._lock = threading.Lock()
        self._large: set[tuple[str, str]] = set()  # (role, group) with more than SCAN_MAX rows

    def forget(self) -> None:
        with self._lock:
            self._large.clear()

    def text(
        self, dialect: Dialect, role: str, group_id: str, text: str, n: int
    ) -> list[tuple[str, float]]:
        lucene = group_lucene_query(text, group_id, TEXT_FIELDS[role])
        if n <= 0 or lucene is None:
            return []
        rows = self._read(
            "search/fulltext",
            index=dialect.index_name(role),
            query=lucene,
            group_id=group_id,
            limit=int(n),
        )
        # A hit that no word scored matched the group clause alone: on Neo4j an analyzer that
        # drops every word (all stop words) leaves only that clause, which matches every row.
        return [(str(r["id"]), float(r["score"])) for r in rows if float(r["score"]) > 0]

    def vector(
        self, dialect: Dialect, role: str, group_id: str, vector: list[float], n: int
    ) -> list[tuple[str, float]]:
        """The group's ``n`` rows nearest to ``vector``, best first, scored by cosine."""
        if n <= 0:
            return []
        key = (role, group_id)
        with self._lock:
            large = key in self._large
        if not large:
            rows = self._read(
                _SCAN[role],
                group_id=group_id,
                vector=vector,
                limit=int(n),
                scan_limit=SCAN_MAX,
            )
            scanned = int(rows[0]["scanned"]) if rows else 0
            if scanned < SCAN_MAX:
                hits = [(str(h[0]), float(h[1])) for h in (rows[0]["hits"] if rows else [])]
                if dialect.raw_cosine:  # vector.similarity.cosine: ArcadeDB
                    return hits
                return [(node_id, 2.0 * score - 1.0) for node_id, score in hits]  # Neo4j
            with self._lock:
                self._large.add(key)
        if dialect.filtered_vectors:
            found = [
                (str(r["id"]), float(r["score"]))
                for r in self._read(
                    _BY_GROUP[role],
                    group_id=group_id,
                    vector=vector,
                    candidates=filtered_candidates(n),
                    limit=n,
                )
            ]
        else:
            found = self._widening(dialect.index_name(role), group_id, n, vector)
        # The vector indexes score (1 + cos) / 2 (Neo4j and ArcadeDB alike): report cosine.
        return [(node_id, 2.0 * score - 1.0) for node_id, score in found]

    def _widening(
        self, index: str, group_id: str, n: int, vector: list[float]
    ) -> list[tuple[str, float]]:
        """Top ``n`` of one group from an index that cannot filter: ask for more candidates
        until ``n`` are in the group or the index has no more (or MAX_CANDIDATES)."""
        candidates = min(max(4 * n, 64), MAX_CANDIDATES)
        while True:
            rows = self._read(
                "search/vector",
                index=index,
                candidates=candidates,
                group_id=group_id,
                limit=n,
                vector=vector,
            )
            got = int(rows[0]["candidates"]) if rows else 0
            hits = list(rows[0]["hits"]) if rows else []
            if len(hits) >= n or got < candidates or candidates >= MAX_CANDIDATES:
                return [(str(h[0]), float(h[1])) for h in hits[:n]]
            candidates = min(candidates * 8, MAX_CANDIDATES)


def backfill_group_tokens(
    stream: Callable[[str], Iterator[Record]],
    write: Callable[[Callable[[ManagedTransaction], Any], str], Any],
) -> int:
    """Migration 6, first step: write ``group_token`` on the nodes stored before nodes carried
    one (idempotent: only nodes without one are read; the token is a pure function of the
    group id). Returns how many nodes were written."""
    todo: dict[str, list[dict[str, str]]] = {kind: [] for kind in _TOKEN_SET}
    for r in stream("schema/group_token_missing"):
        if r["group_id"] is not None:
            todo[str(r["kind"])].append(
                {"id": str(r["id"]), "token": group_token(str(r["group_id"]))}
            )

    def work(tx: ManagedTransaction, name: str, rows: list[dict[str, str]]) -> None:
        tx.run(query(name), {"rows": rows}).consume()

    total = 0
    for kind, rows in todo.items():
        for start in range(0, len(rows), _CHUNK):
            chunk = rows[start : start + _CHUNK]
            write(functools.partial(work, name=_TOKEN_SET[kind], rows=chunk), "group tokens")
            total += len(chunk)
    return total
