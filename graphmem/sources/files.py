"""Parse files and records into episodes for ``GraphMemory.add_episodes`` (validation first).

Used by ``graphmem ingest`` and usable from Python::

    from graphmem.sources.files import load_episodes
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
    turn; a timestamped line without a speaker (``[10:00] : text``) is a problem of its line.
    One ``kind="message"`` episode per turn, or one per file with ``per="conversation"``.
    ``auto`` takes a text for a transcript when one line is a timestamped ``[time] Speaker:``
    turn, or when at least two lines and half of them are ``Speaker:`` lines; so one odd line
    does not turn a transcript into prose.
``prose``
    Plain text: one ``kind="text"`` episode per paragraph (blank-line separated), or one per file
    with ``per="file"``. No reference time (the ingest time is used).

``per`` must apply to the format read: ``paragraph`` to prose only, ``file`` to prose and
transcripts; chat and JSON inputs take ``message`` or ``conversation``. Any other is a problem
of the file, not silently ignored.

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
found there are listed in ``ParseResult.skipped``, hidden ones (a name starting with ``.``) too.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from .._errors import InputError
from .chat import looks_like_chat
from .parser import Parser, unparsable
from .records import (
    EPISODE_KINDS,
    FORMATS,
    INPUT_EXTENSIONS,
    PER_CHOICES,
    ParseResult,
    Problem,
    SourceError,
    SourceRecord,
)
from .times import parse_time
from .transcript import text_flavour

# This module is the entry point (formats, bytes and files); one concern per module below it:
# results and problems ``_source_records``, times ``_source_times``, chat messages
# ``_source_chat``, transcript lines ``_source_text``, JSON positions ``_source_json``, and
# the parser of each format ``_source_parser``.
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


_BOM = b"\xef\xbb\xbf"
# The --per choices each format honours: records (chat messages, JSON lines) are one episode
# each, or one per conversation; paragraphs are prose's.
_PER_APPLIES = {
    "chat": ("message", "conversation"),
    "jsonl": ("message", "conversation"),
    "events": ("message", "conversation"),
    "transcript": ("message", "conversation", "file"),
    "prose": ("message", "paragraph", "conversation", "file"),
}


# --------------------------------------------------------------------------------- public API
def detect_format(name: str, text: str) -> str:
    """The format of a file from its extension, then from its content."""
    suffix = Path(name).suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    if suffix == ".json":
        return _json_flavour(text)
    if suffix in (".md", ".markdown", ".txt", ".text"):
        return text_flavour(text)
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        try:
            json.loads(text)
        except json.JSONDecodeError:
            return "jsonl"
        return _json_flavour(text)
    return text_flavour(text)


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
    parser = Parser(label, source, group_id, assume_utc, whole, allow_other_groups)
    if text.startswith("\ufeff"):
        text = text[1:]
    try:
        if not text.strip():
            parser.problem(None, None, "the input is empty")
        elif per not in _PER_APPLIES[chosen]:
            # Silently giving one episode per record would not be what was asked for.
            parser.problem(None, None, f"--per {per} does not apply to {chosen} input; "
                                       f"use {', '.join(_PER_APPLIES[chosen])}")
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
        parser.problem(None, None, unparsable(exc))
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
    ones (a name in the path below the directory starts with ``.``) are not read either, and
    are listed there too: a hidden file itself, or the hidden directory that holds it (once). A
    path given itself is yielded whatever its extension."""
    for item in paths:
        p = Path(item)
        if p.is_dir():
            hidden_seen: set[Path] = set()
            for child in sorted(p.rglob("*")):
                parts = child.relative_to(p).parts
                first = next((i for i, part in enumerate(parts) if part.startswith(".")), None)
                if first is not None:
                    root = p.joinpath(*parts[: first + 1])
                    if skipped is not None and root not in hidden_seen and (
                        root.is_file() or root.is_dir()
                    ):
                        hidden_seen.add(root)
                        skipped.append(root)
                    continue
                if not child.is_file():
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
    return "chat" if looks_like_chat(data) else "jsonl"
