"""LangChain integration: a retriever over graphmem facts and agent tools.

Uses ``langchain-core``, a base dependency that only this import loads::

    from graphmem import GraphMemory
    from graphmem.integrations.langchain import GraphMemRetriever, make_memory_tools

    memory = GraphMemory("memory.db")
    retriever = GraphMemRetriever(memory=memory, group_id="maya", k=5)
    docs = retriever.invoke("Where does Maya live?")          # or: await retriever.ainvoke(...)
    docs = retriever.invoke("Where did Maya live?", as_of=datetime(2024, 2, 1, tzinfo=UTC), k=3)

    tools = make_memory_tools(memory, group_id="maya", speaker="Maya")  # remember, recall, history
    model_with_tools = chat_model.bind_tools(tools)

    robot_tools = make_experience_tools(memory, group_id="arm1")  # record/recall_experience(s)

Each ``Document`` is one fact: ``page_content`` is its statement and ``metadata`` carries its ids,
subject/predicate/object/value, valid time and record time (ISO-8601 strings), score, source
episodes, the statements it superseded and open conflicts (see :func:`fact_to_document`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from datetime import datetime
from typing import Any, Literal

try:
    from langchain_core.callbacks import (
        AsyncCallbackManagerForRetrieverRun,
        CallbackManagerForRetrieverRun,
    )
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever
    from langchain_core.tools import BaseTool, StructuredTool, ToolException
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "graphmem.integrations.langchain needs langchain-core, which every install of graphmem "
        f"includes; this environment lacks it (pip install --force-reinstall graphmem): {exc}"
    ) from exc
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .._errors import GraphMemError, InputError
from .._memory import GraphMemory
from .._models import FactHit, RecallResult
from .._time import require_aware
from . import DESCRIPTIONS, MemoryToolkit

__all__ = [
    "FeedbackInput",
    "GraphMemRetriever",
    "HistoryInput",
    "PinInput",
    "RecallExperiencesInput",
    "RecallInput",
    "RecordExperienceInput",
    "RememberInput",
    "UnpinInput",
    "describe_invalid_arguments",
    "fact_to_document",
    "make_experience_tools",
    "make_memory_tools",
    "make_usage_tools",
]

_QUERY_OPTIONS = frozenset({"k", "as_of", "known_at", "hops", "filters", "group_id"})
_IGNORED_OPTIONS = frozenset({"verbose"})


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def fact_to_document(hit: FactHit) -> Document:
    """One recalled fact as a LangChain ``Document`` (content: the statement).

    Metadata keys: ``fact_id``, ``group_id``, ``subject``, ``subject_id``, ``predicate``,
    ``object``, ``object_id``, ``value``, ``valid_from``, ``valid_to``, ``recorded_at``,
    ``expired_at`` (ISO-8601 or ``None``), ``current``, ``confidence``, ``score``,
    ``episode_ids``, ``sources`` (the source of each supporting episode, de-duplicated),
    ``superseded`` / ``superseded_ids`` (the statements this fact replaced, oldest first, and
    their ids), ``conflicts`` / ``conflict_ids`` (open contradictions) and ``reason`` (why this
    fact itself stopped holding, if it did).
    """
    sources = [e.source for e in hit.episodes if e.source]
    episode_ids = list(dict.fromkeys([*hit.episode_ids, *(e.id for e in hit.episodes)]))
    metadata: dict[str, Any] = {
        "fact_id": hit.id,
        "group_id": hit.group_id,
        "subject": hit.subject,
        "subject_id": hit.subject_id,
        "predicate": hit.predicate,
        "object": hit.object,
        "object_id": hit.object_id,
        "value": hit.value,
        "valid_from": _iso(hit.valid_from),
        "valid_to": _iso(hit.valid_to),
        "recorded_at": _iso(hit.recorded_at),
        "expired_at": _iso(hit.expired_at),
        "current": hit.is_current(),
        "confidence": hit.confidence,
        "score": hit.score,
        "reason": hit.reason,
        "episode_ids": episode_ids,
        "sources": list(dict.fromkeys(sources)),
        "superseded": [old.statement for old in hit.superseded],
        "superseded_ids": [old.id for old in hit.superseded],
        "conflicts": [other.statement for other in hit.contradicts],
        "conflict_ids": [other.id for other in hit.contradicts],
    }
    return Document(id=hit.id, page_content=hit.statement, metadata=metadata)


class GraphMemRetriever(BaseRetriever):
    """A LangChain retriever over a :class:`~graphmem.GraphMemory` (no LLM call at query time).

    Fields (all settable at construction; ``k``, ``as_of``, ``known_at``, ``hops``, ``filters``
    and ``group_id`` can also be given per call: ``retriever.invoke(query, k=3)``):

    - ``memory``: the memory to read.
    - ``group_id``: the memory group (default ``"default"``).
    - ``k``: how many facts to return (1–1000, default 10).
    - ``as_of``: world time to ask about (timezone-aware; ``None`` = now).
    - ``known_at``: record time: what memory believed then (``None`` = now).
    - ``hops``: graph expansion depth, 0–3 (default 2).
    - ``filters``: conditions on the subject's literal facts,
      e.g. ``{"success": True, "params.force_peak": {"$lt": 13}}``.

    ``ainvoke`` runs the recall in a worker thread, so an event loop is never blocked.
    """

    memory: GraphMemory
    group_id: str = "default"
    k: int = Field(default=10, ge=1, le=1000)
    as_of: datetime | None = None
    known_at: datetime | None = None
    hops: int = Field(default=2, ge=0, le=3)
    filters: dict[str, Any] | None = None

    model_config = ConfigDict(arbitrary_types_allowed=True)

    @field_validator("as_of", "known_at")
    @classmethod
    def _aware(cls, value: datetime | None, info: Any) -> datetime | None:
        return require_aware(value, str(info.field_name))

    def _options(self, overrides: Mapping[str, Any]) -> dict[str, Any]:
        unknown = set(overrides) - _QUERY_OPTIONS - _IGNORED_OPTIONS
        if unknown:
            raise TypeError(
                f"GraphMemRetriever got unexpected argument(s) {sorted(unknown)}; "
                f"it accepts {sorted(_QUERY_OPTIONS)}"
            )
        options: dict[str, Any] = {
            "group_id": self.group_id,
            "k": self.k,
            "as_of": self.as_of,
            "known_at": self.known_at,
            "hops": self.hops,
            "filters": self.filters,
        }
        options.update({key: overrides[key] for key in _QUERY_OPTIONS if key in overrides})
        return options

    def recall(self, query: str, **overrides: Any) -> RecallResult:
        """The full :class:`~graphmem.RecallResult` (for ``to_context()``), same options."""
        return self.memory.recall(query, **self._options(overrides))

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        result = self.memory.recall(query, **self._options(kwargs))
        return [fact_to_document(hit) for hit in result.facts]

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        options = self._options(kwargs)
        result = await asyncio.to_thread(self.memory.recall, query, **options)
        return [fact_to_document(hit) for hit in result.facts]


# ----------------------------------------------------------------------------- tools


class RememberInput(BaseModel):
    """Arguments of the ``remember`` tool."""

    text: str = Field(
        min_length=1,
        description="What to remember: one message or a short passage, in the speaker's words.",
    )
    speaker: str | None = Field(
        default=None,
        description="Who said it (first-person text is about this person); "
        "default: the conversation's user.",
    )
    reference_time: str | None = Field(
        default=None,
        description="When it was said or happened, ISO-8601 with Z or an offset "
        "(2024-05-01T10:00:00Z) or a date (2024-05-01); default: now.",
    )


class RecallInput(BaseModel):
    """Arguments of the ``recall`` tool."""

    query: str = Field(min_length=1, description="The question or topic to look up.")
    as_of: str | None = Field(
        default=None,
        description="Ask what was true at this time (ISO-8601 or a date); default: now.",
    )
    k: int | None = Field(default=None, ge=1, le=50, description="How many facts at most.")


class HistoryInput(BaseModel):
    """Arguments of the ``history`` tool."""

    entity: str = Field(
        min_length=1, description="The entity's name, e.g. a person, place, robot or ticket."
    )
    predicate: str | None = Field(
        default=None, description="Only this relation, e.g. lives_in or works_at."
    )


class RecordExperienceInput(BaseModel):
    """Arguments of the ``record_experience`` tool."""

    task: str = Field(min_length=1, description="The task attempted, in words.")
    state: dict[str, Any] | None = Field(
        default=None,
        description="The state it started from: named values, numbers or vectors, e.g. "
        '{"object": "red cube", "object_pos": [0.1, 0.2, 0.0]}.',
    )
    params: dict[str, Any] | None = Field(
        default=None, description="The parameters or actions tried."
    )
    outcome: dict[str, Any] | None = Field(
        default=None, description="What came of it (measurements)."
    )
    success: bool | None = Field(default=None, description="Whether it succeeded.")
    run_id: str | None = Field(default=None, description="The run or session it belongs to.")
    episode: int | None = Field(
        default=None, description="Its number within the run; omit for a new one."
    )


class RecallExperiencesInput(BaseModel):
    """Arguments of the ``recall_experiences`` tool."""

    query: str = Field(default="", description="The task or situation, in words.")
    state: dict[str, Any] | None = Field(
        default=None, description="The current state: named numbers or vectors to be near."
    )
    k: int = Field(default=5, ge=1, le=50, description="How many attempts at most.")
    outcome: Literal["any", "success_first", "success_only", "failure_only"] = Field(
        default="success_first", description="Which attempts and in what order."
    )
    filters: dict[str, Any] | None = Field(
        default=None,
        description='Conditions every attempt must meet, e.g. {"state.object": "red cube"}.',
    )


class PinInput(BaseModel):
    """Arguments of the ``pin`` tool."""

    fact: str | None = Field(
        default=None,
        description="A remembered fact: its statement exactly as recall showed it, or its id.",
    )
    rule: str | None = Field(default=None, description="Or a new standing rule, in words.")


class UnpinInput(BaseModel):
    """Arguments of the ``unpin`` tool."""

    fact: str = Field(min_length=1, description="The pinned fact's statement, or its id.")


class FeedbackInput(BaseModel):
    """Arguments of the ``feedback`` tool."""

    item: str = Field(
        min_length=1,
        description="A fact's statement as recall showed it, or a fact or episode id.",
    )
    useful: bool = Field(description="Whether it helped.")
    note: str | None = Field(default=None, description="Why, in a few words.")


def _guarded(
    call: Callable[..., str],
) -> tuple[Callable[..., str], Callable[..., Awaitable[str]]]:
    """Run a toolkit call; graphmem's errors become ``ToolException`` for the agent."""

    def run(**kwargs: Any) -> str:
        try:
            return str(call(**kwargs))
        except GraphMemError as exc:
            raise ToolException(str(exc)) from exc

    async def arun(**kwargs: Any) -> str:
        return await asyncio.to_thread(run, **kwargs)

    return run, arun


def make_memory_tools(
    memory: GraphMemory,
    *,
    group_id: str = "default",
    speaker: str | None = None,
    k: int = 8,
    source: str | None = "agent",
) -> list[BaseTool]:
    """The ``remember``, ``recall`` and ``history`` tools for an agent, on one memory group.

    Each returns compact text. Errors in the arguments (a date without a timezone, an unknown
    entity) come back to the agent as the tool's answer instead of raising.
    """
    if not isinstance(group_id, str) or not group_id.strip():
        raise InputError(f"group_id must be a non-empty string, got {group_id!r}")
    kit = MemoryToolkit(memory, group_id=group_id, speaker=speaker, k=k, source=source)

    def remember(text: str, speaker: str | None = None, reference_time: str | None = None) -> str:
        return kit.remember(text, speaker=speaker, reference_time=reference_time)

    def recall(query: str, as_of: str | None = None, k: int | None = None) -> str:
        return kit.recall(query, as_of=as_of, k=k)

    def history(entity: str, predicate: str | None = None) -> str:
        return kit.history(entity, predicate=predicate)

    return _tools(
        [
            ("remember", remember, RememberInput),
            ("recall", recall, RecallInput),
            ("history", history, HistoryInput),
        ]
    )


def describe_invalid_arguments(exc: ValidationError | Any) -> str:
    """A tool's argument errors as one line the model can act on (instead of raising): each
    argument and what is wrong with it, without pydantic's links and input dumps."""
    problems: list[str] = []
    errors = exc.errors() if hasattr(exc, "errors") else []
    for error in errors:
        where = ".".join(str(part) for part in error.get("loc", ())) or "arguments"
        problems.append(f"{where}: {error.get('msg', 'invalid')}")
    listed = "; ".join(problems) or str(exc)
    return f"Invalid arguments ({listed}). Correct them and call the tool again."


def _tools(specs: list[tuple[str, Callable[..., str], type[BaseModel]]]) -> list[BaseTool]:
    """One ``StructuredTool`` per (name, toolkit call, argument schema). graphmem's errors and
    arguments that fail the schema both come back as the tool's text answer."""
    tools: list[BaseTool] = []
    for name, func, schema in specs:
        run, arun = _guarded(func)
        tools.append(
            StructuredTool.from_function(
                func=run,
                coroutine=arun,
                name=name,
                description=DESCRIPTIONS[name],
                args_schema=schema,
                handle_tool_error=True,
                handle_validation_error=describe_invalid_arguments,
            )
        )
    return tools


def make_experience_tools(
    memory: GraphMemory,
    *,
    group_id: str = "default",
    source: str | None = "agent",
) -> list[BaseTool]:
    """The ``record_experience`` and ``recall_experiences`` tools (experience memory for a
    robot or a tool-using agent), on one memory group. Each returns compact text; bad
    arguments come back to the agent as the tool's answer."""
    if not isinstance(group_id, str) or not group_id.strip():
        raise InputError(f"group_id must be a non-empty string, got {group_id!r}")
    kit = MemoryToolkit(memory, group_id=group_id, source=source)
    return _tools(
        [
            ("record_experience", kit.record_experience, RecordExperienceInput),
            ("recall_experiences", kit.recall_experiences, RecallExperiencesInput),
        ]
    )


def make_usage_tools(
    memory: GraphMemory,
    *,
    group_id: str = "default",
    speaker: str | None = None,
    source: str | None = "agent",
) -> list[BaseTool]:
    """The ``pin``, ``unpin`` and ``feedback`` tools (standing rules and usefulness feedback;
    see docs/memory-usage.md), on one memory group. Bad arguments come back to the agent as the
    tool's answer."""
    if not isinstance(group_id, str) or not group_id.strip():
        raise InputError(f"group_id must be a non-empty string, got {group_id!r}")
    kit = MemoryToolkit(memory, group_id=group_id, speaker=speaker, source=source)

    def pin(fact: str | None = None, rule: str | None = None) -> str:
        return kit.pin(fact, rule=rule)

    def feedback(item: str, useful: bool, note: str | None = None) -> str:
        return kit.feedback(item, useful, note=note)

    return _tools(
        [("pin", pin, PinInput), ("unpin", kit.unpin, UnpinInput),
         ("feedback", feedback, FeedbackInput)]
    )
