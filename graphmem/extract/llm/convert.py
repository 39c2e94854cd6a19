"""The answer turned into graphmem's ``Extraction``, and the calls and tokens it cost."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass

from pydantic import ValidationError

from ..._errors import BudgetExceededError, LLMError
from ..._models import EpisodeRecord, ExtractedEntity, ExtractedFact, Extraction
from .._base import ExtractionContext
from .answer import Answer, Kind, error_line, parse_model_time
from .ground import evidence_in, fallback_statement, mentions, usable_statement
from .messages import clip

__all__ = ["Usage", "charged_to", "states_time", "to_extraction"]

log = logging.getLogger("graphmem")

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

    Grounding (``_llm_ground``): evidence that is not quoted from this episode is dropped with a
    warning, and the whole fact is left out (with a warning) when its object or value is not in
    the episode either: the model restated a fact from elsewhere, and a provenance link would
    point at an episode that never said it. A statement that is not about the subject (a copy of
    the episode in the first person, or one that omits the subject or the object) is replaced by
    one built from subject, predicate and object.
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
        target = obj if obj is not None else _text_value(value)
        evidence = clip(item.evidence, 300) if item.evidence else None
        if evidence is not None and not evidence_in(evidence, episode.content):
            raw_target = item.object if item.object is not None else target
            if (
                raw_target is not None
                and obj != context.speaker  # "I"/"me": the speaker, named or not
                and not mentions(episode.content, raw_target)
            ):
                warnings.append(
                    f"facts.{index}: evidence {clip(evidence, 80)!r} and {raw_target!r} are not "
                    "in this episode (a fact from elsewhere); left out"
                )
                continue
            warnings.append(
                f"facts.{index}.evidence: {clip(evidence, 80)!r} is not quoted from this "
                "episode; dropped"
            )
            evidence = None
        statement = clip(item.statement, 500) if item.statement else ""
        if not usable_statement(statement, subject, target):
            built = fallback_statement(subject, item.predicate, target, kind == "negate")
            log.debug(
                "graphmem: %s fact %d: statement %r -> %r", episode.id, index, statement, built
            )
            statement = built
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
                    statement=statement,
                    subject_type=types.get(subject, "entity"),
                    object_type=types.get(obj, "entity") if obj is not None else "entity",
                    valid_from=valid_from,
                    valid_to=valid_to,
                    kind=kind,
                    replaces=item.replaces,
                    relation=relation,
                    related_fact_id=fact_id if relation is not None else None,
                    reason=clip(item.reason, 200) if item.reason else None,
                    evidence=evidence,
                )
            )
        except ValidationError as exc:
            warnings.append(error_line(f"facts.{index}", exc) + "; left out")
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


def _text_value(value: object) -> str | None:
    """A value as the words a statement would hold (none for a bare true/false)."""
    if value is None or isinstance(value, bool):
        return None
    return str(value)
