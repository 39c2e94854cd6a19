"""The structured extractor: JSON records (robot episodes, tool calls, events) to facts, no LLM.

The subject is the record's ``subject`` | ``entity`` | ``episode`` | ``id`` field
(``{"episode": 743}`` → ``episode 743``). Every other scalar leaf becomes a fact
``(subject, dotted.path, value)`` with numbers and booleans kept typed; a list of scalars becomes
one fact per item (multi-valued); lists of objects are indexed (``steps.0.action``).
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


def record_subject(record: dict[str, Any]) -> tuple[str, str | None]:
    """The subject name of a record and the field it came from."""
    for field in SUBJECT_FIELDS:
        value = record.get(field)
        if value is None or isinstance(value, dict | list):
            continue
        text = str(value).strip()
        if not text:
            continue
        if field in ("episode",) and not text.lower().startswith(field):
            return f"{field} {text}", field
        return text, field
    return "", None


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
            subject = episode.source or f"record {episode.id[-8:]}"
        facts: list[ExtractedFact] = []

        def leaf(path: str, value: Any, functional: bool) -> None:
            if len(facts) >= _MAX_FACTS:
                return
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
            if key == used:
                continue
            walk(_segment(key), value)
        return Extraction(
            entities=[ExtractedEntity(name=subject, type="record")],
            facts=facts,
        )
