"""Ingest, first step: check what a write call was given and build raw episode rows.

An episode's id derives from its group and content hash (DESIGN §2), so everything that goes
into the hash is checked and normalised here, before anything is stored. ``add_fact``'s
provenance episode is built here too (its hash covers statement, source, times and flags).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, Literal

from .._args import check_group, check_text, show
from .._errors import ConfigError, InputError
from .._ids import content_hash, make_id
from .._models import EpisodeRecord, ExtractedFact, Extraction, IngestResult, Scalar
from .._predicates import PredicateRegistry, normalize_predicate
from .._time import require_aware, to_ms, utcnow
from ..experience.index import parse_experience
from ..extract import Extractor
from ..extract.structured import parse_json_record
from ..store._base import EpisodeRow
from .plan import default_statement, prepare_facts

__all__ = [
    "EPISODE_KINDS",
    "ExtractorChoice",
    "bulk_rows",
    "episode_row",
    "fact_episode",
    "line_up",
]

EPISODE_KINDS = ("message", "text", "json", "event", "experience")
ExtractorChoice = str | Extractor | None
_BULK_FIELDS = frozenset(
    {"content", "group_id", "source", "kind", "reference_time", "metadata", "extractor"}
)
# Fields of an EpisodeRecord (or an export) that a bulk item may carry and that are recomputed.
_DERIVED_FIELDS = frozenset({"id", "ingested_at", "content_hash", "status", "error"})


def episode_row(
    content: str,
    group_id: str,
    source: str | None,
    kind: str,
    reference_time: datetime | None,
    metadata: Mapping[str, Any] | None,
) -> EpisodeRow:
    """The raw episode, validated: what ``add_episode`` stores before any extraction."""
    group_id = check_group(group_id)
    if not isinstance(content, str):
        raise InputError(f"content must be a string, got {type(content).__name__}")
    if not content.strip():
        raise InputError("content is empty")
    if "\x00" in content:
        raise InputError("content contains a NUL character")
    if kind not in EPISODE_KINDS:
        raise InputError(f"kind must be one of {', '.join(EPISODE_KINDS)}, got {show(kind)}")
    if source is not None and not isinstance(source, str):
        raise InputError(f"source must be a string, got {type(source).__name__}")
    check_text(content, "content")
    if source is not None:
        check_text(source, "source", empty=True)
    if metadata is not None and not isinstance(metadata, Mapping):
        raise InputError(f"metadata must be a mapping, got {type(metadata).__name__}")
    if kind == "json":
        parse_json_record(content)
    elif kind == "experience":
        parse_experience(content)
    if isinstance(reference_time, str):
        from .._time import parse_datetime

        reference_time = parse_datetime(reference_time, "reference_time")
    when = require_aware(reference_time, "reference_time")
    meta = dict(metadata or {})
    try:
        meta_text = json.dumps(meta, sort_keys=True, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError) as exc:
        raise InputError(f"metadata must be JSON-serialisable: {exc}") from None
    check_text(meta_text, "metadata", empty=True)
    digest = content_hash(kind, source or "", content, when.isoformat() if when else "", meta_text)
    return EpisodeRow(
        id=make_id("ep", group_id, digest),
        group_id=group_id,
        source=source,
        kind=kind,
        content=content,
        reference_time=to_ms(when or utcnow()),
        ingested_at=to_ms(utcnow()),
        content_hash=digest,
        metadata=meta,
    )


def bulk_rows(
    items: Iterable[Mapping[str, Any] | EpisodeRecord],
    *,
    on_invalid: Literal["raise", "skip"],
    group_id: str | None,
    extractor: Callable[[ExtractorChoice, str], Extractor],
) -> tuple[list[tuple[EpisodeRow, ExtractorChoice]], dict[int, str]]:
    """``add_episodes``' items, every one validated before anything is written: the rows to
    ingest and, with ``on_invalid="skip"``, the reason of each bad item by its index.

    ``extractor`` resolves an item's extractor now: a bad name must not fail a later chunk
    after the earlier chunks were written."""
    if on_invalid not in ("raise", "skip"):
        raise InputError(f"on_invalid must be 'raise' or 'skip', got {show(on_invalid)}")
    # -- group bound: one tenant's bulk write cannot name another's group
    bound = None if group_id is None else check_group(group_id)
    rows: list[tuple[EpisodeRow, ExtractorChoice]] = []
    invalid: dict[int, str] = {}
    if isinstance(items, str | bytes | Mapping) or not isinstance(items, Iterable):
        raise InputError(
            f"add_episodes takes a list of episodes (mappings), got {type(items).__name__}"
        )
    for index, item in enumerate(items):
        try:
            if bound is not None and isinstance(item, Mapping | EpisodeRecord):
                named = item.group_id if isinstance(item, EpisodeRecord) else item.get("group_id")
                if named is None and isinstance(item, Mapping):
                    item = {**item, "group_id": bound}
                elif named != bound:
                    raise InputError(
                        f"episode {index}: group_id {show(named)} is not {show(bound)}"
                    )
            # -- end group bound
            rows.append(_bulk_row(index, item, extractor))
        except (InputError, ConfigError) as exc:
            if on_invalid == "raise":
                raise
            invalid[index] = str(exc)
    return rows, invalid


def line_up(results: Sequence[IngestResult], invalid: Mapping[int, str]) -> list[IngestResult]:
    """The results of the valid items with an ``invalid`` result at each bad item's index."""
    done = iter(results)
    return [
        IngestResult(episode_id="", status="invalid", error=invalid[i])
        if i in invalid
        else next(done)
        for i in range(len(results) + len(invalid))
    ]


def _bulk_row(
    index: int,
    item: Mapping[str, Any] | EpisodeRecord,
    extractor: Callable[[ExtractorChoice, str], Extractor],
) -> tuple[EpisodeRow, ExtractorChoice]:
    """One item of ``add_episodes``, validated; errors name the item's index."""
    if not isinstance(item, Mapping | EpisodeRecord):
        raise InputError(f"episode {index}: must be a mapping, got {type(item).__name__}")
    data = item.model_dump() if isinstance(item, EpisodeRecord) else dict(item)
    try:
        unknown = set(data) - _BULK_FIELDS - _DERIVED_FIELDS
        if unknown:
            raise InputError(f"unknown field(s) {sorted(unknown)}")
        row = episode_row(
            data.get("content"),  # type: ignore[arg-type]
            data.get("group_id", "default"),
            data.get("source"),
            data.get("kind", "message"),
            data.get("reference_time"),
            data.get("metadata"),
        )
        extractor(data.get("extractor"), row.kind)
    except (InputError, ConfigError) as exc:
        raise type(exc)(f"episode {index}: {exc}") from None
    return row, data.get("extractor")


def fact_episode(
    subject: str,
    predicate: str,
    object: str | None,
    *,
    value: Scalar | None,
    group_id: str,
    valid_from: datetime | None,
    valid_to: datetime | None,
    source: str | None,
    confidence: float,
    negated: bool,
    correction: bool,
    statement: str | None,
    replaces: str | None,
    predicates: PredicateRegistry,
) -> tuple[EpisodeRow, Extraction]:
    """``add_fact``'s arguments checked: its provenance episode and the one-fact extraction."""
    group_id = check_group(group_id)
    if not isinstance(subject, str) or not subject.strip():
        raise InputError("subject must be a non-empty string")
    check_text(subject, "subject")
    canon = normalize_predicate(predicate)
    for name, text_arg in (("source", source), ("statement", statement)):
        if text_arg is not None:
            check_text(text_arg, name, empty=True)
    if replaces is not None:
        check_text(replaces, "replaces")
    if isinstance(value, str):
        check_text(value, "value", empty=True)
    if isinstance(confidence, bool) or not isinstance(confidence, int | float):
        raise InputError(f"confidence must be a number, got {type(confidence).__name__}")
    if isinstance(confidence, int) and not 0 <= confidence <= 1:  # float(10**400) overflows
        raise InputError(f"confidence must be between 0 and 1, got {show(confidence)}")
    if object is not None and value is not None:
        raise InputError("give either object (an entity name) or value (a literal), not both")
    if object is not None and (not isinstance(object, str) or not object.strip()):
        raise InputError("object must be a non-empty string (an entity name)")
    if object is not None:
        check_text(object, "object")
    if object is None and value is None and not negated:
        raise InputError("add_fact needs an object or a value (or negated=True)")
    if value is not None and not isinstance(value, str | int | float | bool):
        raise InputError(f"value must be a string, number or boolean, got {type(value).__name__}")
    for name, flag in (("negated", negated), ("correction", correction)):
        if not isinstance(flag, bool | int):
            raise InputError(f"{name} must be True or False, got {type(flag).__name__}")
    negated, correction = bool(negated), bool(correction)
    if negated and correction:
        raise InputError("a fact cannot be both negated and a correction")
    if not 0.0 <= float(confidence) <= 1.0:
        raise InputError(f"confidence must be between 0 and 1, got {confidence}")
    start = require_aware(valid_from, "valid_from")
    end = require_aware(valid_to, "valid_to")
    if start is not None and end is not None and end <= start:
        raise InputError("valid_to must be after valid_from")
    try:
        target = object if object is not None else ("" if value is None else str(value))
    except ValueError as exc:  # an int too long to print (sys.get_int_max_str_digits)
        raise InputError(f"value cannot be stored: {exc}") from None
    text = statement or _fact_statement(subject, canon, target, negated)
    kind = "negate" if negated else "correct" if correction else "assert"
    digest = content_hash(
        "fact",
        text,
        source or "",
        start.isoformat() if start else "",
        end.isoformat() if end else "",
        str(negated),
        str(correction),
        json.dumps(value),
        object or "",
    )
    reference = start or utcnow()
    row = EpisodeRow(
        id=make_id("ep", group_id, digest),
        group_id=group_id,
        source=source,
        kind="fact",
        content=text,
        reference_time=to_ms(reference),
        ingested_at=to_ms(utcnow()),
        content_hash=digest,
        metadata={"predicate": canon},
    )
    fact = ExtractedFact(
        subject=subject.strip(),
        predicate=canon,
        object=object.strip() if object is not None else None,
        value=value,
        statement=text,
        valid_from=start,
        valid_to=end,
        kind=kind,
        replaces=replaces,
        confidence=float(confidence),
    )
    # The checks extraction makes (NaN, valid_to before the implied valid_from), before the
    # provenance episode is written: a rejected call leaves the store as it was.
    prepare_facts([fact], reference_time=row.reference_time, predicates=predicates, strict=True)
    return row, Extraction(facts=[fact])


def _fact_statement(subject: str, predicate: str, target: str, negated: bool) -> str:
    if negated:
        words = predicate.replace(".", " ").replace("_", " ")
        return f"{subject} no longer {words} {target}".strip() + "."
    return default_statement(subject, predicate, target)
