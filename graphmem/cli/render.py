"""Plain-text rendering for the CLI: tables of facts, histories, summaries. No logic.

Human output never writes stored text raw to the terminal: ``safe`` shows control characters
(ESC and the rest of C0, DEL, C1, line and paragraph separators, bidirectional overrides) as
escapes like ``\\x1b``, so an episode cannot retitle the terminal, colour it or move the cursor.
NUL is never printed. ``--json`` output (``dumps``) is exact.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # annotations only
    from .._models import EpisodeRecord, FactHit, FactRecord, RecallResult

__all__ = [
    "dumps",
    "fact_status",
    "fmt_time",
    "render_facts",
    "render_history",
    "render_mapping",
    "render_recall",
    "safe",
    "span",
    "table",
]

_MAX_COL = 72
# C0 but tab and newline (kept, or escaped with inline=True), DEL, C1, U+2028/U+2029, and the
# bidirectional marks, embeddings, overrides and isolates.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029"
                      "\u202a-\u202e\u2066-\u2069]")
_CONTROL_INLINE = re.compile(_CONTROL.pattern[:-1] + "\t\n]")
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def safe(text: object, *, inline: bool = False) -> str:
    r"""``text`` fit for a terminal: control characters as escapes (ESC as ``\x1b``, CR as
    ``\r``, U+202E as ``\u202e``). Newlines and tabs are kept, unless ``inline`` (a table
    cell, a one-line message) escapes them too."""
    value = str(text)
    return (_CONTROL_INLINE if inline else _CONTROL).sub(_escape, value)


def dumps(value: Any) -> str:
    """JSON for ``--json`` output (datetimes as ISO-8601)."""
    return json.dumps(value, indent=2, ensure_ascii=False, default=_default)


def _default(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def fmt_time(value: datetime | None) -> str:
    """``2024-05-01`` at midnight UTC, else ``2024-05-01 10:00Z`` (seconds when not zero)."""
    if value is None:
        return "now"
    utc = value.astimezone(UTC)
    if (utc.hour, utc.minute, utc.second, utc.microsecond) == (0, 0, 0, 0):
        return utc.date().isoformat()
    if utc.second or utc.microsecond:
        return utc.strftime("%Y-%m-%d %H:%M:%SZ")
    return utc.strftime("%Y-%m-%d %H:%MZ")


def span(start: datetime, end: datetime | None) -> str:
    return f"{fmt_time(start)} → {fmt_time(end)}"


def fact_status(fact: FactRecord) -> str:
    """current | ended | superseded | corrected (expired) | replaced, with the reason."""
    if fact.expired_at is not None:
        state = "retracted"
    elif fact.valid_to is None:
        return "current"
    elif fact.superseded_by:
        state = "superseded"
    else:
        state = "ended"
    return f"{state} ({fact.reason})" if fact.reason else state


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """Left-aligned columns; the last column is never padded. Cells go through ``safe``."""
    if not rows:
        return []
    headers = [safe(h, inline=True) for h in headers]
    rows = [[safe(c, inline=True) for c in r] for r in rows]
    widths = [
        min(_MAX_COL, max(len(headers[i]), *(len(r[i]) for r in rows)))
        for i in range(len(headers))
    ]

    def line(cells: Sequence[str]) -> str:
        parts = [c.ljust(widths[i]) if i < len(cells) - 1 else c for i, c in enumerate(cells)]
        return "  ".join(parts).rstrip()

    return [line(headers), *(line(r) for r in rows)]


def _sources(hit: FactHit) -> str:
    names = list(dict.fromkeys(e.source or e.id for e in hit.episodes))
    if not names:
        return ""
    return names[0] if len(names) == 1 else f"{names[0]} (+{len(names) - 1})"


def render_recall(result: RecallResult) -> list[str]:
    view = []
    if result.as_of is not None:
        view.append(f"as of {fmt_time(result.as_of)}")
    if result.known_at is not None:
        view.append(f"as known at {fmt_time(result.known_at)}")
    head = f"{len(result.facts)} fact{'s' if len(result.facts) != 1 else ''} for {result.query!r}"
    lines = [head + (f" ({', '.join(view)})" if view else "")]
    if result.pinned:  # standing rules, before the query's facts
        lines.append("pinned:")
        lines += [safe("  " + p.line()[2:], inline=True) for p in result.pinned]
        if result.pinned_omitted:
            lines.append(f"  … and {result.pinned_omitted} more pinned")
    if not result.facts:
        lines.append("(nothing relevant remembered)")
        return lines
    rows = []
    notes: dict[int, list[str]] = {}
    at = result.as_of or datetime.now(UTC)
    for index, hit in enumerate(result.facts):
        ended = hit.valid_to is not None and hit.valid_to <= at
        marker = " (no longer true)" if ended else ""
        if hit.contradicts:
            marker += " [CONFLICT]"
        rows.append([f"{hit.score:.3f}", hit.statement + marker, span(hit.valid_from, hit.valid_to),
                     _sources(hit)])
        extra = []
        for old in hit.superseded:
            why = f"; {old.reason}" if old.reason else ""
            extra.append(
                f"    replaced: {old.statement} [{span(old.valid_from, old.valid_to)}{why}]"
            )
        for other in hit.contradicts:
            extra.append(f"    CONFLICT with: {other.statement} "
                         f"[{span(other.valid_from, other.valid_to)}] (unresolved)")
        notes[index] = [safe(line, inline=True) for line in extra]
    rendered = table(["score", "fact", "valid", "source"], rows)
    lines.append(rendered[0])
    for index, text in enumerate(rendered[1:]):
        lines.append(text)
        lines.extend(notes[index])
    return lines


def render_facts(facts: Sequence[FactRecord], *, show_status: bool) -> list[str]:
    headers = ["valid", "fact"] + (["status"] if show_status else [])
    rows = []
    for fact in facts:
        row = [span(fact.valid_from, fact.valid_to), fact.statement]
        if show_status:
            row.append(fact_status(fact))
        rows.append(row)
    return table(headers, rows)


def render_history(
    facts: Sequence[FactRecord], episodes: Mapping[str, EpisodeRecord]
) -> list[str]:
    lines: list[str] = []
    by_id = {f.id: f for f in facts}
    for number, fact in enumerate(facts, start=1):
        lines.append(f"{number}. {span(fact.valid_from, fact.valid_to)}  "
                     f"{safe(fact.statement, inline=True)}")
        status = fact_status(fact)
        if fact.superseded_by:
            newer = by_id.get(fact.superseded_by)
            status += f" by: {newer.statement}" if newer is not None else ""
        lines.append(f"     status: {safe(status, inline=True)}")
        if fact.expired_at is not None:
            lines.append(f"     no longer believed since {fmt_time(fact.expired_at)}")
        sources = []
        for episode_id in fact.episode_ids:
            ep = episodes.get(episode_id)
            if ep is None:
                sources.append(episode_id)
                continue
            where = ep.source or ep.kind
            speaker = ep.metadata.get("speaker")
            who = f" ({speaker})" if speaker else ""
            sources.append(f"{where}{who} @ {fmt_time(ep.reference_time)} [{ep.id}]")
        sources = [safe(s, inline=True) for s in sources]
        if sources:
            lines.append(f"     from: {sources[0]}")
            lines.extend(f"           {s}" for s in sources[1:])
    return lines


def render_mapping(values: Mapping[str, Any]) -> list[str]:
    width = max((len(k) for k in values), default=0)
    out = []
    for key, value in values.items():
        if isinstance(value, list | tuple):
            shown = ", ".join(str(v) for v in value) or "-"
        elif value is None:
            shown = "-"
        else:
            shown = str(value)
        out.append(safe(f"{key.ljust(width)}  {shown}", inline=True))
    return out
