"""The structured extractor: JSON records (robot episodes, tool calls, events) to facts, no LLM.

The subject is the record's ``subject`` | ``entity`` | ``episode`` | ``id`` field
(``{"episode": 743}`` → ``episode 743``), scoped by a run or session id when the record has one
(``{"run_id": "r7", "episode": 1}`` → ``run r7 episode 1``, so runs do not supersede each other);
a record with only a run or session id is that run; a record with none of these is its own
subject (``record <episode id>``), never one shared by a whole file. Every other scalar leaf
becomes a fact ``(subject, dotted.path, value)`` with numbers and booleans kept typed.

Arrays keep their shape:
- a list of numbers is a vector: one fact per position (``pos.0``, ``pos.1``, ``pos.2``), so
  order and repeats survive; past ``VECTOR_FACTS_MAX`` (64) numbers it is payload (a
  trajectory, an observation): kept in the stored episode, not turned into facts; so is a list
  of vectors holding more than 64 numbers in all (``[[x, y, z], ...]``);
- a list of strings or booleans is a set of values (tags): one fact per item (multi-valued);
- a list of objects is indexed (``steps.0.action``).

A record with more than 500 leaves is refused (the episode fails with the reason; nothing is
dropped silently).

``ExperienceExtractor`` reads the records ``GraphMemory.add_experience`` writes: the same
leaves as facts about the attempt, but vectors stay in the record (nearest-neighbour recall
reads them there) and its subject without an id is ``experience <episode id>``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .._errors import InputError
from .._models import EpisodeRecord, ExtractedEntity, ExtractedFact, Extraction
from ._base import ExtractionContext

__all__ = [
    "VECTOR_FACTS_MAX",
    "ExperienceExtractor",
    "StructuredExtractor",
    "count_leaves",
    "experience_subject",
    "is_payload",
    "is_vector",
    "parse_json_record",
    "record_subject",
    "segment",
]

SUBJECT_FIELDS = ("subject", "entity", "episode", "id")
RUN_FIELDS = ("run_id", "run", "session_id", "session")
_SEGMENT = re.compile(r"[^a-z0-9_]+")
_MAX_FACTS = 500
VECTOR_FACTS_MAX = 64


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


def experience_subject(record: dict[str, Any], episode_id: str) -> tuple[str, list[str]]:
    """An attempt's subject: ``run r7 episode 17``; ``run r7 experience <id>`` without an
    episode number (each attempt of a run is its own subject); ``experience <id>`` with
    neither."""
    subject, used = record_subject(record)
    if set(used) & {"episode", "id", "subject", "entity"}:
        return subject, used
    own = f"experience {episode_id[-8:]}"
    return (f"{subject} {own}" if subject else own), used


def segment(key: str) -> str:
    """A record key as a path segment (the form filters and fact predicates use)."""
    seg = _SEGMENT.sub("_", str(key).strip().lower()).strip("_")
    if not seg:
        seg = "field"
    if not seg[0].isalpha():
        seg = "f_" + seg
    return seg


def _statement(subject: str, path: str, value: Any) -> str:
    shown = json.dumps(value) if isinstance(value, bool) or value is None else str(value)
    return f"{subject} {path.replace('_', ' ')} = {shown}"


def is_vector(node: Any) -> bool:
    """A non-empty list of numbers (booleans are not numbers here)."""
    return (
        isinstance(node, list)
        and bool(node)
        and all(isinstance(x, int | float) and not isinstance(x, bool) for x in node)
    )


def is_payload(node: Any) -> bool:
    """Numbers too many to be facts: a vector past ``VECTOR_FACTS_MAX`` numbers, or a list of
    vectors (a trajectory, an observation matrix) holding more than that in all."""
    if is_vector(node):
        return len(node) > VECTOR_FACTS_MAX
    if isinstance(node, list) and node and all(is_vector(row) for row in node):
        return sum(len(row) for row in node) > VECTOR_FACTS_MAX
    return False


def count_leaves(node: Any) -> int:
    """How many facts a record's value can become at most (the 500 cap counts these)."""
    if isinstance(node, dict):
        return sum(count_leaves(v) for v in node.values())
    if isinstance(node, list):
        if is_payload(node):
            return 0
        if is_vector(node):
            return len(node)
        return sum(count_leaves(v) for v in node)
    return 0 if node is None else 1


class StructuredExtractor:
    name = "structured"
    needs_context = False
    # Vectors become one fact per position; False leaves them in the record only.
    vector_facts = True
    # Whether a fact keeps its ``path=value`` text as evidence (its span on the provenance).
    evidence = True

    def __init__(self, subject_fields: tuple[str, ...] = SUBJECT_FIELDS) -> None:
        self.subject_fields = subject_fields

    def subject(self, record: dict[str, Any], episode_id: str) -> tuple[str, list[str]]:
        """The record's subject and the fields it came from (left out of the facts)."""
        subject, used = record_subject(record)
        # Its own subject otherwise: records of one file must not supersede each other.
        return subject or f"record {episode_id[-8:]}", used

    def fields(self, record: dict[str, Any], used: list[str]) -> list[tuple[str, Any]]:
        """The top-level fields whose leaves become facts: all but the subject's."""
        return [(k, v) for k, v in record.items() if k not in used]

    def extract(self, episode: EpisodeRecord, context: ExtractionContext) -> Extraction:
        record = parse_json_record(episode.content)
        subject, used = self.subject(record, episode.id)
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
                    evidence=(
                        f"{path}={json.dumps(value, ensure_ascii=False)}"[:200]
                        if self.evidence
                        else None
                    ),
                )
            )

        def walk(prefix: str, node: Any) -> None:
            if isinstance(node, dict):
                for key, child in node.items():
                    walk(f"{prefix}.{segment(key)}" if prefix else segment(key), child)
            elif is_payload(node):
                return  # kept in the episode as it came, not turned into facts
            elif is_vector(node):
                # Order and repeats are the data (a position, a velocity): one fact per index.
                if self.vector_facts:
                    for index, item in enumerate(node):
                        leaf(f"{prefix}.{index}", item, True)
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

        for key, value in self.fields(record, used):
            walk(segment(key), value)
        return Extraction(
            entities=[ExtractedEntity(name=subject, type="record")],
            facts=facts,
        )


class ExperienceExtractor(StructuredExtractor):
    """The records of ``GraphMemory.add_experience``: vectors stay in the record."""

    name = "experience"
    vector_facts = False
    evidence = False  # the value is the evidence: a span would repeat it on every row

    def fields(self, record: dict[str, Any], used: list[str]) -> list[tuple[str, Any]]:
        # What was tried and whether it worked are facts with history (the settings a robot
        # learns); the task, the state and the other outcome values stay in the record, where
        # experience recall searches, measures and filters them and general recall finds the
        # episode. Every fact costs a row, an index entry and a provenance claim.
        out: list[tuple[str, Any]] = []
        if isinstance(record.get("params"), dict):
            out.append(("params", record["params"]))
        outcome = record.get("outcome")
        if isinstance(outcome, dict) and isinstance(outcome.get("success"), bool):
            out.append(("outcome", {"success": outcome["success"]}))
        return out

    def subject(self, record: dict[str, Any], episode_id: str) -> tuple[str, list[str]]:
        return experience_subject(record, episode_id)
