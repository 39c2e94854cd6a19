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

The module is in four parts: ``_reconcile_types`` (candidates, claims, outcomes),
``_reconcile_timeline`` (the copy of the timeline, its recompute and diff), ``_reconcile_split``
(splitting a fact around a new value) and here the rules that apply a candidate.
"""

from __future__ import annotations

from dataclasses import replace

from .._ids import make_id
from ..store._base import FactRow, LinkRow, ProvenanceRow
from .split import SplittingTimeline
from .types import (
    PLACEHOLDER,
    Candidate,
    Claim,
    ClaimsLoader,
    Outcome,
    Vector,
    combine,
    stored_value_key,
)

__all__ = [
    "Candidate",
    "Claim",
    "ClaimsLoader",
    "Outcome",
    "TimelineState",
    "Vector",
    "stored_value_key",
]


class TimelineState(SplittingTimeline):
    """A timeline copy and the rules that apply an episode's new facts to it: assert (duplicate,
    new value, contradiction), negate and correct, each checked against an extractor's claim.
    ``finish`` returns what to write."""

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
        keep = (
            target is not None
            and target.id not in self.expired
            and target.id not in self.placeholders
        )
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
            duplicate.confidence = combine(duplicate.confidence, cand.confidence)
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
        recorded = False
        for fact in targets:
            if fact.id in self.expired or fact.id in self.placeholders or fact.valid_from >= at:
                continue
            recorded = True
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
        if not recorded:
            self._placeholder(cand)
        if not ended:
            return Outcome("ignored", None, note="negation matched no current fact")
        return Outcome("negated", None, affected=ended)

    def _placeholder(self, cand: Candidate) -> None:
        """Keep a negation that found nothing to end: the statement it ends may be stated
        earlier but arrive later, and a rebuild of the timeline then replays it."""
        at = cand.valid_from
        fact_id = make_id(
            "fact",
            self.group_id,
            self.subject_id,
            cand.predicate,
            cand.value_key,
            str(at),
            self.episode_id,
            "negation",
        )
        if fact_id in self.facts:
            return
        fact = FactRow(
            id=fact_id,
            group_id=self.group_id,
            subject_id=self.subject_id,
            predicate=cand.predicate,
            object_id=cand.object_id,
            value_json=cand.value_json,
            # Not the negation's wording: a rebuild replays the negation from an ending row of
            # another fact, whose statement is that fact's.
            statement=PLACEHOLDER,
            valid_from=at,
            valid_to=at,
            recorded_at=self.now,
            ended_at=self.now,
            end_reason=PLACEHOLDER,
            confidence=cand.confidence,
            decided_by="rule",
        )
        self.facts[fact_id] = fact
        self.value_keys[fact_id] = cand.value_key
        self.placeholders.add(fact_id)
        self.explicit_end[fact_id] = at
        self.end_reason[fact_id] = PLACEHOLDER
        self.new_ids.append(fact_id)
        self.endings.append(
            ProvenanceRow(fact_id, self.episode_id, cand.span, self._stated(cand, cand.value_key))
        )

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
            targets = [f for f in self._live() if self._same(f, cand.predicate, cand.replaces_key)]
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
