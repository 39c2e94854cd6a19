"""The reconciler: places each new fact in the timeline of its (subject, predicate).

DESIGN.md §3 is the contract. The approach that makes ingest order irrelevant: apply each new fact
to an in-memory copy of the unexpired timeline, then *recompute* the whole timeline (valid_to of
each fact from its successor, SUPERSEDES links between consecutive valid times) and write only the
difference. The same set of facts therefore always yields the same chain.

A fact's ``valid_to`` is either *derived* (it ends where its successor starts; a SUPERSEDES link
from that successor exists) or *explicit* (stated by the source, or set by a negation).

Each provenance row records the episode's claim (``_claims``). Two things need them: a new value
that lands inside a fact whose support includes a later restatement splits that fact (Paris
stated for 2019 and 2021, then Berlin for 2020: Paris 2019-2020, Berlin 2020-2021, Paris 2021-),
and ``_replay`` rebuilds a timeline from the claims left after a forget.

Predicate families (``_predicates.Family``): the state of a family member is the state of the
whole family for the subject (every member's facts, all objects). One-value-at-a-time then holds
in *groups*: all the facts of a functional predicate (``p:<predicate>``) and, in a family, all
the facts with the same object (``o:<object>``: one relation between two entities). A plain
timeline has one group (``*``) when functional and none otherwise, which is what it always did.
A fact's "value" is its predicate and object, so ``sister_of Ana`` and ``cousin_of Ana`` are two
values of the group ``o:Ana``: a later one supersedes, an earlier one is late history, the same
start contradicts and a correction expires the other, exactly as for ``lives_in``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np
import numpy.typing as npt

from ._claims import StatedClaim
from ._ids import make_id, value_key
from ._predicates import Family
from .store._base import FactRow, FactUpdate, LinkRow, ProvenanceRow, Timeline

__all__ = ["Candidate", "Claim", "Outcome", "TimelineState"]

Vector = npt.NDArray[np.float32]
_INF = 2**62
_ALL: frozenset[str] = frozenset({"*"})
_NONE: frozenset[str] = frozenset()
# Stored provenance and ending rows of a fact, read inside the write transaction when needed.
ClaimsLoader = Callable[[str], tuple[list[ProvenanceRow], list[ProvenanceRow]]]


@dataclass
class Claim:
    """An extractor's (LLM's) claim about an existing fact, to be checked by the rules."""

    relation: str
    fact_id: str | None
    reason: str | None


@dataclass
class Candidate:
    """A new fact, resolved to entity ids, ready to be reconciled."""

    subject_id: str
    predicate: str
    object_id: str | None
    value_json: str | None
    value_key: str
    statement: str
    valid_from: int
    valid_to: int | None
    stated_from: bool
    kind: str = "assert"  # assert | negate | correct
    replaces_key: str | None = None
    confidence: float = 1.0
    span: str | None = None
    embedding: Vector | None = None
    claim: Claim | None = None
    index: int = 0  # position among the episode's facts (replay order)


@dataclass
class Outcome:
    status: str  # added | duplicate | negated | corrected | ignored
    fact_id: str | None
    affected: list[str] = field(default_factory=list)
    note: str | None = None


def _combine(old: float, new: float) -> float:
    return round(1.0 - (1.0 - old) * (1.0 - new), 6)


class TimelineState:
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

    # ------------------------------------------------------------------ applying candidates
    def apply(self, cand: Candidate) -> Outcome:
        cand = self._check_claim(cand)
        claim = cand.claim
        if claim is not None and claim.relation in ("negates", "corrects"):
            # Recorded as what it does, so a rebuild without the extractor does the same.
            cand = replace(cand, kind="negate" if claim.relation == "negates" else "correct")
        if cand.kind == "negate" or (claim is not None and claim.relation == "negates"):
            return self._negate(cand, claim)
        if cand.kind == "correct" or (claim is not None and claim.relation == "corrects"):
            return self._correct(cand, claim)
        return self._assert(cand, claim)

    def _check_claim(self, cand: Candidate) -> Candidate:
        """Keep an extractor's claim only where the rules allow it; else the rules decide alone.

        Dropped: a claim without a fact id, or with an id outside this (subject, predicate)
        timeline (unknown, foreign or expired); ``supersedes`` on a multi-valued predicate
        (values accumulate there); ``same_as``/``negates`` naming a different value than the
        fact it points at. A dropped ``negates``/``corrects`` still negates/corrects by value.

        In a family a claim may point at a fact of another predicate of the family between the
        same two entities (``cousin_of Ana`` corrects ``sister_of Ana``): ``supersedes``,
        ``corrects`` and ``contradicts`` are kept there; ``same_as`` and ``negates`` need the
        same predicate.
        """
        claim = cand.claim
        if claim is None:
            return cand
        target = self.facts.get(claim.fact_id) if claim.fact_id is not None else None
        keep = target is not None and target.id not in self.expired
        if target is not None and keep:
            shared = self._groups(target) & self._cand_groups(cand)
            if claim.relation == "supersedes" and not shared:
                keep = False
            if target.predicate != cand.predicate and (
                claim.relation in ("same_as", "negates") or not shared
            ):
                keep = False
        if (
            keep
            and target is not None
            and claim.relation in ("same_as", "negates")
            and cand.value_key
            and self.value_keys.get(target.id) != cand.value_key
        ):
            keep = False
        if keep:
            return cand
        kind = {"negates": "negate", "corrects": "correct"}.get(claim.relation, cand.kind)
        return replace(cand, claim=None, kind=kind)

    def _find_duplicate(self, cand: Candidate, claim: Claim | None) -> FactRow | None:
        if claim is not None and claim.relation == "same_as" and claim.fact_id in self.facts:
            target = self.facts[claim.fact_id]
            if target.id not in self.expired:
                return target
        live = [f for f in self._live() if self._same(f, cand.predicate, cand.value_key)]
        for fact in live:
            if fact.valid_from <= cand.valid_from < self._end(fact):
                return fact
        # A late-arriving earlier statement of a value that already follows directly: extend it.
        groups = self._cand_groups(cand)
        for fact in live:
            if fact.valid_from > cand.valid_from:
                between = [
                    f
                    for f in self._live()
                    if cand.valid_from <= f.valid_from < fact.valid_from
                    and not self._same(f, cand.predicate, cand.value_key)
                    and self._groups(f) & groups
                ]
                if not groups or (not between and self._is_slot_head(fact)):
                    return fact
        return None

    def _is_slot_head(self, fact: FactRow) -> bool:
        groups = self._groups(fact)
        key = self.value_keys[fact.id]
        return all(
            f.valid_from != fact.valid_from
            or self._same(f, fact.predicate, key)
            or not self._groups(f) & groups
            for f in self._live()
        )

    def _assert(
        self, cand: Candidate, claim: Claim | None, stated: Candidate | None = None
    ) -> Outcome:
        """``stated``: the candidate as the episode said it, when ``cand`` was derived from it
        (a correction); its claim is what provenance records."""
        stated = stated or cand
        duplicate = self._find_duplicate(cand, claim)
        if duplicate is not None:
            if cand.valid_from < duplicate.valid_from:
                duplicate.valid_from = cand.valid_from
            duplicate.confidence = _combine(duplicate.confidence, cand.confidence)
            if cand.valid_to is not None and self.explicit_end.get(duplicate.id) is None:
                self.explicit_end[duplicate.id] = cand.valid_to
                self.end_reason[duplicate.id] = "stated end"
            self.provenance.append(
                ProvenanceRow(duplicate.id, self.episode_id, cand.span, self._stated(stated))
            )
            return Outcome("duplicate", duplicate.id)
        fact = self._new_fact(cand, stated)
        groups = self._groups(fact)
        if groups:
            self._split_restatements(fact)
            for other in self._live():
                if (
                    other.id != fact.id
                    and other.valid_from == fact.valid_from
                    and self._groups(other) & groups
                ):
                    reason = "same valid time, different value"
                    decided = "rule"
                    if claim is not None and claim.relation == "contradicts":
                        decided = "llm" if claim.fact_id == other.id else "rule"
                        reason = claim.reason or reason
                    key = ("CONTRADICTS", fact.id, other.id)
                    self.links[key] = LinkRow(
                        "CONTRADICTS", fact.id, other.id, reason, decided, self.now
                    )
                    self.contradiction_pairs.append((fact.id, other.id))
        if claim is not None and claim.relation == "supersedes" and claim.fact_id:
            self.llm_links[("SUPERSEDES", fact.id, claim.fact_id)] = claim.reason or "update"
        return Outcome("added", fact.id)

    def _new_fact(self, cand: Candidate, stated: Candidate) -> FactRow:
        start = cand.valid_from
        fact_id = make_id(
            "fact",
            self.group_id,
            self.subject_id,
            cand.predicate,
            cand.value_key,
            str(start),
            self.episode_id,
        )
        fact = FactRow(
            id=fact_id,
            group_id=self.group_id,
            subject_id=self.subject_id,
            predicate=cand.predicate,
            object_id=cand.object_id,
            value_json=cand.value_json,
            statement=cand.statement,
            valid_from=start,
            valid_to=cand.valid_to,
            recorded_at=self.now,
            ended_at=self.now if cand.valid_to is not None else None,
            end_reason="stated end" if cand.valid_to is not None else None,
            confidence=cand.confidence,
            decided_by="llm" if cand.claim is not None else "rule",
            embedding=cand.embedding,
        )
        self.facts[fact.id] = fact
        self.value_keys[fact.id] = cand.value_key
        self.explicit_end[fact.id] = cand.valid_to
        self.end_reason[fact.id] = fact.end_reason
        self.new_ids.append(fact.id)
        self.provenance.append(
            ProvenanceRow(fact.id, self.episode_id, cand.span, self._stated(stated))
        )
        return fact

    # ------------------------------------------------------------------ splitting a fact
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
            row, _ = min(part, key=lambda rc: rc[1].sort_key(rc[0].episode_id))
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
                fact.confidence = _combine(fact.confidence, claim.confidence)
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

    def _negate(self, cand: Candidate, claim: Claim | None) -> Outcome:
        at = cand.valid_from
        targets: list[FactRow] = []
        if claim is not None and claim.fact_id is not None:
            targets = [self.facts[claim.fact_id]]
        else:
            targets = [
                fact
                for fact in self._live()
                if fact.predicate == cand.predicate
                and cand.value_key in ("", self.value_keys.get(fact.id))
            ]
        ended: list[str] = []
        for fact in targets:
            if fact.id in self.expired or fact.valid_from >= at:
                continue
            # Also where a later value already ended the fact by then: the world still said
            # "not any more" at ``at``, which holds if that later value is corrected away or
            # forgotten (the rebuild replays this ending).
            current_end = self.explicit_end.get(fact.id)
            if current_end is None or current_end > at:
                self.explicit_end[fact.id] = at
                self.end_reason[fact.id] = "negated" + (
                    f": {claim.reason}" if claim is not None and claim.reason else ""
                )
            # An extractor's negation that named the fact ends that value, whatever it said.
            negated = self.value_keys.get(fact.id) if claim is not None else cand.value_key
            self.endings.append(
                ProvenanceRow(fact.id, self.episode_id, cand.span, self._stated(cand, negated))
            )
            if fact.valid_to is None or at < fact.valid_to:
                ended.append(fact.id)
        if not ended:
            return Outcome("ignored", None, note="negation matched no current fact")
        return Outcome("negated", None, affected=ended)

    def _correct(self, cand: Candidate, claim: Claim | None) -> Outcome:
        """A correction expires what it replaces: the fact an extractor's claim names, else
        the facts of the value ``replaces`` names, else the current facts of the candidate's
        groups. In a family, a ``replaces`` that names no value of the candidate's predicate
        falls back to the other relation between the same two entities ("Ana is my cousin, not
        my sister": the relation is what was wrong)."""
        groups = self._cand_groups(cand)
        if claim is not None and claim.fact_id is not None:
            targets = [self.facts[claim.fact_id]]
        elif cand.replaces_key is not None:
            targets = [
                f
                for f in self._live()
                if self._same(f, cand.predicate, cand.replaces_key)
            ]
        elif groups:
            targets = [f for f in self._live() if f.valid_to is None and self._groups(f) & groups]
        else:
            targets = []
        targets = [
            t
            for t in targets
            if t.id not in self.expired and not self._same(t, cand.predicate, cand.value_key)
        ]
        pair = self._pair_group(cand)
        if not targets and claim is None and cand.replaces_key is not None and pair is not None:
            targets = [
                f
                for f in self._live()
                if f.valid_to is None and f.predicate != cand.predicate and pair in self._groups(f)
            ]
        if not targets:
            return self._assert(cand, None, stated=cand)
        start = cand.valid_from if cand.stated_from else min(t.valid_from for t in targets)
        stated = cand
        if claim is not None and len(targets) == 1:
            # An extractor's correction that named the fact replaces that value on a rebuild
            # (of another predicate of the family: the relation between the same two entities).
            stated = replace(cand, replaces_key=self.value_keys[targets[0].id])
        for target in targets:
            self.expired.add(target.id)
            target.expired_at = self.now
        corrected = replace(cand, valid_from=start, kind="assert", claim=None)
        outcome = self._assert(corrected, None, stated=stated)
        assert outcome.fact_id is not None
        decided = "llm" if claim is not None else "rule"
        reason = "correction" + (f": {claim.reason}" if claim is not None and claim.reason else "")
        for target in targets:
            key = ("SUPERSEDES", outcome.fact_id, target.id)
            self.links[key] = LinkRow(
                "SUPERSEDES", outcome.fact_id, target.id, reason, decided, self.now
            )
            self.superseded_pairs.append((target.id, outcome.fact_id))
        return Outcome("corrected", outcome.fact_id, affected=[t.id for t in targets])

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


def stored_value_key(fact: FactRow) -> str:
    value = None if fact.value_json is None else json.loads(fact.value_json)
    return value_key(fact.object_id, value)
