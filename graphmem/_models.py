"""Public data models: what goes into memory and what comes back out.

All datetimes are timezone-aware UTC (naive input is rejected at this boundary).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ._time import require_aware

__all__ = [
    "EntityRecord",
    "EpisodeRecord",
    "EpisodeRef",
    "Experience",
    "ExtractedEntity",
    "ExtractedFact",
    "Extraction",
    "FactHit",
    "FactRecord",
    "ForgetResult",
    "IngestResult",
    "PinnedFact",
    "RecallResult",
    "Scalar",
]

Scalar = str | int | float | bool
EpisodeKind = Literal[
    "message", "text", "json", "event", "fact", "experience", "pin", "feedback"
]
EpisodeStatus = Literal["pending", "extracted", "failed"]
FactKind = Literal["assert", "negate", "correct"]
Relation = Literal["new", "same_as", "supersedes", "contradicts", "corrects", "negates"]


def _aware(value: datetime | None, info: Any) -> datetime | None:
    return require_aware(value, info.field_name)


class _Model(BaseModel):
    # Validators are built on first use, not at import: a process pays only for the models it
    # validates (importing this module costs about 50 ms less on the CI machine).
    model_config = ConfigDict(frozen=False, extra="forbid", defer_build=True)


# ----------------------------------------------------------------------------- extraction


class ExtractedEntity(_Model):
    """An entity an extractor saw in an episode."""

    name: str = Field(min_length=1)
    type: str = "entity"
    aliases: list[str] = Field(default_factory=list)


class ExtractedFact(_Model):
    """One fact an extractor read from an episode, before resolution and reconciliation.

    ``kind`` says whether the episode asserts, negates ("no longer lives in Paris") or corrects
    ("it was never X") the fact. ``replaces`` names the old object/value a correction removes.
    ``relation``/``related_fact_id``/``reason`` carry an LLM's claim about an existing fact; the
    reconciler checks every claim against the temporal rules.
    """

    subject: str = Field(min_length=1)
    predicate: str = Field(min_length=1)
    object: str | None = None
    value: Scalar | None = None
    statement: str = ""
    subject_type: str = "entity"
    object_type: str = "entity"
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    kind: FactKind = "assert"
    replaces: str | None = None
    relation: Relation | None = None
    related_fact_id: str | None = None
    reason: str | None = None
    evidence: str | None = None
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)
    functional: bool | None = None  # cardinality hint for predicates the registry doesn't know

    check_times = field_validator("valid_from", "valid_to")(_aware)


class Extraction(_Model):
    """What an extractor returns for one episode, with its cost.

    ``llm_calls`` counts every request sent to the model's endpoint (what the server counts):
    ``llm_retries`` of them failed and were retried, ``llm_failed_calls`` failed for good,
    ``llm_repairs`` were repair calls. ``warnings`` says what of the answer was dropped
    (an unusable optional field, an invalid fact) without failing the episode.
    """

    entities: list[ExtractedEntity] = Field(default_factory=list)
    facts: list[ExtractedFact] = Field(default_factory=list)
    llm_calls: int = 0
    llm_retries: int = 0
    llm_repairs: int = 0
    llm_failed_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    warnings: list[str] = Field(default_factory=list)


# ----------------------------------------------------------------------------- records


class EpisodeRecord(_Model):
    """A stored episode (raw input, kept before and whatever the extraction does)."""

    id: str
    group_id: str
    source: str | None
    kind: EpisodeKind
    content: str
    reference_time: datetime
    ingested_at: datetime
    content_hash: str
    status: EpisodeStatus
    extractor: str | None = None
    error: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class EpisodeLink(_Model):
    """A later turn (``src``) that states a new value of what an earlier one (``dst``) of the
    same speaker stated: ``kind`` UPDATES, ``reason`` the change ("45 → 52 (sources,
    zotero)")."""

    kind: str
    src: str
    dst: str
    reason: str


class EpisodeRef(_Model):
    """Where a fact came from; in ``RecallResult.episodes``, a returned turn with its links to
    the other returned turns."""

    id: str
    source: str | None
    reference_time: datetime
    metadata: dict[str, Any] = Field(default_factory=dict)
    content: str | None = None
    links: list[EpisodeLink] = Field(default_factory=list)


class EntityRecord(_Model):
    id: str
    name: str
    type: str
    aliases: list[str] = Field(default_factory=list)
    summary: str | None = None
    score: float | None = None


class FactRecord(_Model):
    """A fact with its two time axes and why it stopped holding, if it did."""

    id: str
    statement: str
    subject: str
    predicate: str
    object: str | None = None
    value: Scalar | None = None
    valid_from: datetime
    valid_to: datetime | None = None
    recorded_at: datetime
    expired_at: datetime | None = None
    confidence: float = 1.0
    superseded_by: str | None = None
    reason: str | None = None
    episode_ids: list[str] = Field(default_factory=list)
    group_id: str = "default"
    subject_id: str = ""
    object_id: str | None = None
    decided_by: str = "rule"

    @property
    def target(self) -> str:
        """The object's name, or the literal value as text."""
        if self.object is not None:
            return self.object
        return "" if self.value is None else str(self.value)

    def is_current(self) -> bool:
        return self.valid_to is None and self.expired_at is None


class FactHit(FactRecord):
    """A fact returned by recall, with its score, sources, the history it replaced and conflicts."""

    score: float = 0.0
    episodes: list[EpisodeRef] = Field(default_factory=list)
    superseded: list[FactRecord] = Field(default_factory=list)
    contradicts: list[FactRecord] = Field(default_factory=list)


class PinnedFact(_Model):
    """A pinned fact as a recall's time view sees it (``GraphMemory.pin``).

    ``status``: ``current`` (the pinned fact holds), ``changed`` (it was superseded or
    corrected: ``current`` holds what replaced it), ``ended`` (it stopped holding and nothing
    replaced it) or ``not_yet`` (the view is from before it held).
    """

    fact_id: str
    statement: str
    pinned_at: datetime
    source: str | None = None
    pin_episode_id: str
    status: Literal["current", "changed", "ended", "not_yet"] = "current"
    current: list[FactRecord] = Field(default_factory=list)

    def line(self) -> str:
        """The pin as one line of a prompt."""
        if self.status == "changed" and self.current:
            now = "; ".join(f.statement for f in self.current)
            return f"- {now} (changed; was: {self.statement})"
        if self.status == "ended":
            return f"- {self.statement} (no longer true)"
        if self.status == "not_yet":
            return f"- {self.statement} (not yet true at this time)"
        return f"- {self.statement}"


class RecallResult(_Model):
    query: str
    group_id: str
    as_of: datetime | None = None
    known_at: datetime | None = None
    facts: list[FactHit] = Field(default_factory=list)
    entities: list[EntityRecord] = Field(default_factory=list)
    episodes: list[EpisodeRef] = Field(default_factory=list)
    # Pinned facts of the group, in pin order, whatever the query (RetrievalConfig.pinned_limit
    # of them; pinned_omitted says how many more there are).
    pinned: list[PinnedFact] = Field(default_factory=list)
    pinned_omitted: int = 0

    def to_context(self, *, max_facts: int | None = None) -> str:
        """A compact block for a prompt: the standing rules (pinned facts) first, then current
        facts, replaced values marked, open conflicts."""
        lines: list[str] = []
        shown: set[str] = set()
        if self.pinned:
            lines.append("Standing rules (pinned):")
            for pin in self.pinned:
                lines.append(pin.line())
                shown.update([pin.fact_id, *(f.id for f in pin.current)])
            if self.pinned_omitted:
                lines.append(f"- … and {self.pinned_omitted} more pinned (not shown)")
        when = ""
        if self.as_of is not None:
            when = f" as of {self.as_of.date().isoformat()}"
        lines.append(f"Memory{when} for: {self.query}")
        hits = self.facts if max_facts is None else self.facts[:max_facts]
        hits = [h for h in hits if h.id not in shown]  # said once, in the rules above
        if not hits:
            lines.append("- (nothing relevant remembered)")
        for hit in hits:
            span = _span(hit.valid_from, hit.valid_to)
            line = f"- {hit.statement} [{span}]"
            if hit.valid_to is not None and hit.valid_to <= (self.as_of or _now()):
                line += " (no longer true)"
            lines.append(line)
            for old in hit.superseded:
                why = f", {old.reason}" if old.reason else ""
                lines.append(
                    f"    replaced: {old.statement} [{_span(old.valid_from, old.valid_to)}{why}]"
                )
            for other in hit.contradicts:
                lines.append(f"    CONFLICT with: {other.statement} (unresolved)")
        lines.extend(self._turn_changes())
        return "\n".join(lines)

    def _turn_changes(self) -> list[str]:
        """The UPDATES links between returned turns, dated, older side first."""
        when = {ep.id: ep.reference_time.date().isoformat() for ep in self.episodes}
        said = {ep.id: _snippet(ep.content or ep.id) for ep in self.episodes}
        seen: dict[tuple[str, str], str] = {}
        for ep in self.episodes:
            for link in ep.links:
                if link.src in when and link.dst in when:
                    seen[(link.dst, link.src)] = link.reason
        if not seen:
            return []
        lines = ["Changed between turns (the later turn states the newer value):"]
        for (old, new), reason in seen.items():
            before, after = f'"{said[old]}" [{when[old]}]', f'"{said[new]}" [{when[new]}]'
            lines.append(f"- {reason}: {before} → {after}")
        return lines


def _now() -> datetime:
    from ._time import utcnow

    return utcnow()


def _snippet(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _span(start: datetime, end: datetime | None) -> str:
    left = start.date().isoformat()
    right = "now" if end is None else end.date().isoformat()
    return f"{left} → {right}"


# What an LLM extraction costs, summed per memory (``stats()["llm_usage"]``) and reported on
# each ``IngestResult``.
USAGE_FIELDS = frozenset(
    {
        "llm_calls",
        "llm_retries",
        "llm_repairs",
        "llm_failed_calls",
        "prompt_tokens",
        "completion_tokens",
    }
)


class IngestResult(_Model):
    episode_id: str
    status: str
    facts_added: int = 0
    facts_duplicate: int = 0
    superseded: list[tuple[str, str]] = Field(default_factory=list)
    contradictions: list[tuple[str, str]] = Field(default_factory=list)
    llm_calls: int = 0
    llm_retries: int = 0
    llm_repairs: int = 0
    llm_failed_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    already_present: bool = False
    error: str | None = None
    warnings: list[str] = Field(default_factory=list)


# How ``recall_experiences`` treats outcomes (defined here so the command line's choices do not
# load the experience index).
Outcome = Literal["any", "success_first", "success_only", "failure_only"]
OUTCOMES: tuple[str, ...] = ("any", "success_first", "success_only", "failure_only")


class Experience(_Model):
    """One past attempt, recalled whole (``GraphMemory.recall_experiences``).

    ``state``, ``params``, ``outcome`` and ``meta`` are the mappings that were stored, arrays in
    their order. ``success`` is ``outcome["success"]`` when that is a boolean. ``payload`` is
    ``None`` unless the recall asked for it. ``score`` orders the results; ``scores`` holds its
    parts (``text``, ``state``, ``recency``, each 0–1) and ``state_distance`` (the scaled
    distance to the asked state; absent when the recall named no state or the attempt lacks a
    field).
    """

    id: str
    group_id: str
    subject: str
    task: str
    run_id: str | None = None
    episode: str | None = None
    state: dict[str, Any] = Field(default_factory=dict)
    params: dict[str, Any] = Field(default_factory=dict)
    outcome: dict[str, Any] = Field(default_factory=dict)
    meta: dict[str, Any] = Field(default_factory=dict)
    payload: dict[str, Any] | None = None
    success: bool | None = None
    occurred_at: datetime
    score: float = 0.0
    scores: dict[str, float] = Field(default_factory=dict)


class ForgetResult(_Model):
    group_id: str
    episodes_removed: int = 0
    facts_removed: int = 0
    entities_removed: int = 0
    facts_kept: int = 0
    audit_id: str | None = None
    # forget(entity=...) without episodes=True: the episodes the entity spoke or that state a
    # fact about it, kept (their text still names it); episodes=True removes them.
    own_episodes_kept: int = 0
    own_episode_ids_kept: list[str] = Field(default_factory=list)
