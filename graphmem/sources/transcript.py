"""Plain-text inputs: which are transcripts (``Speaker: text`` lines), and those lines."""

from __future__ import annotations

import re

__all__ = ["TIMESTAMPED", "TIME_ONLY", "speaker_match", "text_flavour"]

_SPEAKER_LINE = re.compile(
    r"^\s*(?:[-*]\s+)?"
    r"(?:\[(?P<ts>[^\]]{4,40})\]\s*)?"
    r"(?:\*\*(?P<bold>[^*:\n]{1,40}?)(?::\*\*|\*\*:)|(?P<name>[A-Za-z][\w .'\-]{0,39}?):)"
    r"(?:\s+|$)(?P<text>.*)$"
)
TIME_ONLY = re.compile(r"^\s*(?:#{1,6}\s*)?\[?(?P<ts>[0-9][0-9:T .+\-Z]{3,40}(?:UTC)?)\]?\s*$")
# A line that starts like a timestamped turn ("[2024-05-01 10:00] ..."), whatever follows.
TIMESTAMPED = re.compile(r"^\s*(?:[-*]\s+)?\[(?P<ts>[^\]]{4,40})\]\s*(?P<rest>.*)$")


def text_flavour(text: str) -> str:
    """``transcript`` or ``prose``, decided line by line: one timestamped ``[time] Speaker:``
    turn makes a transcript (prose does not look like that), else ``Speaker:`` lines must be
    at least two and half the lines. In a transcript the other lines continue the turn above
    them, or are reported (a timestamped line without a speaker, text before the first turn):
    an odd line never turns a transcript into prose."""
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    if not lines:
        return "prose"
    turns = 0
    for line in lines:
        match = speaker_match(line)
        if match is None:
            continue
        if match.group("ts"):
            return "transcript"
        turns += 1
    return "transcript" if turns >= 2 and turns * 2 >= len(lines) else "prose"


def speaker_match(line: str) -> re.Match[str] | None:
    match = _SPEAKER_LINE.match(line)
    if match is None:
        return None
    name = (match.group("bold") or match.group("name") or "").strip()
    if not name or name.lower() in ("http", "https", "ftp", "mailto", "file"):
        return None
    if len(name.split()) > 4:
        return None
    return match
