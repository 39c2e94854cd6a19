"""Currentness in recall: what the UPDATES links between turns do to the order of the returned
episodes.

- A question about the present ("what is my budget?") gets the newest of a chain first: a turn
  in the first ``top`` places that updates one ranked above it moves to just above it. (Bringing
  in an update the search had missed cost BEAM 100K 0.02–0.09 NDCG@10 for +0.03 in the
  updated-first rate: too many links are about something near, not the same, so it is not done.)
- A question about change, order or conflict ("what was it originally?", "how has it changed?",
  "which is right?") gets both sides: a linked turn missing from the top comes in beside the one
  found, older first.

A link counts for a query only when the query names at least ``MIN_QUERY_TERMS`` of the words the
link is about (its terms), so that a chain about something else leaves the order alone (one word
was enough for a third more reorders and cost BEAM 100K 0.02 NDCG@10); and only between turns in
the first ``top`` places, so that a weak hit cannot pull a turn up.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .._text import STOP_WORDS
from ..reconcile.turn_links import stem
from ..store._links import EpisodeLinkRow

__all__ = [
    "MIN_QUERY_TERMS",
    "asks_about_change",
    "asks_about_the_past",
    "order_by_currentness",
    "outdated_turns",
    "stated_only_by",
]

MIN_QUERY_TERMS = 2

# Words that ask about a change, an earlier state or a conflict, not about the present.
# Adverbs, not adjectives: "the initial filing fees" asks about the present value of a thing.
_CHANGE = re.compile(
    r"\b(?:chang(?:e|ed|es|ing)|originally|initially|previously|before|earlier|used to|"
    r"at first|conflict\w*|contradict\w*|inconsisten\w*|no longer|anymore|any more|"
    r"over time|which (?:one |value )?(?:is|was) (?:right|correct))\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"[^\W\d_][\w'’-]*", re.UNICODE)


# A question in the past tense asks what was said or true then ("what did I say my budget
# was?"), not what is true now: no newer turn is put above it.
_PAST = re.compile(r"\b(?:did|was|were|had)\b", re.IGNORECASE)


def asks_about_change(query: str) -> bool:
    return _CHANGE.search(query) is not None


def asks_about_the_past(query: str) -> bool:
    return _PAST.search(query) is not None


def _query_stems(query: str) -> set[str]:
    return {stem(w) for w in _WORD.findall(query) if w.lower() not in STOP_WORDS}


def order_by_currentness(
    ranked: Sequence[str],
    links: Sequence[EpisodeLinkRow],
    query: str,
    *,
    top: int,
    concerning: Sequence[EpisodeLinkRow] = (),
) -> list[str]:
    """``ranked`` (episode ids, best first) reordered by the links that concern ``query``
    (those in ``concerning`` are known to, e.g. drawn from a fact the query found)."""
    wanted = _query_stems(query)
    known = set(concerning)
    relevant = [
        lk for lk in links if lk in known or len(wanted & set(lk.terms)) >= MIN_QUERY_TERMS
    ]
    if not relevant:
        return list(ranked)
    if asks_about_change(query):
        return _both_sides(list(ranked), relevant, top)
    if asks_about_the_past(query):
        return list(ranked)
    return _newest_first(list(ranked), relevant, top)


def _reach(links: Sequence[EpisodeLinkRow]) -> dict[str, set[str]]:
    """Each turn's earlier turns along chains of links (a turn keeps links to its nearest
    earlier updates only, so the value two updates back is reached through the one between)."""
    direct: dict[str, set[str]] = {}
    for lk in links:
        direct.setdefault(lk.src, set()).add(lk.dst)
    out: dict[str, set[str]] = {}
    for start in direct:
        seen: set[str] = set()
        frontier = list(direct[start])
        while frontier:
            node = frontier.pop()
            if node not in seen and node != start:
                seen.add(node)
                frontier.extend(direct.get(node, ()))
        out[start] = seen
    return out


def _newest_first(ranked: list[str], links: Sequence[EpisodeLinkRow], top: int) -> list[str]:
    pos: dict[str, float] = {eid: float(i) for i, eid in enumerate(ranked)}
    updates = _reach(links)
    place: dict[str, float] = {}
    for eid, p in pos.items():
        best = p
        if p < top:
            for older in updates.get(eid, []):
                if older in pos and pos[older] < best:
                    best = pos[older] - 0.5
        place[eid] = best
    return sorted(place, key=lambda e: (place[e], pos[e]))


def _both_sides(ranked: list[str], links: Sequence[EpisodeLinkRow], top: int) -> list[str]:
    out = list(ranked)
    for lk in sorted(links, key=lambda lk: (lk.dst, lk.src)):
        head = out[:top]
        if (lk.src in head) == (lk.dst in head):
            continue
        found, other = (lk.src, lk.dst) if lk.src in head else (lk.dst, lk.src)
        if other in out:
            out.remove(other)
        at = out.index(found)
        # Older first: the one found is the newer (src) → the other goes before it.
        out.insert(at if found == lk.src else at + 1, other)
    return out


def outdated_turns(
    links: Sequence[EpisodeLinkRow], query: str, shown: set[str]
) -> dict[str, set[str]]:
    """For a question about the present: each turn that a returned later turn updates, with
    the words the update is about (the links that concern the query only)."""
    if asks_about_change(query):
        return {}
    wanted = _query_stems(query)
    out: dict[str, set[str]] = {}
    for lk in links:
        if lk.src in shown and len(wanted & set(lk.terms)) >= MIN_QUERY_TERMS:
            out.setdefault(lk.dst, set()).update(lk.terms)
    return out


def stated_only_by(
    statement: str, episode_ids: Sequence[str], outdated: dict[str, set[str]]
) -> bool:
    """Whether a fact is about what changed (``MIN_QUERY_TERMS`` of the update's words in its
    statement) and every turn that states it was updated."""
    if not episode_ids or not all(e in outdated for e in episode_ids):
        return False
    words = _query_stems(statement)
    return all(len(words & outdated[e]) >= MIN_QUERY_TERMS for e in episode_ids)
