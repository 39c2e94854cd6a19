"""The copy of a timeline the reconciler edits: what it holds, how it is read, and at the end
the recompute (valid_to from successors, the SUPERSEDES chain) and the difference to write.

``_reconcile.TimelineState`` adds the rules that apply a new fact to it; ``_reconcile`` explains
the approach (DESIGN.md §3).
"""

from __future__ import annotations

from dataclasses import replace

from .._predicates import Family
from ..store._base import FactRow, FactUpdate, LinkRow, ProvenanceRow, Timeline
from .claims import StatedClaim
from .types import Candidate, ClaimsLoader, stored_value_key

__all__ = ["TimelineBase"]

_INF = 2**62
_ALL: frozenset[str] = frozenset({"*"})
_NONE: frozenset[str] = frozenset()


class TimelineBase:
    """Mutable copy of one (subject, predicate) timeline while an episode is applied; with
    ``family``, of the timelines of every predicate of the family for the subject."""

    def __init__(
        self,
        group_id: str,
        subject_id: str,
        predicate: str,
        timeline: Timeline,
        *,
        functional: bool,
        now: int,
        episode_id: str,
        order: int = 0,
        claims_loader: ClaimsLoader | None = None,
        seq: int = 0,
        family: Family | None = None,
    ) -> None:
        self.group_id = group_id
        self.subject_id = subject_id
        self.predicate = predicate
        self.functional = functional
        self.family = family
        self._group_cache: dict[tuple[str, str], frozenset[str]] = {}
        self.now = now
        self.episode_id = episode_id
        self.order = order
        self.seq = seq
        self.claims_loader = claims_loader
        self.original = {f.id: f for f in timeline.facts}
        self.facts: dict[str, FactRow] = {f.id: replace(f) for f in timeline.facts}
        self.value_keys = {f.id: stored_value_key(f) for f in timeline.facts}
        self.links = {(lk.kind, lk.src, lk.dst): lk for lk in timeline.links}
        self.original_links = dict(self.links)
        self.explicit_end: dict[str, int | None] = {}
        self.end_reason: dict[str, str | None] = {}
        # Who supersedes whom, by the superseded fact (one pass; a fact-by-links scan was
        # quadratic in the timeline's length).
        self._superseded_by: dict[str, list[str]] = {}
        for kind, src, dst in self.links:
            if kind == "SUPERSEDES":
                self._superseded_by.setdefault(dst, []).append(src)
        for fact in timeline.facts:
            self.explicit_end[fact.id] = self._stored_explicit_end(fact)
            self.end_reason[fact.id] = fact.end_reason
        self.new_ids: list[str] = []
        self.provenance: list[ProvenanceRow] = []
        self.endings: list[ProvenanceRow] = []
        self.claims_reset: list[str] = []
        self.expired: set[str] = set()
        self.llm_links: dict[tuple[str, str, str], str] = {}  # link -> reason claimed by the LLM
        self.superseded_pairs: list[tuple[str, str]] = []
        self.contradiction_pairs: list[tuple[str, str]] = []

    # ------------------------------------------------------------------ reading the state
    def _stored_explicit_end(self, fact: FactRow) -> int | None:
        if fact.valid_to is None:
            return None
        for src in self._superseded_by.get(fact.id, ()):
            successor = self.facts.get(src)
            if successor is not None and successor.valid_from == fact.valid_to:
                return None  # derived from the successor
        return fact.valid_to

    def _live(self) -> list[FactRow]:
        return sorted(
            (f for f in self.facts.values() if f.id not in self.expired),
            key=lambda f: (f.valid_from, f.recorded_at, f.id),
        )

    def _end(self, fact: FactRow) -> int:
        return _INF if fact.valid_to is None else fact.valid_to

    def groups_of(self, predicate: str, key: str) -> frozenset[str]:
        """The groups in which a value (predicate, value key) is one at a time."""
        if self.family is None:
            return _ALL if self.functional else _NONE
        cached = self._group_cache.get((predicate, key))
        if cached is None:
            names = {"o:" + key}
            if self.family.functional(predicate):
                names.add("p:" + predicate)
            cached = self._group_cache[(predicate, key)] = frozenset(names)
        return cached

    def _groups(self, fact: FactRow) -> frozenset[str]:
        return self.groups_of(fact.predicate, self.value_keys[fact.id])

    def _cand_groups(self, cand: Candidate) -> frozenset[str]:
        return self.groups_of(cand.predicate, cand.value_key)

    def _same(self, fact: FactRow, predicate: str, key: str | None) -> bool:
        """Whether ``fact`` holds this value (predicate and object/value)."""
        return fact.predicate == predicate and self.value_keys.get(fact.id) == key

    def _pair_group(self, cand: Candidate) -> str | None:
        """The family group of the candidate's two entities (``None``: not in a family)."""
        return None if self.family is None or not cand.value_key else "o:" + cand.value_key

    def _stated(self, cand: Candidate, value_key: str | None = None) -> str:
        """The claim this state records for ``cand`` (applied now, by this episode)."""
        return StatedClaim(
            kind=cand.kind,
            valid_from=cand.valid_from,
            valid_to=cand.valid_to,
            stated_from=cand.stated_from,
            confidence=cand.confidence,
            at=self.now,
            order=self.order,
            seq=self.seq,
            index=cand.index,
            value_key=value_key,
            replaces_key=cand.replaces_key,
        ).to_json()

    def _support(self, fact_id: str) -> tuple[list[ProvenanceRow], list[ProvenanceRow]]:
        """A fact's provenance and ending rows: the stored ones (unless being replaced) and
        the ones this state adds."""
        prov = [r for r in self.provenance if r.fact_id == fact_id]
        ends = [r for r in self.endings if r.fact_id == fact_id]
        stored = fact_id not in self.new_ids and fact_id not in self.claims_reset
        if stored and self.claims_loader is not None:
            stored_prov, stored_ends = self.claims_loader(fact_id)
            return [*stored_prov, *prov], [*stored_ends, *ends]
        return prov, ends

    def remove(self, fact_ids: set[str]) -> None:
        """Drop facts (forget) so that the recompute re-links their neighbours."""
        for fact_id in fact_ids:
            self.facts.pop(fact_id, None)
            self.original.pop(fact_id, None)
        for key in [k for k in self.links if k[1] in fact_ids or k[2] in fact_ids]:
            del self.links[key]

    # ------------------------------------------------------------------ recompute and diff
    def recompute(self) -> None:
        """valid_to of each fact from its successor, and the SUPERSEDES chain that says so."""
        live = self._live()
        wanted: dict[tuple[str, str, str], LinkRow] = {}
        ends: dict[str, int | None] = {f.id: self.explicit_end.get(f.id) for f in live}
        grouped: dict[str, list[FactRow]] = {}
        for fact in live:  # live is sorted: each group and slot keeps that order
            for name in sorted(self._groups(fact)):
                grouped.setdefault(name, []).append(fact)
        for members in grouped.values():
            slots: dict[int, list[FactRow]] = {}
            for fact in members:
                slots.setdefault(fact.valid_from, []).append(fact)
            starts = sorted(slots)
            for index, start in enumerate(starts):
                following = starts[index + 1] if index + 1 < len(starts) else None
                if following is not None:
                    for fact in slots[start]:
                        end = ends[fact.id]
                        ends[fact.id] = following if end is None else min(end, following)
                    for newer in slots[following]:
                        for older in slots[start]:
                            explicit = self.explicit_end.get(older.id)
                            if explicit is not None and explicit < following:
                                # Ended (a negation) before the newer one began: nothing
                                # replaced it, so no SUPERSEDES link says so.
                                continue
                            key = ("SUPERSEDES", newer.id, older.id)
                            existing = self.links.get(key)
                            reason = self.llm_links.get(key)
                            if reason is not None:
                                wanted[key] = LinkRow(
                                    "SUPERSEDES", newer.id, older.id, reason, "llm", self.now
                                )
                            elif existing is not None:
                                wanted[key] = existing
                            else:
                                wanted[key] = LinkRow(
                                    "SUPERSEDES", newer.id, older.id, "update", "rule", self.now
                                )
        for fact in live:
            fact.valid_to = ends[fact.id]
        live_ids = {f.id for f in live}
        for key, link in list(self.links.items()):
            kind, src, dst = key
            managed = (
                kind == "SUPERSEDES"
                and src in live_ids
                and dst in live_ids
                and not link.reason.startswith("correction")
            )
            if managed and key not in wanted:
                del self.links[key]
        for key, link in wanted.items():
            if key not in self.links or self.links[key] != link:
                self.links[key] = link

    def finish(
        self,
    ) -> tuple[list[FactRow], list[FactUpdate], list[LinkRow], list[tuple[str, str, str]]]:
        """Recompute the timeline and return (new facts, updates, links to add, links to remove)."""
        self.recompute()
        new_facts: list[FactRow] = []
        updates: list[FactUpdate] = []
        for fact_id, fact in self.facts.items():
            if fact_id in self.new_ids:
                if fact.valid_to is not None and fact.ended_at is None:
                    fact.ended_at = self.now
                fact.end_reason = (
                    self.end_reason.get(fact_id)
                    if self.explicit_end.get(fact_id) is not None
                    and fact.valid_to == self.explicit_end.get(fact_id)
                    else None
                )
                new_facts.append(fact)
                continue
            before = self.original[fact_id]
            ended_at = fact.ended_at
            end_reason = fact.end_reason
            if fact.valid_to != before.valid_to:
                ended_at = self.now if fact.valid_to is not None else None
                explicit = self.explicit_end.get(fact_id)
                end_reason = (
                    self.end_reason.get(fact_id)
                    if explicit is not None and fact.valid_to == explicit
                    else None
                )
            changed = (
                fact.valid_from != before.valid_from
                or fact.valid_to != before.valid_to
                or fact.expired_at != before.expired_at
                or fact.confidence != before.confidence
                or ended_at != before.ended_at
                or end_reason != before.end_reason
            )
            if changed:
                fact.ended_at = ended_at
                fact.end_reason = end_reason
                updates.append(FactUpdate.of(fact, ended_at, end_reason))
        added = [link for key, link in self.links.items() if self.original_links.get(key) != link]
        removed = [key for key in self.original_links if key not in self.links]
        for link in added:
            if link.kind == "SUPERSEDES" and (link.dst, link.src) not in self.superseded_pairs:
                self.superseded_pairs.append((link.dst, link.src))
        return new_facts, updates, added, removed
