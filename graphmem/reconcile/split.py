"""Splitting a fact when a new value lands inside it and the old value was stated again later.

Paris stated for 2019 and 2021, then Berlin for 2020: Paris 2019-2020, Berlin 2020-2021, Paris
2021-. The statements (provenance claims, ``_claims``) of the old fact decide where it splits.
"""

from __future__ import annotations

from dataclasses import replace

from .._ids import make_id
from ..store._base import FactRow, ProvenanceRow
from .claims import StatedClaim
from .timeline import TimelineBase
from .types import combine

__all__ = ["SplittingTimeline"]


class SplittingTimeline(TimelineBase):
    """A timeline copy that can split a fact around a new value (``_split_restatements``)."""

    def _split_restatements(self, new: FactRow) -> None:
        """A new value inside another value's span ends that value; statements of the old
        value dated after the new one's start say it came back: they become their own fact."""
        start = new.valid_from
        key = self.value_keys[new.id]
        groups = self._groups(new)
        for other in self._live():
            if other.id == new.id or self._same(other, new.predicate, key):
                continue
            if not self._groups(other) & groups:
                continue
            if not other.valid_from < start < self._end(other):
                continue
            prov, ends = self._support(other.id)
            early: list[tuple[ProvenanceRow, StatedClaim]] = []
            late: list[tuple[ProvenanceRow, StatedClaim]] = []
            for row in prov:
                claim = StatedClaim.from_json(row.claim, other)
                restated_later = claim.kind == "assert" and claim.valid_from > start
                (late if restated_later else early).append((row, claim))
            if late and early:
                self._split(other, early, late, ends)

    def _split(
        self,
        other: FactRow,
        early: list[tuple[ProvenanceRow, StatedClaim]],
        late: list[tuple[ProvenanceRow, StatedClaim]],
        ends: list[ProvenanceRow],
    ) -> None:
        key = self.value_keys[other.id]
        late_start = min(c.valid_from for _, c in late)

        def natural_id(start: int, part: list[tuple[ProvenanceRow, StatedClaim]]) -> str:
            row, _ = min(part, key=lambda rc: rc[1].stated_key(rc[0].episode_id))
            parts = (self.group_id, self.subject_id, other.predicate, key, str(start))
            return make_id("fact", *parts, row.episode_id)

        # The stored id stays with the part whose first statement made it.
        late_id = natural_id(late_start, late)
        if late_id == other.id:
            part_id, part_start = natural_id(other.valid_from, early), other.valid_from
        else:
            part_id, part_start = late_id, late_start
        if part_id in self.facts:
            part_id = make_id("fact", part_id, "split")
        part = replace(
            other,
            id=part_id,
            valid_from=part_start,
            valid_to=None,
            recorded_at=self.now,
            expired_at=None,
            ended_at=None,
            end_reason=None,
        )
        if late_id == other.id:
            late_fact, early_fact = other, part
            other.valid_from = late_start
        else:
            late_fact, early_fact = part, other
        self.facts[part.id] = part
        self.value_keys[part.id] = key
        self.new_ids.append(part.id)
        if other.id not in self.new_ids and other.id not in self.claims_reset:
            self.claims_reset.append(other.id)
        self.provenance = [r for r in self.provenance if r.fact_id != other.id]
        self.endings = [r for r in self.endings if r.fact_id != other.id]
        ended: dict[str, list[StatedClaim]] = {late_fact.id: [], early_fact.id: []}
        for row in ends:
            claim = StatedClaim.from_json(row.claim, other)
            owner = late_fact if claim.valid_from > late_start else early_fact
            ended[owner.id].append(claim)
            self.endings.append(replace(row, fact_id=owner.id))
        for fact, rows in ((early_fact, early), (late_fact, late)):
            fact.confidence = 0.0
            best: tuple[int, str] | None = None
            for row, claim in rows:
                fact.confidence = combine(fact.confidence, claim.confidence)
                self.provenance.append(replace(row, fact_id=fact.id))
                end = claim.valid_to
                if end is not None and end > fact.valid_from and (best is None or end < best[0]):
                    best = (end, "stated end")
            for claim in ended[fact.id]:
                end = claim.valid_from
                if end > fact.valid_from and (best is None or end < best[0]):
                    best = (end, "negated")
            self.explicit_end[fact.id] = best[0] if best else None
            self.end_reason[fact.id] = best[1] if best else None
