"""Parse files and records into episodes for ``GraphMemory.add_episodes`` (validation first).

Used by ``graphmem ingest`` and usable from Python::

    from graphmem._sources import load_episodes
    episodes = load_episodes(["chat.json", "robot.jsonl"])   # raises SourceError listing problems
    memory.add_episodes(episodes)

Formats (``format=``; ``"auto"`` picks one from the extension, then the content):

``chat``
    An OpenAI-style ``messages`` list, or ``{"messages": [...]}``, or LangChain message dicts
    (``{"type": "human", "data": {"content": ...}}`` as written by ``messages_to_dict``, or
    ``{"type": "human", "content": ...}``). One ``kind="message"`` episode per message, or one
    ``kind="text"`` episode per file with ``per="conversation"``. ``metadata.speaker`` is the
    message's ``name``, else the conversation's ``speakers[role]``, else the role;
    ``metadata.role`` is the role (``human`` → ``user``, ``ai`` → ``assistant``). ``system`` and
    ``developer`` messages, and assistant messages that only carry tool calls, are skipped.
``jsonl``
    One JSON object per line (lines end at ``\n``, so U+2028 inside a string is data). An
    object with ``content`` is an episode (``content, reference_time, source, kind, metadata,
    group_id``; a ``group_id`` other than ``group_id=`` is refused when
    ``allow_other_groups=False``, as ``graphmem --group G ingest`` does); an object without
    ``content`` is an *event record* (robot episode, tool call, agent step): a ``kind="json"``
    episode whose content is the record itself, for the structured extractor. A line holding
    ``{"messages": [...]}`` is a whole chat conversation. A ``.json`` file that is a list of
    such objects (or one object) is read the same way.
``events``
    Like ``jsonl`` but every object is an event record, even one with a ``content`` field.
``transcript``
    Text or markdown with ``Speaker: text`` lines (``**Speaker:** text`` too). A line may start
    with a timestamp in brackets: ``[2024-05-01 10:00]``, ``[2024-05-01T10:00:00+02:00]``, or a
    bare ``[10:05]`` after a dated line; a line holding only a timestamp (a heading like
    ``## 2024-05-01`` too) sets the time of the lines after it. **Timestamps without an offset
    are taken as UTC.** A non-blank line that is not ``Speaker: text`` continues the previous
    turn. One ``kind="message"`` episode per turn, or one per file with ``per="conversation"``.
``prose``
    Plain text: one ``kind="text"`` episode per paragraph (blank-line separated), or one per file
    with ``per="file"``. No reference time (the ingest time is used).

Times: ``reference_time`` / ``timestamp`` / ``time`` / ``ts`` / ``created_at`` fields (and ``date``
for chat) hold ISO-8601 with ``Z`` or an offset, a bare date, or epoch seconds (epoch
milliseconds when above 10^11). In JSON formats a date-time without an offset is an error unless
``assume_utc=True``. Messages that share a timestamp (or inherit the file's) are spaced 1 ms apart
in file order, so a later statement in the same conversation supersedes an earlier one.

The source of every episode is the file's name (``stdin`` for standard input) unless a record
names its own, so ingesting the same file twice is a no-op: episode ids derive from the content,
source and time. Every problem is reported as ``FILE:LINE: field: reason`` and *all* of them are
collected before anything is written: ``SourceError.problems`` holds the list. Line-oriented
input (JSONL) is judged line by line, whatever the reason (invalid JSON, bytes that are not UTF-8,
a bad field), so skipping the invalid records keeps every valid line; a whole-file input (a chat
document, a JSON array, a transcript, prose) that is not UTF-8 is one problem naming the file.
Directories expand to the files with a known extension (``INPUT_EXTENSIONS``); the other files
found there are listed in ``ParseResult.skipped`` (names starting with ``.`` are not looked at).
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from ._errors import InputError
from ._time import parse_datetime

__all__ = [
    "EPISODE_KINDS",
    "FORMATS",
    "PER_CHOICES",
    "ParseResult",
    "Problem",
    "SourceError",
    "SourceRecord",
    "detect_format",
    "iter_input_files",
    "load_episodes",
    "parse_file",
    "parse_paths",
    "parse_text",
    "parse_time",
]

FORMATS = ("auto", "chat", "jsonl", "events", "transcript", "prose")
PER_CHOICES = ("message", "paragraph", "conversation", "file")
EPISODE_KINDS = ("message", "text", "json", "event")
INPUT_EXTENSIONS = (".json", ".jsonl", ".ndjson", ".md", ".markdown", ".txt")
STDIN_NAME = "stdin"

_EPISODE_KEYS = ("content", "reference_time", "source", "kind", "metadata", "group_id")
_TIME_KEYS = ("reference_time", "timestamp", "time", "ts", "created_at")
_CHAT_TIME_KEYS = (*_TIME_KEYS, "date")
_ROLE_ALIASES = {
    "human": "user",
    "user": "user",
    "ai": "assistant",
    "assistant": "assistant",
    "system": "system",
    "developer": "developer",
    "tool": "tool",
    "function": "function",
}
_LANGCHAIN_TYPES = (
    "human", "ai", "system", "tool", "function", "chat", "generic",
    "HumanMessage", "AIMessage", "SystemMessage", "ToolMessage", "FunctionMessage",
    "ChatMessage",
)
_SKIPPED_ROLES = ("system", "developer")
_BOM = b"\xef\xbb\xbf"
_TICK = timedelta(milliseconds=1)


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


class _Invalid(Exception):
    """A problem inside one record (internal; collected into ``Problem``)."""

    def __init__(self, field: str | None, reason: str, line: int | None = None) -> None:
        super().__init__(reason)
        self.field = field
        self.reason = reason
        self.line = line


# --------------------------------------------------------------------------------- public API
def detect_format(name: str, text: str) -> str:
    """The format of a file from its extension, then from its content."""
    suffix = Path(name).suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    if suffix == ".json":
        return _json_flavour(text)
    if suffix in (".md", ".markdown", ".txt", ".text"):
        return _text_flavour(text)
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        try:
            json.loads(text)
        except json.JSONDecodeError:
            return "jsonl"
        return _json_flavour(text)
    return _text_flavour(text)


def parse_text(
    text: str,
    *,
    source: str,
    format: str = "auto",
    per: str = "message",
    group_id: str = "default",
    assume_utc: bool = False,
    file: str | None = None,
    allow_other_groups: bool = True,
) -> ParseResult:
    """Parse one input's text. ``file`` names it in problems (default: ``source``).

    ``allow_other_groups=False``: an episode line naming a ``group_id`` other than
    ``group_id`` is a problem instead of an episode of that group."""
    if format not in FORMATS:
        raise InputError(f"format must be one of {', '.join(FORMATS)}, got {format!r}")
    if per not in PER_CHOICES:
        raise InputError(f"per must be one of {', '.join(PER_CHOICES)}, got {per!r}")
    label = file or source
    try:
        chosen = detect_format(source, text) if format == "auto" else format
    except (RecursionError, ValueError):
        chosen = "jsonl" if source.endswith((".jsonl", ".ndjson")) else "chat"
    whole = per in ("conversation", "file")
    parser = _Parser(label, source, group_id, assume_utc, whole, allow_other_groups)
    if text.startswith("\ufeff"):
        text = text[1:]
    try:
        if not text.strip():
            parser.problem(None, None, "the input is empty")
        elif chosen == "chat":
            parser.chat_document(text)
        elif chosen in ("jsonl", "events"):
            parser.json_lines(text, events_only=chosen == "events")
        elif chosen == "transcript":
            parser.transcript(text)
        else:
            parser.prose(text)
    except InputError:
        raise
    except (RecursionError, ValueError, OverflowError) as exc:
        # Pathological input (nesting deeper than the parser's stack, numbers past Python's
        # digit limit, times past datetime.max): the whole input is one problem.
        parser.records.clear()
        parser.problem(None, None, _unparsable(exc))
    for record in list(parser.records):
        try:
            json.dumps(record.episode, default=str, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            parser.records.remove(record)
            parser.problem(record.line, None,
                           "contains an unpaired surrogate escape (not valid Unicode)")
    result = ParseResult(parser.records, parser.problems, [label], {label: chosen})
    return result


def parse_bytes(
    raw: bytes,
    *,
    source: str,
    format: str = "auto",
    per: str = "message",
    group_id: str = "default",
    assume_utc: bool = False,
    file: str | None = None,
    allow_other_groups: bool = True,
) -> ParseResult:
    """``parse_text`` for raw bytes (a file, stdin): anything but UTF-8 is a problem, of each
    line that holds such bytes in JSONL, else of the whole input."""
    label = file or source
    options: dict[str, Any] = {"per": per, "group_id": group_id, "assume_utc": assume_utc,
                               "file": file, "allow_other_groups": allow_other_groups}
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        lines = _utf8_lines(raw, source, format)
        if lines is not None:
            decoded, bad, chosen = lines
            if not decoded.strip():
                result = ParseResult(files=[label], formats={label: chosen})
            else:
                result = parse_text(decoded, source=source, format=chosen, **options)
            result.problems = sorted(
                [*result.problems, *(Problem(label, n, None, f"not UTF-8 text (byte {at})")
                                     for n, at in bad)],
                key=lambda p: (p.line is None, p.line or 0),
            )
            return result
        line = raw[: exc.start].count(b"\n") + 1
        return ParseResult(
            problems=[Problem(label, line, None, f"not UTF-8 text (byte {exc.start})")],
            files=[label],
        )
    return parse_text(text, source=source, format=format, **options)


def _utf8_lines(raw: bytes, source: str,
                format: str) -> tuple[str, list[tuple[int, int]], str] | None:
    """For JSON lines that are not all UTF-8: the text with each such line blanked (numbers
    kept), (line, byte offset) of each, and the format; None for an input read whole."""
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        return None  # UTF-16 or UTF-32 (a byte order mark): no line of it is UTF-8
    start = len(_BOM) if raw.startswith(_BOM) else 0
    lossy = raw[start:].decode("utf-8", "replace")
    chosen = format
    if format == "auto":
        try:
            chosen = detect_format(source, lossy)
        except (RecursionError, ValueError):
            return None
    stripped = lossy.lstrip()
    if chosen not in ("jsonl", "events") or stripped.startswith("["):
        return None
    if stripped.startswith("{") and "\n" in stripped.strip():
        try:
            json.loads(lossy)
        except (RecursionError, ValueError):
            pass
        else:
            return None  # one pretty-printed object
    kept: list[str] = []
    bad: list[tuple[int, int]] = []
    offset = start
    for number, chunk in enumerate(raw[start:].split(b"\n"), start=1):
        try:
            kept.append(chunk.decode("utf-8"))
        except UnicodeDecodeError as exc:
            kept.append("")
            bad.append((number, offset + exc.start))
        offset += len(chunk) + 1
    return "\n".join(kept), bad, chosen


def parse_file(
    path: str | os.PathLike[str],
    *,
    format: str = "auto",
    per: str = "message",
    group_id: str = "default",
    assume_utc: bool = False,
    allow_other_groups: bool = True,
) -> ParseResult:
    """Parse one file; its episodes take the file's name as their source."""
    p = Path(path)
    label = str(path)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        reason = exc.strerror or str(exc)
        return ParseResult(problems=[Problem(label, None, None, f"cannot read: {reason}")],
                           files=[label])
    return parse_bytes(
        raw, source=p.name, format=format, per=per, group_id=group_id,
        assume_utc=assume_utc, file=label, allow_other_groups=allow_other_groups,
    )


def iter_input_files(
    paths: Iterable[str | os.PathLike[str]], *, skipped: list[Path] | None = None
) -> Iterator[Path]:
    """Expand directories (recursively, sorted) to the files with a known input extension.

    The other files found in a directory are appended to ``skipped`` when it is given; hidden
    ones (a name in the path below the directory starts with ``.``) are not looked at. A path
    given itself is yielded whatever its extension."""
    for item in paths:
        p = Path(item)
        if p.is_dir():
            for child in sorted(p.rglob("*")):
                hidden = any(part.startswith(".") for part in child.relative_to(p).parts)
                if hidden or not child.is_file():
                    continue
                if child.suffix.lower() in INPUT_EXTENSIONS:
                    yield child
                elif skipped is not None:
                    skipped.append(child)
        else:
            yield p


def parse_paths(
    paths: Iterable[str | os.PathLike[str]],
    *,
    format: str = "auto",
    per: str = "message",
    group_id: str = "default",
    assume_utc: bool = False,
    allow_other_groups: bool = True,
) -> ParseResult:
    """Parse every file (directories expanded); problems of all files are collected, and the
    files a directory holds that were not read are in ``skipped``."""
    result = ParseResult()
    skipped: list[Path] = []
    for path in iter_input_files(paths, skipped=skipped):
        result.extend(parse_file(path, format=format, per=per, group_id=group_id,
                                 assume_utc=assume_utc, allow_other_groups=allow_other_groups))
    result.skipped.extend(str(p) for p in skipped)
    return result


def load_episodes(
    paths: Iterable[str | os.PathLike[str]],
    *,
    format: str = "auto",
    per: str = "message",
    group_id: str = "default",
    assume_utc: bool = False,
    skip_invalid: bool = False,
    allow_other_groups: bool = True,
) -> list[dict[str, Any]]:
    """Episode dicts for ``GraphMemory.add_episodes``; raises ``SourceError`` on any problem
    (unless ``skip_invalid``, which drops the invalid records)."""
    result = parse_paths(paths, format=format, per=per, group_id=group_id, assume_utc=assume_utc,
                         allow_other_groups=allow_other_groups)
    if not skip_invalid:
        result.raise_for_problems()
    return result.episodes()


# --------------------------------------------------------------------------------- detection
def _json_flavour(text: str) -> str:
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return "jsonl"
    return "chat" if _looks_like_chat(data) else "jsonl"


def _looks_like_message(item: Any) -> bool:
    if not isinstance(item, dict):
        return False
    if "role" in item and ("content" in item or "tool_calls" in item):
        return True
    kind = item.get("type")
    return kind in _LANGCHAIN_TYPES and ("data" in item or "content" in item)


def _looks_like_chat(data: Any) -> bool:
    if isinstance(data, dict):
        return isinstance(data.get("messages"), list)
    if isinstance(data, list) and data:
        return all(_looks_like_message(item) for item in data)
    return False


_SPEAKER_LINE = re.compile(
    r"^\s*(?:[-*]\s+)?"
    r"(?:\[(?P<ts>[^\]]{4,40})\]\s*)?"
    r"(?:\*\*(?P<bold>[^*:\n]{1,40}?)(?::\*\*|\*\*:)|(?P<name>[A-Za-z][\w .'\-]{0,39}?):)"
    r"(?:\s+|$)(?P<text>.*)$"
)
_TIME_ONLY = re.compile(r"^\s*(?:#{1,6}\s*)?\[?(?P<ts>[0-9][0-9:T .+\-Z]{3,40}(?:UTC)?)\]?\s*$")


def _text_flavour(text: str) -> str:
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    if not lines:
        return "prose"
    turns = sum(1 for ln in lines if _speaker_match(ln) is not None)
    return "transcript" if turns >= 2 and turns * 2 >= len(lines) else "prose"


def _speaker_match(line: str) -> re.Match[str] | None:
    match = _SPEAKER_LINE.match(line)
    if match is None:
        return None
    name = (match.group("bold") or match.group("name") or "").strip()
    if not name or name.lower() in ("http", "https", "ftp", "mailto", "file"):
        return None
    if len(name.split()) > 4:
        return None
    return match


# --------------------------------------------------------------------------------- times
_BRACKET_TIME = re.compile(
    r"^(?P<date>\d{4}-\d{2}-\d{2})?(?:[ T]?(?P<clock>\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?))?"
    r"\s*(?P<zone>Z|UTC|[+-]\d{2}:?\d{2})?$"
)


_EXPECTED_TIME = (
    "expected ISO-8601 like 2024-05-01T10:00:00Z, 2024-05-01T12:00:00+02:00 or 2024-05-01"
)


def parse_time(text: str, argument: str = "time", *, assume_utc: bool = False) -> datetime:
    """``graphmem._time.parse_datetime``, with out-of-range dates (2024-13-01) as InputError."""
    try:
        return parse_datetime(text, argument, assume_utc=assume_utc)
    except InputError:
        raise
    except ValueError as exc:
        raise InputError(f"{argument}: {text!r} is not a date ({exc}); {_EXPECTED_TIME}") from None


def _is_timestamp(raw: str) -> bool:
    match = _BRACKET_TIME.match(raw.strip())
    return match is not None and bool(match.group("date") or match.group("clock"))


def _transcript_time(raw: str, day: str | None) -> tuple[datetime, str]:
    """A transcript timestamp (UTC unless it has an offset) and the date it is on."""
    text = raw.strip()
    match = _BRACKET_TIME.match(text)
    if match is None or not (match.group("date") or match.group("clock")):
        raise _Invalid(
            "timestamp",
            f"{raw!r} is not a timestamp; expected [2024-05-01 10:00], "
            "[2024-05-01T10:00:00+02:00] or [10:00] after a dated line",
        )
    date_part = match.group("date") or day
    if date_part is None:
        raise _Invalid("timestamp", f"[{raw}] has a time but no date yet; give a full date first")
    clock = match.group("clock")
    zone = match.group("zone") or ""
    if zone == "UTC":
        zone = "Z"
    if zone and len(zone) == 5:  # +0200
        zone = zone[:3] + ":" + zone[3:]
    if clock is not None and len(clock.split(":")[0]) == 1:
        clock = "0" + clock
    iso = date_part if clock is None else f"{date_part}T{clock}{zone}"
    try:
        when = parse_time(iso, "timestamp", assume_utc=True)
    except InputError as exc:
        raise _Invalid("timestamp", f"[{raw}]: {_strip_argument(exc)}") from None
    return when, date_part


def _strip_argument(exc: InputError) -> str:
    text = str(exc)
    for prefix in ("timestamp: ", "reference_time: ", "time: "):
        if text.startswith(prefix):
            return text[len(prefix):]
    return text


def _record_time(value: Any, key: str, assume_utc: bool) -> datetime:
    if isinstance(value, bool):
        raise _Invalid(key, f"expected a date-time, got {json.dumps(value)}")
    if isinstance(value, int | float):
        if not math.isfinite(value):
            raise _Invalid(key, "expected a date-time, got a non-finite number")
        seconds = value / 1000.0 if abs(value) >= 1e11 else float(value)
        try:
            when = datetime.fromtimestamp(seconds, tz=UTC)
        except (OverflowError, OSError, ValueError):
            raise _Invalid(key, f"epoch time {value} is out of range") from None
        return when.replace(microsecond=(when.microsecond // 1000) * 1000)
    if not isinstance(value, str):
        raise _Invalid(
            key, f"expected an ISO-8601 string or epoch seconds, got {type(value).__name__}"
        )
    try:
        return parse_time(value, key, assume_utc=assume_utc)
    except InputError as exc:
        reason = _strip_argument(exc).removeprefix(f"{key}: ")
        if "no timezone" in reason and not assume_utc:
            reason += " (or pass --assume-utc)"
        raise _Invalid(key, reason) from None


def _find_time(record: Mapping[str, Any], keys: Sequence[str], assume_utc: bool,
               prefix: str = "") -> datetime | None:
    for key in keys:
        if key in record and record[key] is not None:
            return _record_time(record[key], prefix + key, assume_utc)
    return None


# --------------------------------------------------------------------------------- JSON positions
_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def _skip_ws(text: str, pos: int) -> int:
    match = _WS.match(text, pos)
    return match.end() if match else pos


def _array_items(text: str, pos: int) -> list[tuple[int, Any]]:
    """(offset, value) of each item of the JSON array starting at ``pos``."""
    pos = _skip_ws(text, pos)
    if pos >= len(text) or text[pos] != "[":
        return []
    pos = _skip_ws(text, pos + 1)
    out: list[tuple[int, Any]] = []
    if pos < len(text) and text[pos] == "]":
        return out
    while pos < len(text):
        start = pos
        value, pos = _DECODER.raw_decode(text, pos)
        out.append((start, value))
        pos = _skip_ws(text, pos)
        if pos < len(text) and text[pos] == ",":
            pos = _skip_ws(text, pos + 1)
            continue
        break
    return out


def _object_members(text: str, pos: int) -> dict[str, int]:
    """Key -> offset of the value, for the JSON object starting at ``pos``."""
    pos = _skip_ws(text, pos)
    out: dict[str, int] = {}
    if pos >= len(text) or text[pos] != "{":
        return out
    pos = _skip_ws(text, pos + 1)
    while pos < len(text) and text[pos] != "}":
        key, pos = _DECODER.raw_decode(text, pos)
        pos = _skip_ws(text, pos)
        pos = _skip_ws(text, pos + 1)  # the colon
        out[str(key)] = pos
        _, pos = _DECODER.raw_decode(text, pos)
        pos = _skip_ws(text, pos)
        if pos < len(text) and text[pos] == ",":
            pos = _skip_ws(text, pos + 1)
    return out


class _Lines:
    """Offset -> 1-based line number."""

    def __init__(self, text: str) -> None:
        self.starts = [0]
        for match in re.finditer("\n", text):
            self.starts.append(match.end())

    def line(self, offset: int) -> int:
        lo, hi = 0, len(self.starts)
        while lo + 1 < hi:
            mid = (lo + hi) // 2
            if self.starts[mid] <= offset:
                lo = mid
            else:
                hi = mid
        return lo + 1


# --------------------------------------------------------------------------------- the parser
class _Parser:
    def __init__(self, label: str, source: str, group_id: str, assume_utc: bool,
                 whole: bool, allow_other_groups: bool = True) -> None:
        self.label = label
        self.source = source
        self.group_id = group_id
        self.assume_utc = assume_utc
        self.whole = whole
        self.allow_other_groups = allow_other_groups
        self.records: list[SourceRecord] = []
        self.problems: list[Problem] = []

    # -- bookkeeping
    def problem(self, line: int | None, field_name: str | None, reason: str) -> None:
        self.problems.append(Problem(self.label, line, field_name, reason))

    def add(self, line: int | None, episode: dict[str, Any], field_prefix: str = "") -> None:
        try:
            _validate(episode, field_prefix)
        except _Invalid as exc:
            self.problem(line, exc.field, exc.reason)
            return
        self.records.append(SourceRecord(self.label, line, episode))

    def episode(self, content: str, kind: str, when: datetime | None,
                metadata: dict[str, Any], source: str | None = None) -> dict[str, Any]:
        return {
            "content": content,
            "group_id": self.group_id,
            "source": source if source is not None else self.source,
            "kind": kind,
            "reference_time": when,
            "metadata": metadata,
        }

    # -- JSON documents and lines
    def chat_document(self, text: str) -> None:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            self.problem(exc.lineno, None, f"invalid JSON: {exc.msg} (column {exc.colno})")
            return
        lines = _Lines(text)
        if isinstance(data, dict):
            members = _object_members(text, 0)
            if not isinstance(data.get("messages"), list):
                self.problem(1, "messages", "a chat file needs a \"messages\" list")
                return
            start = members.get("messages", 0)
            items = [(lines.line(off), v) for off, v in _array_items(text, start)]
            self.conversation(data, items, lines.line(0))
        elif isinstance(data, list):
            items = [(lines.line(off), v) for off, v in _array_items(text, 0)]
            self.conversation({}, items, 1)
        else:
            self.problem(1, None, f"a chat file must be a JSON list or object, got "
                                  f"{type(data).__name__}")

    def json_lines(self, text: str, *, events_only: bool) -> None:
        stripped = text.lstrip()
        if stripped.startswith("["):
            # one JSON array of records (a .json file); fall back to lines if it isn't one
            try:
                json.loads(text)
            except json.JSONDecodeError:
                pass
            else:
                lines = _Lines(text)
                for off, value in _array_items(text, 0):
                    self.json_record(value, lines.line(off), events_only, "")
                return
        if stripped.startswith("{") and "\n" in stripped.strip():
            try:
                value = json.loads(text)
            except json.JSONDecodeError:
                pass
            else:  # one pretty-printed object
                first = text[: len(text) - len(stripped)].count("\n") + 1
                self.json_record(value, first, events_only, "")
                return
        # Lines end at "\n" only: str.splitlines would also cut at U+2028, U+0085 and other
        # characters JSON strings may hold.
        for number, raw in enumerate(text.split("\n"), start=1):
            if not raw.strip():
                continue
            kept = len(self.records)
            try:
                value = json.loads(raw)
                self.json_record(value, number, events_only, "")
            except json.JSONDecodeError as exc:
                self.problem(number, None, f"invalid JSON: {exc.msg} (column {exc.colno})")
            except (RecursionError, ValueError, OverflowError) as exc:
                # One pathological line (nesting deeper than the parser's stack, a number past
                # Python's digit limit, a time past datetime.max) is that line's problem.
                del self.records[kept:]
                self.problem(number, None, _unparsable(exc))

    def json_record(self, value: Any, line: int, events_only: bool, prefix: str) -> None:
        if not isinstance(value, dict):
            self.problem(line, None, f"expected a JSON object, got {_json_type(value)}")
            return
        if not events_only and isinstance(value.get("messages"), list):
            items = [(line, m) for m in value["messages"]]
            self.conversation(value, items, line)
            return
        if not events_only and "content" in value:
            self.episode_record(value, line)
        else:
            self.event_record(value, line)

    def episode_record(self, record: dict[str, Any], line: int) -> None:
        unknown = sorted(set(record) - set(_EPISODE_KEYS))
        if unknown:
            self.problem(line, unknown[0] if len(unknown) == 1 else None,
                         f"unknown field{'s' if len(unknown) > 1 else ''} "
                         f"{', '.join(unknown)}; an episode line has "
                         f"{', '.join(_EPISODE_KEYS)} (put extra data under metadata)")
            return
        try:
            when = _find_time(record, ("reference_time",), self.assume_utc)
        except _Invalid as exc:
            self.problem(line, exc.field, exc.reason)
            return
        metadata = record.get("metadata")
        if metadata is None:
            metadata = {}
        if not isinstance(metadata, dict):
            self.problem(line, "metadata", f"must be an object, got {_json_type(metadata)}")
            return
        group = record.get("group_id", self.group_id)
        if not self.allow_other_groups and isinstance(group, str) and group != self.group_id:
            shown = repr(group) if len(repr(group)) <= 80 else repr(group)[:79] + "…"
            self.problem(line, "group_id", f"{shown} is not the command's group "
                                           f"{self.group_id!r} (pass --allow-other-groups to "
                                           "write to other groups)")
            return
        kind = record.get("kind", "message")
        source = record.get("source", self.source)
        episode = self.episode(record["content"], kind, when, dict(metadata), source)
        episode["group_id"] = group
        self.add(line, episode)

    def event_record(self, record: dict[str, Any], line: int) -> None:
        if not record:
            self.problem(line, None, "empty JSON object")
            return
        try:
            when = _find_time(record, _TIME_KEYS, self.assume_utc)
        except _Invalid as exc:
            self.problem(line, exc.field, exc.reason)
            return
        try:
            content = json.dumps(record, ensure_ascii=False, allow_nan=False)
        except ValueError:
            self.problem(line, None, "record holds NaN or Infinity, which JSON does not allow")
            return
        self.add(line, self.episode(content, "json", when, {}))

    # -- chat
    def conversation(self, top: Mapping[str, Any], items: list[tuple[int, Any]],
                     top_line: int) -> None:
        speakers = top.get("speakers")
        if speakers is not None and not (
            isinstance(speakers, dict) and all(isinstance(v, str) for v in speakers.values())
        ):
            self.problem(top_line, "speakers", "must map roles to names, like "
                                               '{"user": "Ana"}')
            return
        names = {str(k).lower(): v for k, v in (speakers or {}).items()}
        try:
            anchor = _find_time(top, _CHAT_TIME_KEYS, self.assume_utc)
        except _Invalid as exc:
            self.problem(top_line, exc.field, exc.reason)
            return
        if not items:
            self.problem(top_line, "messages", "the conversation has no messages")
            return
        metadata_top = top.get("metadata") or {}
        if not isinstance(metadata_top, dict):
            self.problem(top_line, "metadata", f"must be an object, got "
                                               f"{_json_type(metadata_top)}")
            return
        turns: list[tuple[int, str, str, str, datetime | None]] = []  # line, role, speaker, text, t
        step = -1  # the first message without a time takes the conversation's time itself
        bad = False
        for index, (line, item) in enumerate(items):
            where = f"messages[{index}]"
            try:
                parsed = _chat_message(item, where, names, self.assume_utc)
            except _Invalid as exc:
                self.problem(line, exc.field, exc.reason)
                bad = True
                continue
            if parsed is None:
                continue
            role, speaker, text, when = parsed
            if when is not None:
                anchor, step = when, 0
            elif anchor is not None:
                step += 1
                when = anchor + step * _TICK
            turns.append((line, role, speaker, text, when))
        if bad and (self.whole or not turns):
            return  # the conversation is one record; or nothing valid is left
        if not turns:
            self.problem(top_line, "messages", "no message with text (system messages and "
                                               "tool calls are skipped)")
            return
        if self.whole:
            content = "\n".join(f"{speaker}: {text}" for _, _, speaker, text, _ in turns)
            speakers_seen = list(dict.fromkeys(s for _, _, s, _, _ in turns))
            meta = {**metadata_top, "speakers": speakers_seen, "messages": len(turns)}
            start = turns[0][4] if turns[0][4] is not None else anchor
            self.add(top_line, self.episode(content, "text", start, meta))
            return
        for line, role, speaker, text, when in turns:
            meta = {**metadata_top, "speaker": speaker, "role": role}
            self.add(line, self.episode(text, "message", when, meta))

    # -- transcripts and prose
    def transcript(self, text: str) -> None:
        day: str | None = None
        anchor: datetime | None = None
        step = 0
        turns: list[list[Any]] = []  # [line, speaker, text parts, time]
        for number, raw in enumerate(text.splitlines(), start=1):
            line = raw.rstrip()
            if not line.strip():
                continue
            only = _TIME_ONLY.match(line)
            if only is not None and _is_timestamp(only.group("ts")):
                try:
                    anchor, day = _transcript_time(only.group("ts"), day)
                    step = -1
                except _Invalid as exc:
                    self.problem(number, exc.field, exc.reason)
                continue
            if line.lstrip().startswith("#") or set(line.strip()) <= set("-*_=`"):
                continue  # headings and rules
            match = _speaker_match(line)
            if match is None:
                if turns:
                    turns[-1][2].append(line.strip())
                else:
                    self.problem(number, None, "expected `Speaker: text` (use --format prose "
                                               "for free text)")
                continue
            speaker = (match.group("bold") or match.group("name") or "").strip()
            when: datetime | None = None
            if match.group("ts"):
                try:
                    when, day = _transcript_time(match.group("ts"), day)
                except _Invalid as exc:
                    self.problem(number, exc.field, exc.reason)
                    continue
                anchor, step = when, 0
            elif anchor is not None:
                step += 1
                when = anchor + max(step, 0) * _TICK
            body = match.group("text").strip()
            turns.append([number, speaker, [body] if body else [], when])
        for turn in turns:
            if not turn[2]:
                self.problem(turn[0], "text", f"{turn[1]} says nothing")
        if any(not t[2] for t in turns):
            return
        if not turns and not self.problems:
            self.problem(None, None, "no `Speaker: text` lines found")
            return
        if self.whole and turns:
            content = "\n".join(f"{t[1]}: {' '.join(t[2])}" for t in turns)
            speakers = list(dict.fromkeys(t[1] for t in turns))
            first_time = next((t[3] for t in turns if t[3] is not None), None)
            self.add(turns[0][0], self.episode(
                content, "text", first_time, {"speakers": speakers, "messages": len(turns)}
            ))
            return
        for number, speaker, parts, when in turns:
            self.add(number, self.episode(" ".join(parts), "message", when,
                                          {"speaker": speaker}))

    def prose(self, text: str) -> None:
        if self.whole:
            first = next(i for i, ln in enumerate(text.splitlines(), 1) if ln.strip())
            self.add(first, self.episode(text.strip(), "text", None, {}))
            return
        paragraph: list[str] = []
        start = 0
        for number, raw in enumerate([*text.splitlines(), ""], start=1):
            if raw.strip():
                if not paragraph:
                    start = number
                paragraph.append(raw.strip())
            elif paragraph:
                self.add(start, self.episode(" ".join(paragraph), "text", None, {}))
                paragraph = []


def _unparsable(exc: BaseException) -> str:
    detail = str(exc).splitlines()[0][:160] if str(exc) else type(exc).__name__
    return f"cannot be parsed ({type(exc).__name__}: {detail})"


def _json_type(value: Any) -> str:
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


def _message_text(content: Any, where: str) -> str | None:
    if content is None:
        return None
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI content parts
        parts: list[str] = []
        for i, part in enumerate(content):
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
            elif isinstance(part, dict) and part.get("type") not in (None, "text"):
                continue  # images, audio: not memory text
            else:
                raise _Invalid(f"{where}.content[{i}]", "expected a text part")
        return "\n".join(parts)
    raise _Invalid(f"{where}.content", f"expected a string, got {_json_type(content)}")


def _chat_message(item: Any, where: str, names: Mapping[str, str],
                  assume_utc: bool) -> tuple[str, str, str, datetime | None] | None:
    """(role, speaker, text, time) of a chat message, or None when it is skipped."""
    if not isinstance(item, dict):
        raise _Invalid(where, f"expected a message object, got {_json_type(item)}")
    body: Mapping[str, Any] = item
    prefix = where
    if "role" not in item and isinstance(item.get("data"), dict):  # LangChain messages_to_dict
        body = item["data"]
        prefix = f"{where}.data"
    raw_role = item.get("role") or body.get("role")
    if raw_role is None:
        raw_role = item.get("type") or body.get("type")
    if not isinstance(raw_role, str) or not raw_role.strip():
        raise _Invalid(f"{where}.role", "missing (expected user, assistant, human, ai, ...)")
    role_key = raw_role.strip()
    for suffix in ("MessageChunk", "Message"):
        if role_key.endswith(suffix) and role_key != suffix:
            role_key = role_key[: -len(suffix)]
    role = _ROLE_ALIASES.get(role_key.lower(), role_key.lower())
    if role in ("chat", "generic") and isinstance(body.get("role"), str):
        role = _ROLE_ALIASES.get(body["role"].lower(), body["role"].lower())
    if role in _SKIPPED_ROLES:
        return None
    if "content" not in body:
        if body.get("tool_calls") or body.get("function_call"):
            return None
        raise _Invalid(f"{prefix}.content", "missing")
    text = _message_text(body.get("content"), prefix)
    if text is None or not text.strip():
        if body.get("tool_calls") or body.get("function_call"):
            return None
        raise _Invalid(f"{prefix}.content", "is empty")
    name = body.get("name") or item.get("name")
    if name is not None and (not isinstance(name, str) or not name.strip()):
        raise _Invalid(f"{prefix}.name", "must be a non-empty string")
    speaker = (name or names.get(role) or names.get(role_key.lower()) or role).strip()
    when = _find_time(item, _CHAT_TIME_KEYS, assume_utc, f"{where}.")
    if when is None and body is not item:
        when = _find_time(body, _CHAT_TIME_KEYS, assume_utc, f"{prefix}.")
    if when is None:
        extra = body.get("additional_kwargs") or body.get("response_metadata")
        if isinstance(extra, dict):
            when = _find_time(extra, _CHAT_TIME_KEYS, assume_utc, f"{prefix}.")
    return role, speaker, text.strip(), when


def _validate(episode: Mapping[str, Any], prefix: str = "") -> None:
    """The checks ``GraphMemory.add_episodes`` makes, so that nothing fails after validation."""
    content = episode.get("content")
    if not isinstance(content, str):
        raise _Invalid(prefix + "content", f"must be a string, got {_json_type(content)}")
    if not content.strip():
        raise _Invalid(prefix + "content", "is empty")
    if "\x00" in content:
        raise _Invalid(prefix + "content", "contains a NUL character")
    kind = episode.get("kind")
    if kind not in EPISODE_KINDS:
        raise _Invalid(prefix + "kind", f"must be one of {', '.join(EPISODE_KINDS)}, "
                                        f"got {json.dumps(kind)}")
    if kind == "json":
        try:
            parsed = json.loads(content)
        except json.JSONDecodeError as exc:
            raise _Invalid(prefix + "content", f"kind json needs JSON content: {exc.msg}") from None
        if not isinstance(parsed, dict):
            raise _Invalid(prefix + "content", "kind json needs a JSON object")
    source = episode.get("source")
    if source is not None and (not isinstance(source, str) or not source.strip()):
        raise _Invalid(prefix + "source", "must be a non-empty string")
    group = episode.get("group_id")
    if not isinstance(group, str) or not group.strip():
        raise _Invalid(prefix + "group_id", "must be a non-empty string")
    when = episode.get("reference_time")
    if when is not None and (not isinstance(when, datetime) or when.tzinfo is None):
        raise _Invalid(prefix + "reference_time", "must be a timezone-aware date-time")
    try:
        json.dumps(episode.get("metadata") or {}, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise _Invalid(prefix + "metadata", f"must be JSON-serialisable: {exc}") from None
