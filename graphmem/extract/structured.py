"""The structured extractor: JSON records (robot episodes, tool calls, events) to facts, no LLM.

The subject is the record's ``subject`` | ``entity`` | ``episode`` | ``id`` field
(``{"episode": 743}`` → ``episode 743``), scoped by a run or session id when the record has one
(``{"run_id": "r7", "episode": 1}`` → ``run r7 episode 1``, so runs do not supersede each other);
a record with only a run or session id is that run; a record with none of these is its own
subject (``record <episode id>``), never one shared by a whole file. Every other scalar leaf
becomes a fact
``(subject, dotted.path, value)`` with numbers and booleans kept typed; a list of scalars becomes
one fact per item (multi-valued); lists of objects are indexed (``steps.0.action``). A record
with more than 500 leaves is refused (the episode fails with the reason; nothing is dropped
silently).
"""

from __future__ import annotations

import json
import re
from typing import Any

from .._errors import InputError
from .._models import EpisodeRecord, ExtractedEntity, ExtractedFact, Extraction
from ._base import ExtractionContext

__all__ = ["StructuredExtractor", "parse_json_record", "record_subject"]

SUBJECT_FIELDS = ("subject", "entity", "episode", "id")
RUN_FIELDS = ("run_id", "run", "session_id", "session")
_SEGMENT = re.compile(r"[^a-z0-9_]+")
_MAX_FACTS = 500


def parse_json_record(content: str) -> dict[str, Any]:
    try:
        record = json.loads(content)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"kind='json' content is not valid JSON: {exc.msg} at line {exc.lineno} "
            f"column {exc.colno}"
        ) from None
    except (ValueError, RecursionError) as exc:  # a number too long, nesting too deep
        raise InputError(f"kind='json' content cannot be read: {exc}") from None
    if not isinstance(record, dict):
        raise InputError(f"kind='json' content must be a JSON object, got {type(record).__name__}")
    return record


def _field_text(record: dict[str, Any], fields: tuple[str, ...]) -> tuple[str, str | None]:
    for field in fields:
        value = record.get(field)
        if value is None or isinstance(value, dict | list):
            continue
        text = str(value).strip()
        if text:
            return text, field
    return "", None


def record_subject(record: dict[str, Any]) -> tuple[str, list[str]]:
    """The subject name of a record and the fields it came from (left out of the facts)."""
    subject, field = _field_text(record, SUBJECT_FIELDS)
    if field == "episode" and not subject.lower().startswith("episode"):
        subject = f"episode {subject}"
    run, run_field = _field_text(record, RUN_FIELDS)
    if run_field is not None:
        word = run_field.split("_")[0]  # "run" or "session"
        if not run.lower().startswith(word):
            run = f"{word} {run}"
    used = [f for f in (field, run_field) if f is not None]
    if subject and run:
        return f"{run} {subject}", used
    return subject or run, used


def _segment(key: str) -> str:
    seg = _SEGMENT.sub("_", str(key).strip().lower()).strip("_")
    if not seg:
        seg = "field"
    if not seg[0].isalpha():
        seg = "f_" + seg
    return seg


def _statement(subject: str, path: str, value: Any) -> str:
    shown = json.dumps(value) if isinstance(value, bool) or value is None else str(value)
    return f"{subject} {path.replace('_', ' ')} = {shown}"


class StructuredExtractor:
    name = "structured"
    needs_context = False

    def __init__(self, subject_fields: tuple[str, ...] = SUBJECT_FIELDS) -> None:
        self.subject_fields = subject_fields

    def extract(self, episode: EpisodeRecord, context: ExtractionContext) -> Extraction:
        record = parse_json_record(episode.content)
        subject, used = record_subject(record)
        if not subject:
            # Its own subject: records of one file must not supersede each other.
            subject = f"record {episode.id[-8:]}"
        facts: list[ExtractedFact] = []

        def leaf(path: str, value: Any, functional: bool) -> None:
            if len(facts) >= _MAX_FACTS:
                raise InputError(
                    f"the record has more than {_MAX_FACTS} leaf values; at most {_MAX_FACTS} "
                    "become facts: split it into several records (nothing was stored from it)"
                )
            if isinstance(value, float) and value != value:  # NaN has no equality
                return
            facts.append(
                ExtractedFact(
                    subject=subject,
                    predicate=path,
                    value=value,
                    statement=_statement(subject, path, value),
                    subject_type="record",
                    functional=functional,
                    evidence=f"{path}={json.dumps(value, ensure_ascii=False)}"[:200],
                )
            )

        def walk(prefix: str, node: Any) -> None:
            if isinstance(node, dict):
                for key, child in node.items():
                    walk(f"{prefix}.{_segment(key)}" if prefix else _segment(key), child)
            elif isinstance(node, list):
                if all(not isinstance(x, dict | list) for x in node):
                    for item in node:
                        if item is not None:
                            leaf(prefix, item, False)
                else:
                    for index, child in enumerate(node):
                        walk(f"{prefix}.{index}", child)
            elif node is not None:
                leaf(prefix, node, True)

        for key, value in record.items():
            if key in used:
                continue
            walk(_segment(key), value)
        return Extraction(
            entities=[ExtractedEntity(name=subject, type="record")],
            facts=facts,
        )
