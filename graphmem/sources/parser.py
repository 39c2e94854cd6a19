"""The parser of one input's text: each format's records become episodes or problems."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from .chat import chat_message
from .json_lines import Lines, array_items, object_members
from .records import Invalid, Problem, SourceRecord, json_type, validate_episode
from .times import CHAT_TIME_KEYS, TIME_KEYS, find_time, is_timestamp, transcript_time
from .transcript import TIME_ONLY, TIMESTAMPED, speaker_match

__all__ = ["Parser", "unparsable"]

_EPISODE_KEYS = ("content", "reference_time", "source", "kind", "metadata", "group_id")

_TICK = timedelta(milliseconds=1)


class Parser:
    """The records and problems of one input, one method per format (JSON documents and
    lines, chat conversations, transcripts, prose); every episode is validated as it is
    added, so nothing fails after parsing."""

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
            validate_episode(episode, field_prefix)
        except Invalid as exc:
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
        lines = Lines(text)
        if isinstance(data, dict):
            members = object_members(text, 0)
            if not isinstance(data.get("messages"), list):
                self.problem(1, "messages", "a chat file needs a \"messages\" list")
                return
            start = members.get("messages", 0)
            items = [(lines.line(off), v) for off, v in array_items(text, start)]
            self.conversation(data, items, lines.line(0))
        elif isinstance(data, list):
            items = [(lines.line(off), v) for off, v in array_items(text, 0)]
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
                lines = Lines(text)
                for off, value in array_items(text, 0):
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
                self.problem(number, None, unparsable(exc))

    def json_record(self, value: Any, line: int, events_only: bool, prefix: str) -> None:
        if not isinstance(value, dict):
            self.problem(line, None, f"expected a JSON object, got {json_type(value)}")
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
            when = find_time(record, ("reference_time",), self.assume_utc)
        except Invalid as exc:
            self.problem(line, exc.field, exc.reason)
            return
        metadata = record.get("metadata")
        if metadata is None:
            metadata = {}
        if not isinstance(metadata, dict):
            self.problem(line, "metadata", f"must be an object, got {json_type(metadata)}")
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
            when = find_time(record, TIME_KEYS, self.assume_utc)
        except Invalid as exc:
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
            anchor = find_time(top, CHAT_TIME_KEYS, self.assume_utc)
        except Invalid as exc:
            self.problem(top_line, exc.field, exc.reason)
            return
        if not items:
            self.problem(top_line, "messages", "the conversation has no messages")
            return
        metadata_top = top.get("metadata") or {}
        if not isinstance(metadata_top, dict):
            self.problem(top_line, "metadata", f"must be an object, got "
                                               f"{json_type(metadata_top)}")
            return
        turns: list[tuple[int, str, str, str, datetime | None]] = []  # line, role, speaker, text, t
        step = -1  # the first message without a time takes the conversation's time itself
        bad = False
        for index, (line, item) in enumerate(items):
            where = f"messages[{index}]"
            try:
                parsed = chat_message(item, where, names, self.assume_utc)
            except Invalid as exc:
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
            only = TIME_ONLY.match(line)
            if only is not None and is_timestamp(only.group("ts")):
                try:
                    anchor, day = transcript_time(only.group("ts"), day)
                    step = -1
                except Invalid as exc:
                    self.problem(number, exc.field, exc.reason)
                continue
            if line.lstrip().startswith("#") or set(line.strip()) <= set("-*_=`"):
                continue  # headings and rules
            match = speaker_match(line)
            stamped = TIMESTAMPED.match(line) if match is None else None
            if stamped is not None and is_timestamp(stamped.group("ts")):
                # A timestamp starts a new turn: one without a speaker is not a continuation.
                self.problem(number, "speaker", "a timestamped line needs `Speaker: text` "
                                                "after the time")
                continue
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
                    when, day = transcript_time(match.group("ts"), day)
                except Invalid as exc:
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


def unparsable(exc: BaseException) -> str:
    detail = str(exc).splitlines()[0][:160] if str(exc) else type(exc).__name__
    return f"cannot be parsed ({type(exc).__name__}: {detail})"
