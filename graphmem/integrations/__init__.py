"""Agent-facing surfaces of graphmem: LangChain (``graphmem.integrations.langchain``), a LangGraph
store (``graphmem.integrations.langgraph``) and an MCP server (``graphmem.integrations.mcp``).

The LangChain module uses ``langchain-core`` (a base dependency) and the MCP server the ``mcp``
SDK (``pip install 'graphmem[mcp]'``); each is only imported when you import it. This module
needs nothing beyond graphmem: :class:`MemoryToolkit` holds the agent operations (remember,
recall, history, forget, pin, unpin, feedback, and for robots and tool-using agents
record_experience and recall_experiences) as plain methods that take strings and return compact
text for a model to read (a bad argument raises ``InputError``; each surface turns that into
its own kind of tool error). The LangChain tools and the MCP
tools both wrap it, so they answer alike; wrap it the same way for any other agent framework::

    from graphmem import GraphMemory
    from graphmem.integrations import MemoryToolkit

    tools = MemoryToolkit(GraphMemory("memory.db"), group_id="maya", speaker="Maya")
    print(tools.remember("I moved to Porto last month.", reference_time="2024-03-14"))
    print(tools.recall("Where does Maya live?"))
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from .._errors import InputError
from .._memory import GraphMemory
from .._models import Experience, FactRecord, IngestResult
from .._time import parse_datetime, require_aware
from ..experience.index import OUTCOMES

__all__ = ["MemoryToolkit", "describe_experiences", "parse_time"]

DESCRIPTIONS = {
    "remember": (
        "Store something the user said or something that happened (one message or a short "
        "passage) in long-term memory. Facts are extracted from it; a newer statement replaces "
        "an older one (a new address replaces the old address) and corrections ('actually, …') "
        "replace what they correct. Returns what changed."
    ),
    "recall": (
        "Look up what long-term memory knows that is relevant to a question. Returns current "
        "facts with their validity dates, the older values they replaced, and open conflicts. "
        "Use as_of (an ISO date) to ask what was true at an earlier time."
    ),
    "history": (
        "The full timeline of what memory knows about one entity (a person, place, robot, "
        "ticket…), oldest first, including replaced and corrected facts. Optionally only one "
        "predicate such as lives_in or works_at."
    ),
    "record_experience": (
        "Store one attempt at a task (for a robot or a tool-using agent): the task, the state "
        "it started from, the parameters tried, and the outcome (outcome.success true/false). "
        "Call it after every attempt, successful or not, so later attempts can learn from it."
    ),
    "recall_experiences": (
        "Before an attempt, find past attempts like it: by the task described in words and by "
        "nearness to the current state (named numbers or vectors, e.g. object_pos). Returns "
        "whole attempts (state, parameters, outcome), successes first by default, so you can "
        "reuse what worked and avoid what failed."
    ),
    "pin": (
        "Make something a standing rule that every later recall shows first, whatever the "
        "question: either a fact already remembered (its statement exactly as recall showed "
        "it, or its id) or a new rule in words (rule), e.g. 'Never force-push to main'. If "
        "the fact later changes, recall shows the new value and says it changed."
    ),
    "unpin": (
        "Stop showing a pinned fact or rule first in every recall (its statement as recall "
        "showed it, or its id). The fact itself stays remembered."
    ),
    "feedback": (
        "Tell memory whether something recall returned helped: a fact (its statement exactly "
        "as recall showed it, or its id) or an episode id, with useful true or false. Useful "
        "items rank higher in later recalls, unhelpful ones lower; what is true is unchanged."
    ),
    "forget": (
        "Delete from long-term memory either one episode (by the episode id that remember "
        "returned) or one entity with every fact about it. Facts that other episodes also "
        "support are kept."
    ),
}


def parse_time(value: datetime | str | None, argument: str) -> datetime | None:
    """An aware datetime from a datetime or an ISO-8601 string (``Z``/offset, or a bare date)."""
    if value is None:
        return None
    if isinstance(value, datetime):
        return require_aware(value, argument)
    if isinstance(value, str):
        if not value.strip():
            return None
        return parse_datetime(value, argument)
    raise InputError(f"{argument} must be an ISO-8601 string or a datetime, got {value!r}")


def _mapping(value: Mapping[str, Any] | str | None, argument: str) -> dict[str, Any] | None:
    """A JSON object given as a mapping or as JSON text (what agent hosts send)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise InputError(f"{argument} is not valid JSON: {exc.msg}") from None
    if not isinstance(value, Mapping):
        raise InputError(f"{argument} must be a JSON object, got {type(value).__name__}")
    return dict(value)


def _compact(value: Mapping[str, Any], limit: int = 300) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def describe_experiences(found: Sequence[Experience]) -> str:
    """Recalled attempts as a numbered, prompt-ready list."""
    if not found:
        return "No past attempts found."
    lines = [f"{len(found)} past attempt(s), best match first:"]
    for rank, exp in enumerate(found, 1):
        mark = {True: "success", False: "failure", None: "outcome unknown"}[exp.success]
        lines.append(
            f"{rank}. [{mark}] {exp.task} ({exp.subject}, {exp.occurred_at.date().isoformat()},"
            f" id {exp.id})"
        )
        for name in ("state", "params", "outcome"):
            section: dict[str, Any] = getattr(exp, name)
            if section:
                lines.append(f"   {name}: {_compact(section)}")
    return "\n".join(lines)


def _day(value: datetime | None) -> str:
    return "now" if value is None else value.date().isoformat()


@dataclass
class MemoryToolkit:
    """The agent operations on one memory group, as text in and text out.

    - ``memory``: the :class:`~graphmem.GraphMemory` to use.
    - ``group_id``: the memory group (namespace) every call works on.
    - ``speaker``: who first-person text is about when ``remember`` is given no speaker.
    - ``k``: how many facts ``recall`` returns unless it is told otherwise.
    - ``source``: the source recorded on episodes stored by ``remember``.
    """

    memory: GraphMemory
    group_id: str = "default"
    speaker: str | None = None
    k: int = 8
    source: str | None = "agent"

    # ------------------------------------------------------------------ remember
    def remember(
        self,
        text: str,
        *,
        speaker: str | None = None,
        reference_time: datetime | str | None = None,
        source: str | None = None,
    ) -> str:
        """Store ``text`` as an episode; say which facts were added, replaced or conflict."""
        if not isinstance(text, str) or not text.strip():
            raise InputError("text must be a non-empty string")
        who = speaker or self.speaker
        result = self.memory.add_episode(
            text,
            group_id=self.group_id,
            source=source or self.source,
            reference_time=parse_time(reference_time, "reference_time"),
            metadata={"speaker": who} if who else None,
        )
        return self.describe_ingest(result)

    def describe_ingest(self, result: IngestResult) -> str:
        """One short paragraph saying what an ``add_episode`` did."""
        if result.already_present:
            return f"Already remembered (episode {result.episode_id}); nothing changed."
        if result.status == "failed":
            return (
                f"Stored episode {result.episode_id}, but no facts could be extracted: "
                f"{result.error}"
            )
        parts = [f"Remembered episode {result.episode_id}:"]
        added = result.facts_added
        parts.append(f"{added} new fact{'s' if added != 1 else ''}")
        if result.facts_duplicate:
            parts[-1] += f", {result.facts_duplicate} already known"
        lines = [" ".join(parts) + "."]
        ids = [i for pair in (*result.superseded, *result.contradictions) for i in pair]
        known = {f.id: f for f in self._facts(ids)}
        for old, new in result.superseded:
            if old in known and new in known:
                why = f" ({known[old].reason})" if known[old].reason else ""
                lines.append(
                    f"- replaced{why}: {known[old].statement} -> {known[new].statement}"
                )
        for new, other in result.contradictions:
            if new in known and other in known:
                lines.append(
                    f"- CONFLICT: {known[new].statement} vs {known[other].statement} (unresolved)"
                )
        return "\n".join(lines)

    def _facts(self, fact_ids: Sequence[str]) -> list[FactRecord]:
        if not fact_ids:
            return []
        return self.memory.store.fact_records(list(dict.fromkeys(fact_ids)))

    # ------------------------------------------------------------------ recall
    def recall(
        self,
        query: str,
        *,
        as_of: datetime | str | None = None,
        known_at: datetime | str | None = None,
        k: int | None = None,
    ) -> str:
        """Relevant facts as a prompt-ready block (``RecallResult.to_context()``)."""
        result = self.memory.recall(
            query,
            group_id=self.group_id,
            as_of=parse_time(as_of, "as_of"),
            known_at=parse_time(known_at, "known_at"),
            k=self.k if k is None else k,
        )
        return result.to_context()

    # ------------------------------------------------------------------ history
    def history(self, entity: str, *, predicate: str | None = None) -> str:
        """Every fact about ``entity``, oldest first, each marked current, replaced or corrected."""
        facts = self.memory.history(
            entity, predicate=predicate or None, group_id=self.group_id
        )
        about = f"{entity} ({predicate})" if predicate else entity
        if not facts:
            return f"Nothing remembered about {about}."
        lines = [f"History of {about}, oldest first:"]
        for fact in facts:
            span = f"[{_day(fact.valid_from)} → {_day(fact.valid_to)}]"
            if fact.expired_at is not None:
                why = f": {fact.reason}" if fact.reason else ""
                state = f"withdrawn on {fact.expired_at.date().isoformat()}{why}"
            elif fact.valid_to is not None:
                state = "replaced" if fact.superseded_by else "ended"
                state += f": {fact.reason}" if fact.reason else ""
            else:
                state = "current"
            lines.append(f"- {span} {fact.statement} ({state})")
        return "\n".join(lines)

    # ------------------------------------------------------------------ experience
    def record_experience(
        self,
        task: str,
        *,
        state: Mapping[str, Any] | str | None = None,
        params: Mapping[str, Any] | str | None = None,
        outcome: Mapping[str, Any] | str | None = None,
        success: bool | None = None,
        run_id: str | None = None,
        episode: str | int | None = None,
        occurred_at: datetime | str | None = None,
    ) -> str:
        """Store one attempt (``success`` sets ``outcome.success``); say what was stored."""
        result_of = _mapping(outcome, "outcome") or {}
        if success is not None:
            result_of["success"] = success
        result = self.memory.add_experience(
            task,
            state=_mapping(state, "state"),
            params=_mapping(params, "params"),
            outcome=result_of or None,
            run_id=run_id or None,
            episode=episode,
            group_id=self.group_id,
            occurred_at=parse_time(occurred_at, "occurred_at"),
            source=self.source,
        )
        if result.already_present:
            return f"Already recorded (experience {result.episode_id}); nothing changed."
        if result.status == "failed":
            return f"Stored experience {result.episode_id}, but it failed: {result.error}"
        return (
            f"Recorded experience {result.episode_id} ({result.facts_added} new fact(s), "
            f"{len(result.superseded)} replaced)."
        )

    def recall_experiences(
        self,
        query: str = "",
        *,
        state: Mapping[str, Any] | str | None = None,
        k: int = 5,
        outcome: str = "success_first",
        filters: Mapping[str, Any] | str | None = None,
    ) -> str:
        """Past attempts like this one (``describe_experiences`` of the recall)."""
        if outcome not in OUTCOMES:
            raise InputError(f"outcome must be one of {', '.join(OUTCOMES)}, got {outcome!r}")
        found = self.memory.recall_experiences(
            query,
            state=_mapping(state, "state"),
            k=k,
            outcome=outcome,  # type: ignore[arg-type]
            filters=_mapping(filters, "filters"),
            group_id=self.group_id,
        )
        return describe_experiences(found)

    # ------------------------------------------------------------------ usage: pins and feedback
    def _item(self, ref: str, *, episodes: bool) -> str:
        """A fact id (or episode id) as given, else the current fact whose statement is
        ``ref`` as recall's context printed it (a leading "- " and the "[from → to]" dropped)."""
        if not isinstance(ref, str) or not ref.strip():
            raise InputError("give a fact's statement (as recall showed it) or its id")
        text = ref.strip()
        if text.startswith("fact_") or (episodes and text.startswith("ep_")):
            return text
        text = text.removeprefix("- ").split(" [", 1)[0].strip()
        store = self.memory.store
        self.memory.connect()
        hits = [fid for fid, _ in store.text_facts(self.group_id, text, 50)]
        for fact in store.fact_records(hits) if hits else []:
            if fact.statement.strip() == text and fact.is_current():
                return fact.id
        raise InputError(f"no current fact says {text!r}; give its statement as recall showed it")

    def pin(self, fact: str | None = None, *, rule: str | None = None) -> str:
        """Pin a remembered fact (statement or id), or store ``rule`` as a new pinned fact."""
        if (fact is None or not str(fact).strip()) == (rule is None or not str(rule).strip()):
            raise InputError("pin needs exactly one of fact (a remembered fact) or rule (new)")
        if rule is not None and rule.strip():
            self.memory.add_fact(
                self.speaker or "user", "rule", value=rule.strip(), statement=rule.strip(),
                group_id=self.group_id, source=self.source, pinned=True,
            )
            return f"Pinned the rule: {rule.strip()}"
        pinned = self.memory.pin(
            self._item(str(fact), episodes=False), group_id=self.group_id, source=self.source
        )
        return f"Pinned: {pinned.line()[2:]}"

    def unpin(self, fact: str) -> str:
        """Unpin a fact (statement or id)."""
        fact_id = self._item(fact, episodes=False)
        was = self.memory.unpin(fact_id, group_id=self.group_id, source=self.source)
        return f"Unpinned {fact_id}." if was else f"{fact_id} was not pinned; nothing changed."

    def feedback(self, item: str, useful: bool, *, note: str | None = None) -> str:
        """Record whether a recalled fact (statement or id) or episode (id) was useful."""
        item_id = self._item(item, episodes=True)
        self.memory.feedback(
            item_id, useful, group_id=self.group_id, source=self.source, note=note or None
        )
        return f"Noted: {item_id} was {'useful' if useful else 'not useful'}."

    # ------------------------------------------------------------------ forget
    def forget(self, *, episode_id: str | None = None, entity: str | None = None) -> str:
        """Forget one episode or one entity (exactly one of them)."""
        episode_id = episode_id or None
        entity = entity or None
        if (episode_id is None) == (entity is None):
            raise InputError("forget needs exactly one of episode_id or entity")
        result = self.memory.forget(group_id=self.group_id, episode_id=episode_id, entity=entity)
        what = f"episode {episode_id}" if episode_id is not None else f"entity {entity}"
        text = (
            f"Forgot {what}: {result.facts_removed} fact(s), {result.entities_removed} "
            f"entit{'y' if result.entities_removed == 1 else 'ies'} and "
            f"{result.episodes_removed} episode(s) removed"
        )
        if result.facts_kept:
            text += f"; {result.facts_kept} fact(s) kept because other episodes support them"
        return text + "."
