"""Currentness between turns, without an LLM: a later turn that states a new value of a quantity
an earlier turn of the same speaker stated ("my Zotero library has 45 sources" … "I've added 52
sources to my Zotero library") UPDATES it.

A quantity is a number (a count, an amount, a percentage, a day of a date, a version) with the
content words around it (``WINDOW`` on each side, stop words out, lightly stemmed). Two turns are
linked when one quantity of each has a different value and at least ``MIN_SHARED`` of those words
in common: the same thing measured twice, with a different result. The later turn (by stated
time, then id) is the update. Nothing here looks at the other turns of the group, so a link is
the same whichever of its two turns arrived first, and whatever else is stored.

Kept narrow on purpose: most turns of a long chat share a topic, and a link changes what recall
ranks first. Restatements (the same value again) and negations are not linked here; facts the
extractor finds carry their own SUPERSEDES/CONTRADICTS links.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol

from ..store._base import EpisodeRow, GraphStore, StoreReader, WritePlan
from ..store._links import EpisodeLinkRow
from .quantities import RETURNED, STORED, Quantity, Reading, quantities, same_measure, stem

__all__ = [
    "KEEP",
    "LINKED_KINDS",
    "MAX_CANDIDATES",
    "MAX_QUANTITIES",
    "MIN_SHARED",
    "WINDOW",
    "Quantity",
    "Turn",
    "link_between",
    "link_terms",
    "link_turn",
    "links_among",
    "quantities",
    "relink",
    "relink_after_forget",
    "stem",
    "turn_links",
]

WINDOW = STORED.window
MIN_SHARED = 3
# A turn stating more numbers than this is not linked (quantities.STORED); it also keeps the
# work per turn bounded.
MAX_QUANTITIES = STORED.max_quantities
# Chat turns: statements by a speaker. Documents and logs (``text``) are series of their own (a
# log of 20,000 "note N" lines would link every line to every other); JSON records and events
# carry their own fields.
LINKED_KINDS = frozenset({"message"})
# A new turn is compared with at most this many stored turns that share its link terms, the
# nearest in stated time. Below it the links of a group do not depend on arrival order; above
# it (a speaker repeating the same words with numbers hundreds of times) a pair further apart
# than the nearest MAX_CANDIDATES is linked only if the later-arriving one found the other.
# (Each of the turn's words is looked up among its MAX_CANDIDATES nearest turns on each side.)
MAX_CANDIDATES = 50
# Each turn keeps its links to the KEEP nearest earlier turns it updates (by stated time, then
# id): a chain, as facts keep one predecessor, with one step of slack for a match that is near
# but not the same thing. The links of a group stay O(turns), and are still a function of the
# turns alone: a turn arriving between two linked ones takes the place of the farther.
KEEP = 2

def link_terms(found: Sequence[Quantity]) -> list[str]:
    """The words a turn's quantities are about (what the store finds candidate turns by); none
    for a turn of more than ``MAX_QUANTITIES`` quantities."""
    if len(found) > MAX_QUANTITIES:
        return []
    return sorted({t for q in found for t in q.terms})


class Turn(Protocol):
    """What deciding a link reads of a turn (a stored row or a returned record)."""

    @property
    def id(self) -> str: ...
    @property
    def group_id(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def metadata(self) -> dict[str, Any]: ...
    @property
    def reference_time(self) -> Any: ...
    @property
    def content(self) -> str: ...


def _speaker(row: Turn) -> str:
    who = row.metadata.get("speaker")
    return str(who).strip().casefold() if who is not None else ""


def _later(a: Turn, b: Turn) -> bool:
    """Whether ``a`` was stated after ``b`` (the same time: the larger id, so that the order
    does not depend on arrival)."""
    return (a.reference_time, a.id) > (b.reference_time, b.id)


def _may_link(a: Turn, b: Turn) -> bool:
    # A turn without a speaker (metadata.speaker) is nobody's statement to update.
    return (
        a.id != b.id
        and a.group_id == b.group_id
        and a.kind in LINKED_KINDS
        and b.kind in LINKED_KINDS
        and _speaker(a) != ""
        and _speaker(a) == _speaker(b)
    )


def link_between(
    a: Turn,
    a_found: Sequence[Quantity],
    b: Turn,
    b_found: Sequence[Quantity],
    *,
    decided_at: int,
    reading: Reading = STORED,
) -> EpisodeLinkRow | None:
    """The UPDATES link between two turns (their quantities read with ``reading``), or None.
    Symmetric in (a, b)."""
    if not _may_link(a, b) or max(len(a_found), len(b_found)) > reading.max_quantities:
        return None
    new, new_found, old, old_found = (
        (a, a_found, b, b_found) if _later(a, b) else (b, b_found, a, a_found)
    )
    shared: set[str] = set()
    said: dict[str, str] = {}
    changes: list[str] = []
    # The fine reading: a value both turns state (with its unit) is neither the new one nor
    # replaced ("April 25 to May 1" twice is no change from 25 to 1), and a percentage or an
    # amount of money is itself one of the words in common.
    stated = (
        {(q.value, q.unit) for q in old_found} & {(q.value, q.unit) for q in new_found}
        if reading.fine
        else set()
    )
    for before in old_found:
        for after in new_found:
            if (
                before.value == after.value
                or not same_measure(before, after)
                or (before.value, before.unit) in stated
                or (after.value, after.unit) in stated
            ):
                continue
            common = before.terms & after.terms
            typed = reading.fine and before.unit in ("%", "$")
            if len(common) >= MIN_SHARED - typed:
                shared |= common
                said.update((t, w) for t, w in after.words if t in common)
                change = f"{before.value} → {after.value}"
                if change not in changes:
                    changes.append(change)
    if not shared:
        return None
    terms = tuple(sorted(shared))
    shown = sorted(said.get(t, t) for t in terms)
    reason = f"{', '.join(changes[:3])} ({', '.join(shown[:6])})"
    return EpisodeLinkRow("UPDATES", new.id, old.id, new.group_id, reason, terms, decided_at)


def links_among(turns: Sequence[Turn]) -> list[EpisodeLinkRow]:
    """The links between every two of a few turns (those a recall returns first), read with
    ``quantities.RETURNED``: nothing is stored, so neither the storage bound nor the ``KEEP``
    links a turn keeps limit them."""
    found = {t.id: quantities(t.content, RETURNED) for t in turns}
    out: list[EpisodeLinkRow] = []
    for i, a in enumerate(turns):
        for b in turns[i + 1 :]:
            link = link_between(a, found[a.id], b, found[b.id], decided_at=0, reading=RETURNED)
            if link is not None:
                out.append(link)
    return out


def turn_links(
    row: EpisodeRow,
    found: Sequence[Quantity],
    candidates: Iterable[EpisodeRow],
    *,
    decided_at: int,
) -> list[EpisodeLinkRow]:
    """The links between ``row`` and each candidate (earlier or later)."""
    links: list[EpisodeLinkRow] = []
    for other in candidates:
        if not _may_link(row, other):
            continue
        link = link_between(row, found, other, quantities(other.content), decided_at=decided_at)
        if link is not None:
            links.append(link)
    return links


def _links_with_candidates(
    reader: StoreReader,
    row: EpisodeRow,
    found: Sequence[Quantity],
    terms: Sequence[str],
    now: int,
    leave_out: set[str] | frozenset[str] = frozenset(),
) -> list[tuple[EpisodeLinkRow, int]]:
    """The links between ``row`` and the stored turns that share its terms (but
    ``leave_out``), each with the stated time of the other turn."""
    candidates = [
        c
        for c in reader.episodes_sharing_terms(
            row.group_id, terms, MIN_SHARED, row.id, row.reference_time, MAX_CANDIDATES
        )
        if c.id not in leave_out
    ]
    when = {c.id: c.reference_time for c in candidates}
    return [
        (lk, when[lk.dst if lk.src == row.id else lk.src])
        for lk in turn_links(row, found, candidates, decided_at=now)
    ]


def _nearest_older(
    row: EpisodeRow, links: Sequence[tuple[EpisodeLinkRow, int]]
) -> list[EpisodeLinkRow]:
    """The ``KEEP`` links from ``row`` to the nearest earlier turns it updates."""
    older = [(at, lk.dst, lk) for lk, at in links if lk.src == row.id]
    older.sort(key=lambda item: (item[0], item[1]), reverse=True)
    return [lk for _, _, lk in older[:KEEP]]


def link_turn(reader: StoreReader, plan: WritePlan, row: EpisodeRow, now: int) -> None:
    """Inside the episode's write: its link terms; its links to the ``KEEP`` nearest earlier
    turns it updates; and, for each later turn that updates it, the link from that turn when
    it is now among that turn's ``KEEP`` nearest (the farthest it kept is dropped)."""
    if row.kind not in LINKED_KINDS or not _speaker(row):
        return
    found = quantities(row.content)
    terms = link_terms(found)
    plan.episode_terms = terms
    if not terms:
        return
    links = _links_with_candidates(reader, row, found, terms, now)
    plan.episode_links_add.extend(_nearest_older(row, links))
    newer = {lk.src: lk for lk, _ in links if lk.dst == row.id}
    if not newer:
        return
    kept: dict[str, list[tuple[tuple[int, str], EpisodeLinkRow]]] = {}
    for link, dst_time in reader.episode_links_timed(sorted(newer)):
        if link.src in newer and link.kind == "UPDATES":
            kept.setdefault(link.src, []).append(((dst_time, link.dst), link))
    mine = (row.reference_time, row.id)
    for src, link in sorted(newer.items()):
        held = sorted(kept.get(src, []), key=lambda item: item[0], reverse=True)
        if len(held) < KEEP:
            plan.episode_links_add.append(link)
        elif mine > held[KEEP - 1][0]:
            farthest = held[KEEP - 1][1]
            plan.episode_links_remove.append((farthest.kind, farthest.src, farthest.dst))
            plan.episode_links_add.append(link)


def relink_after_forget(
    reader: StoreReader, plan: WritePlan, gone: Sequence[str], now: int
) -> None:
    """Inside a forget's write: each remaining turn that updated a forgotten one links to its
    ``KEEP`` nearest earlier turns among those that remain (as if the forgotten turns had never
    been ingested)."""
    doomed = set(gone)
    if not doomed:
        return
    sources = sorted(
        {link.src for link, _ in reader.episode_links_timed(sorted(doomed))
         if link.dst in doomed and link.src not in doomed}
    )
    for src in sources:
        row = reader.get_episode(src)
        if row is None:
            continue
        found = quantities(row.content)
        links = _links_with_candidates(reader, row, found, link_terms(found), now, doomed)
        plan.episode_links_add.extend(_nearest_older(row, links))


def relink(store: GraphStore, episode_ids: Sequence[str], now: int) -> None:
    """The link terms and links of stored turns, computed again (after an import: an export
    holds the links, not the terms that find the turns a later one may update)."""
    rows = [r for r in (store.get_episode(i) for i in dict.fromkeys(episode_ids)) if r]
    turns = [r for r in rows if r.kind in LINKED_KINDS]

    def work(row: EpisodeRow) -> Callable[[StoreReader], WritePlan]:
        def plan_for(reader: StoreReader) -> WritePlan:
            plan = WritePlan(episode_id=row.id)
            if reader.get_episode(row.id) is not None:
                link_turn(reader, plan, row, now)
            return plan

        return plan_for

    for start in range(0, len(turns), 200):
        store.write_many([work(row) for row in turns[start : start + 200]])
