"""The model's answer: a small flat pydantic model, its JSON schema, the prompt around it, and
the conversion into graphmem's ``Extraction``. Shared by the ``llm`` and ``langchain`` extractors.

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
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
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

from .._errors import BudgetExceededError, GraphMemError, LLMError
from .._models import EpisodeRecord, ExtractedEntity, ExtractedFact, Extraction
from .._prompts import Prompt
from .._time import parse_datetime
from ._base import ExtractionContext
from ._llm_json import AnswerFormatError, loads_object

__all__ = [
    "Answer",
    "AnswerEntity",
    "AnswerFact",
    "ContextLimits",
    "InvalidAnswer",
    "answer_json_schema",
    "build_messages",
    "charged_to",
    "estimate_tokens",
    "parse_answer",
    "repair_message",
    "to_extraction",
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
_TYPE_SYNONYMS = {
    "city": "place",
    "country": "place",
    "location": "place",
    "region": "place",
    "company": "organization",
    "organisation": "organization",
    "org": "organization",
    "employer": "organization",
    "human": "person",
    "people": "person",
    "object": "thing",
    "item": "thing",
    "product": "thing",
}
_FIRST_PERSON = frozenset({"i", "me", "my", "myself", "mine", "speaker", "the speaker"})


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
        low = value.strip().lower().replace("-", "_").replace(" ", "_") if isinstance(
            value, str
        ) else value
        low = _RELATION_SYNONYMS.get(low, low) if isinstance(low, str) else low
        if low is None or low in _RELATIONS:
            return low or "new"
        _warn(info, f"relation {value!r} is not one of {', '.join(_RELATIONS)}; read as new")
        return "new"


class Answer(BaseModel):
    """Entities and facts read from one episode."""

    model_config = ConfigDict(extra="ignore")

    entities: list[AnswerEntity]
    facts: list[AnswerFact]
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
        for key, model in (("entities", AnswerEntity), ("facts", AnswerFact)):
            items = data.get(key)
            if not isinstance(items, list):
                continue  # the field's own validation names the problem
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
                    problems.append(_one_line(where, exc))
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


# ----------------------------------------------------------------------------- the prompt


@dataclass(frozen=True)
class ContextLimits:
    """Caps on what goes into the prompt besides the episode (small models, small windows)."""

    max_facts: int = 20
    max_fact_chars: int = 3000
    max_previous: int = 3
    max_previous_chars: int = 1500
    max_episode_chars: int = 24000


def _iso(when: datetime) -> str:
    text = when.astimezone(UTC).isoformat().replace("+00:00", "Z")
    return text.replace(".000Z", "Z")


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: max(0, limit - 1)] + "…"


def build_messages(
    prompt: Prompt,
    episode: EpisodeRecord,
    context: ExtractionContext,
    limits: ContextLimits | None = None,
) -> tuple[list[dict[str, str]], dict[str, str]]:
    """The chat messages for one episode, and the short fact aliases (``F1`` → fact id) used."""
    limits = limits or ContextLimits()
    aliases: dict[str, str] = {}
    lines: list[str] = []
    used = 0
    for fact in context.facts[: limits.max_facts]:
        alias = f"F{len(aliases) + 1}"
        since = fact.valid_from.date().isoformat()
        until = f" until {fact.valid_to.date().isoformat()}" if fact.valid_to else ""
        line = f"[{alias}] ({fact.predicate}) {_clip(fact.statement, 200)} since {since}{until}"
        if used + len(line) > limits.max_fact_chars:
            break
        aliases[alias] = fact.id
        lines.append(line)
        used += len(line) + 1
    known = "\n".join(lines) or "(none)"

    previous: list[str] = []
    used = 0
    recent = context.previous[-limits.max_previous :] if limits.max_previous > 0 else []
    for earlier in reversed(recent):
        line = f"- {_iso(earlier.reference_time)}: {_clip(earlier.content, 400)}"
        if used + len(line) > limits.max_previous_chars:
            break
        previous.insert(0, line)
        used += len(line) + 1
    content = episode.content
    if len(content) > limits.max_episode_chars:
        log.warning(
            "graphmem: episode %s is %d characters; the prompt carries the first %d",
            episode.id,
            len(content),
            limits.max_episode_chars,
        )
        content = content[: limits.max_episode_chars]
    functional = [p.name for p in context.predicates if p.cardinality == "one"]
    messages = prompt.render(
        speaker=context.speaker,
        reference_time=_iso(episode.reference_time),
        functional_predicates=", ".join(functional) or "(none)",
        known_facts=known,
        previous="\n".join(previous) or "(none)",
        episode=content,
    )
    return messages, aliases


def estimate_tokens(messages: list[dict[str, str]], extra_chars: int = 0) -> int:
    """About four characters a token, plus a few tokens of framing per message."""
    chars = sum(len(m.get("content") or "") for m in messages) + extra_chars
    return chars // 4 + 4 * len(messages) + 1


# ----------------------------------------------------------------------------- the answer


class InvalidAnswer(ValueError):
    """The model's reply could not be used; ``str(exc)`` is written to be shown to the model."""

    def __init__(self, message: str, *, truncated: bool = False) -> None:
        super().__init__(message)
        self.truncated = truncated


def _one_line(where: str, exc: ValidationError) -> str:
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


def repair_message(error: InvalidAnswer) -> str:
    """The user turn of the repair call: what was wrong, and what to do."""
    if error.truncated:
        return (
            "Your answer was cut off before the JSON was complete. Answer again with the complete "
            "JSON object only: fewer, shorter facts; short statements and evidence."
        )
    return (
        f"Your answer could not be used: {error}\n"
        'Answer again with only the JSON object: {"entities": [...], "facts": [...]}, every '
        "field as described. No other text."
    )


# ----------------------------------------------------------------------------- conversion

_TIME_WORDS = re.compile(
    r"\b(1[89]\d\d|2[01]\d\d|\d{1,2}[/.]\d{1,2}|"
    r"jan(uary)?|feb(ruary)?|mar(ch)?|apr(il)?|((in|on|since|until|by|from|mid|early|late)[- ])"
    r"may|may \d{1,2}|june?|july?|aug(ust)?|sep(t|tember)?|"
    r"oct(ober)?|nov(ember)?|dec(ember)?|monday|tuesday|wednesday|thursday|friday|saturday|"
    r"sunday|tomorrow|tonight|next|starting|from now|in \w+ (days?|weeks?|months?|years?)|"
    r"\d{1,2}(:\d\d)?\s*(am|pm)|o'clock)\b",
    re.IGNORECASE,
)


def states_time(text: str) -> bool:
    """Whether ``text`` says when something happens (a year, a month, a weekday, "next …")."""
    return _TIME_WORDS.search(text) is not None


def _entity_type(raw: str) -> str:
    low = re.sub(r"[\s\-]+", "_", raw.strip().lower()) or "entity"
    return _TYPE_SYNONYMS.get(low, low)


def _who(name: str, speaker: str) -> str:
    return speaker if name.strip().lower() in _FIRST_PERSON else name


@dataclass
class Usage:
    """LLM requests and tokens spent on one episode: ``calls`` counts every request sent (what
    the server counts), of which ``retries`` failed and were retried, ``failed`` failed for
    good and ``repairs`` were repair calls."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    retries: int = 0
    repairs: int = 0
    failed: int = 0

    def as_dict(self) -> dict[str, int]:
        return {
            "llm_calls": self.calls,
            "llm_retries": self.retries,
            "llm_repairs": self.repairs,
            "llm_failed_calls": self.failed,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
        }


@contextmanager
def charged_to(usage: Usage) -> Iterator[None]:
    """An episode that fails still reports what it spent: the error carries ``usage``."""
    try:
        yield
    except (LLMError, BudgetExceededError) as exc:
        exc.usage = usage.as_dict()
        raise


def to_extraction(
    answer: Answer,
    episode: EpisodeRecord,
    context: ExtractionContext,
    aliases: Mapping[str, str],
    usage: Usage | None = None,
) -> Extraction:
    """Turn a validated answer into graphmem's ``Extraction`` (usage counts left at zero).

    Fact aliases (``F1``) map back to fact ids; an id the prompt did not show is passed on as
    given and the reconciler drops it. A ``valid_from``/``valid_to`` after the episode's time is
    kept only when the episode states a time; otherwise the model made it up and it is dropped.
    """
    types: dict[str, str] = {}
    entities: list[ExtractedEntity] = []
    for entity in answer.entities:
        name = _who(entity.name, context.speaker)
        if name in types:
            continue
        types[name] = _entity_type(entity.type)
        entities.append(ExtractedEntity(name=name, type=types[name]))
    reference = episode.reference_time
    dated = states_time(episode.content)
    facts: list[ExtractedFact] = []
    warnings: list[str] = []
    for index, item in enumerate(answer.facts):
        subject = _who(item.subject, context.speaker)
        obj = _who(item.object, context.speaker) if item.object is not None else None
        value = None if obj is not None else item.value
        kind: Kind = item.kind
        if item.relation == "negates":
            kind = "negate"
        elif item.relation == "corrects":
            kind = "correct"
        valid_from = parse_model_time(item.valid_from) if item.valid_from else None
        valid_to = parse_model_time(item.valid_to) if item.valid_to else None
        if not dated:
            if valid_from is not None and valid_from > reference:
                log.info(
                    "graphmem: %s fact %d: dropped valid_from %s (after the episode, and the "
                    "episode states no time)",
                    episode.id,
                    index,
                    item.valid_from,
                )
                valid_from = None
            if valid_to is not None and valid_to > reference:
                valid_to = None
        relation = None if item.relation == "new" else item.relation
        fact_id = None
        if relation is not None and item.fact_id:
            key = item.fact_id.strip().strip("[]")
            fact_id = aliases.get(key) or aliases.get(key.upper()) or key
        try:
            facts.append(
                ExtractedFact(
                    subject=subject,
                    predicate=item.predicate,
                    object=obj,
                    value=value,
                    statement=_clip(item.statement, 500) if item.statement else "",
                    subject_type=types.get(subject, "entity"),
                    object_type=types.get(obj, "entity") if obj is not None else "entity",
                    valid_from=valid_from,
                    valid_to=valid_to,
                    kind=kind,
                    replaces=item.replaces,
                    relation=relation,
                    related_fact_id=fact_id if relation is not None else None,
                    reason=_clip(item.reason, 200) if item.reason else None,
                    evidence=_clip(item.evidence, 300) if item.evidence else None,
                )
            )
        except ValidationError as exc:
            warnings.append(_one_line(f"facts.{index}", exc) + "; left out")
    usage = usage or Usage()
    return Extraction(
        entities=entities,
        facts=facts,
        llm_calls=usage.calls,
        llm_retries=usage.retries,
        llm_repairs=usage.repairs,
        llm_failed_calls=usage.failed,
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
        warnings=list(answer.warnings) + warnings,
    )
