"""From an extraction to one ``WritePlan``: resolve entities, reconcile facts, record provenance.

Everything here runs inside the store's write transaction (``build_plan`` is the unit of work),
so a retried transaction recomputes the plan from what the store holds at that moment.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .._errors import InputError, PredicateError
from .._ids import entity_key, value_json, value_key
from .._models import ExtractedFact, IngestResult
from .._predicates import Family, PredicateRegistry, normalize_predicate
from .._time import to_ms
from ..reconcile.reconciler import Candidate, Claim, TimelineState
from ..store._base import ProvenanceRow, StoreReader, Timeline, WritePlan
from .resolve import EntityRequest, resolve_entities

__all__ = [
    "PreparedFact",
    "build_plan",
    "default_statement",
    "family_key",
    "merge_timelines",
    "prepare_facts",
]

Vector = npt.NDArray[np.float32]


@dataclass
class PreparedFact:
    """An extracted fact checked and normalised, with its embedding, before resolution."""

    fact: ExtractedFact
    predicate: str
    functional: bool
    valid_from: int
    valid_to: int | None
    stated_from: bool
    statement: str
    embedding: Vector | None = None
    family: Family | None = None  # the predicate's family: reconciled with its other members


def family_key(family: Family) -> str:
    """The timeline key of a family's state (never a predicate: predicates have no ``@``)."""
    return "@" + family.name


def merge_timelines(parts: Sequence[Timeline]) -> Timeline:
    """One timeline of several predicates' timelines (a family), each link once."""
    merged = Timeline()
    seen: set[tuple[str, str, str]] = set()
    ids: set[str] = set()
    for part in parts:
        for fact in part.facts:
            if fact.id not in ids:
                ids.add(fact.id)
                merged.facts.append(fact)
        for link in part.links:
            key = (link.kind, link.src, link.dst)
            if key not in seen:
                seen.add(key)
                merged.links.append(link)
    merged.facts.sort(key=lambda f: (f.valid_from, f.recorded_at, f.id))
    return merged


def default_statement(subject: str, predicate: str, target: str) -> str:
    words = predicate.replace(".", " ").replace("_", " ")
    return f"{subject} {words} {target}".strip() + "."


def prepare_facts(
    facts: Sequence[ExtractedFact],
    *,
    reference_time: int,
    predicates: PredicateRegistry,
    strict: bool,
) -> tuple[list[PreparedFact], list[str]]:
    """Normalise predicates and times; with ``strict`` bad facts raise, else they are skipped."""
    prepared: list[PreparedFact] = []
    skipped: list[str] = []
    for index, fact in enumerate(facts):
        try:
            predicate = normalize_predicate(fact.predicate, lenient=not strict)
            if fact.object is None and fact.value is None and fact.kind == "assert":
                raise InputError(f"fact {index}: needs an object or a value")
            if isinstance(fact.value, float) and fact.value != fact.value:
                raise InputError(f"fact {index}: value is NaN")
            start = to_ms(fact.valid_from) if fact.valid_from is not None else reference_time
            end = to_ms(fact.valid_to) if fact.valid_to is not None else None
            if end is not None and end <= start:
                raise InputError(
                    f"fact {index}: valid_to ({fact.valid_to}) must be after valid_from"
                )
        except (InputError, PredicateError) as exc:
            if strict:
                raise
            skipped.append(str(exc))
            continue
        if predicate in predicates or fact.functional is None:
            functional = predicates.is_functional(predicate)
        else:
            functional = fact.functional
        family = predicates.family_of(predicate) if predicate in predicates else None
        target = fact.object if fact.object is not None else str(fact.value)
        statement = (fact.statement or "").strip() or default_statement(
            fact.subject, predicate, target
        )
        prepared.append(
            PreparedFact(
                fact=fact,
                predicate=predicate,
                functional=functional,
                valid_from=start,
                valid_to=end,
                stated_from=fact.valid_from is not None,
                statement=statement,
                family=family,
            )
        )
    return prepared, skipped


def build_plan(
    reader: StoreReader,
    *,
    group_id: str,
    episode_id: str,
    extractor_name: str,
    facts: Sequence[PreparedFact],
    entities: Sequence[EntityRequest],
    now: int,
    order: int = 0,
) -> tuple[WritePlan, IngestResult]:
    """``order``: the episode's position in its write batch (the batch shares ``now``)."""
    requests: dict[str, EntityRequest] = {}
    for req in entities:
        requests.setdefault(req.name, req)
    for pf in facts:
        requests.setdefault(pf.fact.subject, EntityRequest(pf.fact.subject, pf.fact.subject_type))
        if pf.fact.object is not None:
            requests.setdefault(pf.fact.object, EntityRequest(pf.fact.object, pf.fact.object_type))
    resolution = resolve_entities(reader, group_id, list(requests.values()), now)

    # One state per (subject, predicate), or per (subject, family) for a family's members.
    candidates: dict[tuple[str, str], list[Candidate]] = {}
    functional: dict[tuple[str, str], bool] = {}
    families: dict[tuple[str, str], Family] = {}
    for index, pf in enumerate(facts):
        f = pf.fact
        subject_id = resolution.by_name[f.subject]
        object_id = resolution.by_name[f.object] if f.object is not None else None
        raw_value = None if f.object is not None else f.value
        replaces_key: str | None = None
        if f.replaces:
            replaced = [e.id for e in resolution.new if e.key == entity_key(f.replaces)] or [
                eid
                for name, eid in resolution.by_name.items()
                if entity_key(name) == entity_key(f.replaces)
            ]
            replaces_key = value_key(replaced[0], None) if replaced else value_key(None, f.replaces)
        key = (subject_id, pf.predicate)
        if pf.family is not None:
            key = (subject_id, family_key(pf.family))
            families[key] = pf.family
        claim = None
        if f.relation is not None and f.relation != "new":
            claim = Claim(f.relation, f.related_fact_id, f.reason)
        candidates.setdefault(key, []).append(
            Candidate(
                subject_id=subject_id,
                predicate=pf.predicate,
                object_id=object_id,
                value_json=None if raw_value is None else value_json(raw_value),
                value_key=""
                if (f.kind == "negate" and object_id is None and raw_value is None)
                else value_key(object_id, raw_value),
                statement=pf.statement,
                valid_from=pf.valid_from,
                valid_to=pf.valid_to,
                stated_from=pf.stated_from,
                kind=f.kind,
                replaces_key=replaces_key,
                confidence=f.confidence,
                span=f.evidence,
                embedding=pf.embedding,
                claim=claim,
                index=index,
            )
        )
        functional[key] = functional.get(key, False) or pf.functional

    pairs: list[tuple[str, str]] = []
    for key in candidates:
        family = families.get(key)
        pairs.extend([(key[0], m) for m in family.members] if family is not None else [key])
    loaded = reader.timelines(group_id, list(dict.fromkeys(pairs)))
    timelines: dict[tuple[str, str], Timeline] = {}
    for key in candidates:
        family = families.get(key)
        if family is None:
            timelines[key] = loaded[key]
        else:
            timelines[key] = merge_timelines([loaded[(key[0], m)] for m in family.members])
    plan = WritePlan(episode_id=episode_id, episode_status=("extracted", extractor_name, None))
    plan.entities_new = resolution.new
    plan.entity_aliases = resolution.aliases
    result = IngestResult(episode_id=episode_id, status="extracted")

    def load_claims(fact_id: str) -> tuple[list[ProvenanceRow], list[ProvenanceRow]]:
        return reader.fact_claims([fact_id])

    for key, cands in candidates.items():
        state = TimelineState(
            group_id,
            key[0],
            key[1],
            timelines[key],
            functional=functional[key],
            now=now,
            episode_id=episode_id,
            order=order,
            claims_loader=load_claims,
            seq=reader.write_seq,
            family=families.get(key),
        )
        for cand in cands:
            outcome = state.apply(cand)
            if outcome.status == "added" or outcome.status == "corrected":
                result.facts_added += 1
            elif outcome.status == "duplicate":
                result.facts_duplicate += 1
        new_facts, updates, links_add, links_remove = state.finish()
        plan.facts_new.extend(new_facts)
        plan.facts_update.extend(updates)
        plan.links_add.extend(links_add)
        plan.links_remove.extend(links_remove)
        plan.provenance.extend(state.provenance)
        plan.endings.extend(state.endings)
        plan.claims_reset.extend(state.claims_reset)
        result.superseded.extend(state.superseded_pairs)
        result.contradictions.extend(state.contradiction_pairs)
    plan.mentions = [(episode_id, eid) for eid in dict.fromkeys(resolution.by_name.values())]
    return plan, result
