"""What parsing input files yields: records, problems with file and line, and the checks
every parsed episode passes (those ``GraphMemory.add_episodes`` makes)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from .._errors import InputError

__all__ = [
    "EPISODE_KINDS",
    "Invalid",
    "ParseResult",
    "Problem",
    "SourceError",
    "SourceRecord",
    "json_type",
    "validate_episode",
]

EPISODE_KINDS = ("message", "text", "json", "event")
# The choices the parsers take (here, not in ``_sources``, so that the command line can build
# its options without loading the parsers).
FORMATS = ("auto", "chat", "jsonl", "events", "transcript", "prose")
PER_CHOICES = ("message", "paragraph", "conversation", "file")
INPUT_EXTENSIONS = (".json", ".jsonl", ".ndjson", ".md", ".markdown", ".txt")
STDIN_NAME = "stdin"


# --------------------------------------------------------------------------------- errors
@dataclass(frozen=True)
class Problem:
    """One invalid record: where it is and what is wrong."""

    file: str
    line: int | None
    field: str | None
    reason: str

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        if self.field:
            return f"{where}: {self.field}: {self.reason}"
        return f"{where}: {self.reason}"

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "field": self.field, "reason": self.reason}


class SourceError(InputError):
    """Input files hold invalid records; nothing was written. ``problems`` lists every one."""

    code = "source"

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = list(problems)
        count = len(self.problems)
        first = str(self.problems[0]) if self.problems else "no details"
        more = f" (and {count - 1} more)" if count > 1 else ""
        super().__init__(f"{count} invalid record{'s' if count != 1 else ''}: {first}{more}")

    def lines(self) -> list[str]:
        return [str(p) for p in self.problems]


# --------------------------------------------------------------------------------- results
@dataclass
class SourceRecord:
    """One episode ready for ``GraphMemory.add_episode(**episode)``, and where it came from."""

    file: str
    line: int | None
    episode: dict[str, Any]


@dataclass
class ParseResult:
    records: list[SourceRecord] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    formats: dict[str, str] = field(default_factory=dict)  # file -> format used
    skipped: list[str] = field(default_factory=list)  # files in directories not read (extension)

    def extend(self, other: ParseResult) -> None:
        self.records.extend(other.records)
        self.problems.extend(other.problems)
        self.files.extend(other.files)
        self.formats.update(other.formats)
        self.skipped.extend(other.skipped)

    def episodes(self) -> list[dict[str, Any]]:
        return [r.episode for r in self.records]

    def raise_for_problems(self) -> None:
        if self.problems:
            raise SourceError(self.problems)


class Invalid(Exception):
    """A problem inside one record (internal; collected into ``Problem``)."""

    def __init__(self, field: str | None, reason: str, line: int | None = None) -> None:
        super().__init__(reason)
        self.field = field
        self.reason = reason
        self.line = line


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object"


def validate_episode(episode: Mapping[str, Any], prefix: str = "") -> None:
    """The checks ``GraphMemory.add_episodes`` makes, so that nothing fails after validation."""
    content = episode.get("content")
    if not isinstance(content, str):
        raise Invalid(prefix + "content", f"must be a string, got {json_type(content)}")
    if not content.strip():
        raise Invalid(prefix + "content", "is empty")
    if "\x00" in content:
        raise Invalid(prefix + "content", "contains a NUL character")
    kind = episode.get("kind")
    if kind not in EPISODE_KINDS:
        raise Invalid(prefix + "kind", f"must be one of {', '.join(EPISODE_KINDS)}, "
                                        f"got {json.dumps(kind)}")
    if kind == "json":
        try:
            parsed = json.loads(content)
        except json.JSONDecodeError as exc:
            raise Invalid(prefix + "content", f"kind json needs JSON content: {exc.msg}") from None
        if not isinstance(parsed, dict):
            raise Invalid(prefix + "content", "kind json needs a JSON object")
    source = episode.get("source")
    if source is not None and (not isinstance(source, str) or not source.strip()):
        raise Invalid(prefix + "source", "must be a non-empty string")
    group = episode.get("group_id")
    if not isinstance(group, str) or not group.strip():
        raise Invalid(prefix + "group_id", "must be a non-empty string")
    when = episode.get("reference_time")
    if when is not None and (not isinstance(when, datetime) or when.tzinfo is None):
        raise Invalid(prefix + "reference_time", "must be a timezone-aware date-time")
    try:
        json.dumps(episode.get("metadata") or {}, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise Invalid(prefix + "metadata", f"must be JSON-serialisable: {exc}") from None
