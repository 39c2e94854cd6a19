"""The model's answer: a small flat pydantic model, its JSON schema and its validation. Shared
by the ``llm`` and ``langchain`` extractors (the prompt is built in ``_llm_prompt``, the answer
turned into an ``Extraction`` in ``_llm_convert``).

The answer model is deliberately flat (two lists of flat objects, short field names, enums as
plain strings) so that small local models can follow it. The JSON schema sent to the model is
the contract: every constraint the validator checks is in it (ISO date patterns, enums,
lengths, snake_case predicates). Validation is lenient where leniency is safe (case of enums,
``"null"`` strings, dates without a timezone); an unusable optional field (a date written as
"last month", an unknown kind) is dropped and an invalid fact or entity is left out, each with a
warning on the answer (``Answer.warnings``), so one bad field never fails an episode. Only an
answer with no usable content (not JSON, no ``facts`` list, every fact invalid) is an error, and
it is phrased so that it can be shown back to the model in the repair call.
"""

from __future__ import annotations

import copy
import logging
import re
from datetime import datetime
from functools import lru_cache
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.json_schema import SkipJsonSchema

from ..._errors import GraphMemError
from ..._time import parse_datetime
from .json_reply import AnswerFormatError, loads_object

__all__ = [
    "MAX_ENTITIES",
    "MAX_FACTS",
    "Answer",
    "AnswerEntity",
    "AnswerFact",
    "InvalidAnswer",
    "Kind",
    "answer_json_schema",
    "error_line",
    "parse_answer",
    "parse_model_time",
    "validation_text",
]

log = logging.getLogger("graphmem")

Kind = Literal["assert", "negate", "correct"]
RelationName = Literal["new", "same_as", "supersedes", "contradicts", "corrects", "negates"]
_KINDS = ("assert", "negate", "correct")
_RELATIONS = ("new", "same_as", "supersedes", "contradicts", "corrects", "negates")
# What the schema tells the model (the validator reads more: "2024-03", "2024", offsets).
ISO_DATE = (
    r"^[0-9]{4}(-[0-9]{2}(-[0-9]{2}"
    # [.] not \.: llama.cpp's schema-to-grammar converter rejects the escape (0.3.36).
    r"([T ][0-9]{2}:[0-9]{2}(:[0-9]{2}([.][0-9]+)?)?(Z|[+-][0-9]{2}:?[0-9]{2})?)?)?)?$"
)
# Items per array (the schema's maxItems; the validator keeps the first ones, with a warning).
MAX_ENTITIES = 20
MAX_FACTS = 20
PREDICATE = r"^[a-z][a-z0-9_]*$"
FACT_ALIAS = r"^F[0-9]+$"

_NULLS = frozenset({"", "null", "none", "n/a", "na", "unknown", "-"})
_RELATION_SYNONYMS = {
    "none": "new",
    "add": "new",
    "added": "new",
    "duplicate": "same_as",
    "same": "same_as",
    "sameas": "same_as",
    "replaces": "supersedes",
    "supersede": "supersedes",
    "updates": "supersedes",
    "update": "supersedes",
    "contradict": "contradicts",
    "conflicts": "contradicts",
    "correct": "corrects",
    "correction": "corrects",
    "negate": "negates",
    "ends": "negates",
}
_KIND_SYNONYMS = {"negation": "negate", "negated": "negate", "correction": "correct"}


_FREE_TEXT = {"reason": 200, "evidence": 300}


def _clip_text(value: Any, limit: int) -> Any:
    if isinstance(value, str) and len(value) > limit:
        return value[: limit - 1] + "…"
    return value


def _warn(info: ValidationInfo, message: str) -> None:
    """Record what was dropped on the answer being validated (``Answer._items`` passes the
    list and the item's place as the validation context)."""
    context = info.context if isinstance(info.context, dict) else None
    if context is not None and isinstance(context.get("warnings"), list):
        context["warnings"].append(f"{context.get('where', 'answer')}.{info.field_name}: {message}")
    else:
        log.info("graphmem: answer field %s: %s", info.field_name, message)


def _null(value: Any) -> Any:
    if isinstance(value, str) and value.strip().lower() in _NULLS:
        return None
    return value


# Nullable strings with a pattern: pydantic puts field constraints on the anyOf's string branch
# only when they are in the type, so the schema is given here.
_DATE_SCHEMA: dict[str, Any] = {
    "anyOf": [{"type": "string", "pattern": ISO_DATE}, {"type": "null"}]
}
_ALIAS_SCHEMA: dict[str, Any] = {
    "anyOf": [{"type": "string", "pattern": FACT_ALIAS}, {"type": "null"}]
}


class AnswerEntity(BaseModel):
    """An entity the episode mentions."""

    model_config = ConfigDict(extra="ignore")

    name: str = Field(min_length=1, max_length=300)
    type: str = Field(default="entity", max_length=50)

    @field_validator("name", mode="before")
    @classmethod
    def _strip(cls, value: Any) -> Any:
        return value.strip() if isinstance(value, str) else value

    @field_validator("type", mode="before")
    @classmethod
    def _type(cls, value: Any) -> Any:
        value = _null(value)
        return "entity" if value is None else value


class AnswerFact(BaseModel):
    """One fact the episode states, and its relation to a known fact."""

    model_config = ConfigDict(extra="ignore")

    subject: str = Field(min_length=1, max_length=300)
    # The schema asks for snake_case; the validator also folds "Lives In" (prepare_facts).
    predicate: str = Field(min_length=1, max_length=100, json_schema_extra={"pattern": PREDICATE})
    object: str | None = Field(default=None, max_length=300)
    value: str | int | float | bool | None = None
    statement: str = Field(default="", max_length=500)
    valid_from: str | None = Field(default=None, json_schema_extra=_DATE_SCHEMA)
    valid_to: str | None = Field(default=None, json_schema_extra=_DATE_SCHEMA)
    kind: Kind = "assert"
    replaces: str | None = None
    relation: RelationName = "new"
    fact_id: str | None = Field(default=None, json_schema_extra=_ALIAS_SCHEMA)
    reason: str | None = Field(default=None, max_length=200)
    evidence: str | None = Field(default=None, max_length=300)

    @field_validator("subject", "predicate", mode="before")
    @classmethod
    def _strip(cls, value: Any) -> Any:
        return value.strip() if isinstance(value, str) else value

    @field_validator("object", "replaces", "fact_id", "reason", "evidence", mode="before")
    @classmethod
    def _optional_text(cls, value: Any, info: ValidationInfo) -> Any:
        value = _null(value)
        value = value.strip() if isinstance(value, str) else value
        if info.field_name in _FREE_TEXT:
            return _clip_text(value, _FREE_TEXT[info.field_name])
        return value

    @field_validator("statement", mode="before")
    @classmethod
    def _statement(cls, value: Any) -> Any:
        # Free text: too long is clipped (the schema's maxLength tells the model the limit).
        return "" if value is None else _clip_text(value, 500)

    @field_validator("value", mode="before")
    @classmethod
    def _value(cls, value: Any) -> Any:
        if isinstance(value, str) and value.strip().lower() in ("", "null", "none"):
            return None
        return value

    @field_validator("valid_from", "valid_to", mode="before")
    @classmethod
    def _time(cls, value: Any, info: ValidationInfo) -> Any:
        value = _null(value)
        if value is None:
            return None
        try:
            if not isinstance(value, str):
                raise ValueError(f"{value!r} is not an ISO date like 2024-05-01")
            parse_model_time(value)
        except ValueError as exc:
            _warn(info, f"{exc}; dropped")  # an optional field: the fact stays, undated
            return None
        return value.strip()

    @field_validator("kind", mode="before")
    @classmethod
    def _kind(cls, value: Any, info: ValidationInfo) -> Any:
        value = _null(value)
        low = value.strip().lower() if isinstance(value, str) else value
        low = _KIND_SYNONYMS.get(low, low) if isinstance(low, str) else low
        if low is None or low in _KINDS:
            return low or "assert"
        _warn(info, f"kind {value!r} is not one of {', '.join(_KINDS)}; read as assert")
        return "assert"

    @field_validator("relation", mode="before")
    @classmethod
    def _relation(cls, value: Any, info: ValidationInfo) -> Any:
        value = _null(value)
        low = (
            value.strip().lower().replace("-", "_").replace(" ", "_")
            if isinstance(value, str)
            else value
        )
        low = _RELATION_SYNONYMS.get(low, low) if isinstance(low, str) else low
        if low is None or low in _RELATIONS:
            return low or "new"
        _warn(info, f"relation {value!r} is not one of {', '.join(_RELATIONS)}; read as new")
        return "new"


class Answer(BaseModel):
    """Entities and facts read from one episode."""

    model_config = ConfigDict(extra="ignore")

    # maxItems: under a grammar, a small model that starts repeating an item must close the
    # array here instead of looping until the token cap (recorded: tests/fixtures/llm_real).
    entities: list[AnswerEntity] = Field(max_length=MAX_ENTITIES)
    facts: list[AnswerFact] = Field(max_length=MAX_FACTS)
    # What validation dropped from them (not in the schema: the model never writes it).
    warnings: SkipJsonSchema[list[str]] = Field(default_factory=list, exclude=True)

    @model_validator(mode="before")
    @classmethod
    def _items(cls, data: Any) -> Any:
        """Validate each entity and fact on its own: an invalid one is left out with a warning;
        only a ``facts`` list whose every fact is invalid fails the answer."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        warnings: list[str] = list(data.get("warnings") or [])
        for key, model, most in (
            ("entities", AnswerEntity, MAX_ENTITIES),
            ("facts", AnswerFact, MAX_FACTS),
        ):
            items = data.get(key)
            if not isinstance(items, list):
                continue  # the field's own validation names the problem
            if len(items) > most:
                warnings.append(
                    f"{key}: {len(items)} items, at most {most} (maxItems); the rest left out"
                )
                items = items[:most]
            kept: list[BaseModel] = []
            problems: list[str] = []
            for index, item in enumerate(items):
                if isinstance(item, model):
                    kept.append(item)
                    continue
                where = f"{key}.{index}"
                try:
                    kept.append(
                        model.model_validate(item, context={"warnings": warnings, "where": where})
                    )
                except ValidationError as exc:
                    problems.append(error_line(where, exc))
            if key == "facts" and items and not kept:
                raise ValueError("no fact could be used: " + " | ".join(problems[:5]))
            warnings.extend(f"{p}; left out" for p in problems)
            data[key] = kept
        data["warnings"] = warnings
        return data


def parse_model_time(text: str) -> datetime:
    """A model's date: ISO date or date-time (no offset → UTC), or ``YYYY-MM`` / ``YYYY``."""
    raw = text.strip()
    if re.fullmatch(r"\d{4}", raw):
        raw = f"{raw}-01-01"
    elif re.fullmatch(r"\d{4}-\d{2}", raw):
        raw = f"{raw}-01"
    try:
        return parse_datetime(raw, "date", assume_utc=True)
    except GraphMemError:
        raise ValueError(f"{text!r} is not an ISO date like 2024-05-01") from None


# ----------------------------------------------------------------------------- JSON schema


# Defaults and titles are noise to a model (strict mode requires every field anyway); lengths
# and patterns stay: they are what the validator checks.
_DROPPED_KEYWORDS = frozenset({"default", "title"})


def _strict(node: Any) -> Any:
    """OpenAI strict-mode schema: every property required, no extra keys, no defaults/titles."""
    if isinstance(node, dict):
        out = {k: _strict(v) for k, v in node.items() if k not in _DROPPED_KEYWORDS}
        if out.get("type") == "object" and "properties" in out:
            out["required"] = list(out["properties"])
            out["additionalProperties"] = False
        return out
    if isinstance(node, list):
        return [_strict(v) for v in node]
    return node


@lru_cache(maxsize=1)
def _schema() -> dict[str, Any]:
    schema: dict[str, Any] = _strict(Answer.model_json_schema())
    return schema


def answer_json_schema() -> dict[str, Any]:
    """The strict JSON schema of ``Answer`` (a fresh copy)."""
    return copy.deepcopy(_schema())


# ----------------------------------------------------------------------------- the answer


class InvalidAnswer(ValueError):
    """The model's reply could not be used; ``str(exc)`` is written to be shown to the model."""

    def __init__(self, message: str, *, truncated: bool = False) -> None:
        super().__init__(message)
        self.truncated = truncated


def error_line(where: str, exc: ValidationError) -> str:
    parts = []
    for error in exc.errors()[:3]:
        field = ".".join(str(p) for p in error["loc"])
        parts.append(f"{where}.{field}: {error['msg']}" if field else f"{where}: {error['msg']}")
    return "; ".join(parts)


def validation_text(exc: ValidationError, limit: int = 10) -> str:
    lines = []
    for error in exc.errors()[:limit]:
        where = ".".join(str(p) for p in error["loc"]) or "(top level)"
        lines.append(f"- {where}: {error['msg']}")
    more = exc.error_count() - limit
    if more > 0:
        lines.append(f"- … and {more} more")
    return "\n".join(lines)


def parse_answer(text: str | None, *, truncated: bool = False) -> Answer:
    """Validate a reply (``<think>`` and fences stripped). Raises ``InvalidAnswer``."""
    if truncated:
        raise InvalidAnswer(
            "the answer was cut off at the length limit before the JSON object was complete",
            truncated=True,
        )
    try:
        data = loads_object(text)
    except AnswerFormatError as exc:
        raise InvalidAnswer(str(exc)) from None
    try:
        return Answer.model_validate(data)
    except ValidationError as exc:
        raise InvalidAnswer(
            "the JSON does not match the schema:\n" + validation_text(exc)
        ) from None
