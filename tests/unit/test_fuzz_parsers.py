"""Fuzzing (hypothesis) of the three parsers that read users' files: JSON lines, transcripts and
``graphmem import``'s export reader. Whatever the input, each returns records and problems and
raises nothing; a record it returns is one ``add_episodes`` accepts (for the ingest parsers),
and every problem names its line.

Derandomized and bounded (``GRAPHMEM_FUZZ_PARSER_EXAMPLES`` each, a few seconds), so the
normal test command runs it on every change; set ``GRAPHMEM_FUZZ_RANDOM=1`` and raise the count
to search longer locally.
"""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphmem.cli.export_cmd import read_export
from graphmem.sources.files import parse_bytes, parse_text
from graphmem.sources.records import validate_episode

EXAMPLES = int(os.environ.get("GRAPHMEM_FUZZ_PARSER_EXAMPLES", "100"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=not os.environ.get("GRAPHMEM_FUZZ_RANDOM"),
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
pytestmark = pytest.mark.timeout(max(120, EXAMPLES))

# Pieces that reach the parsers' branches: times of every shape, speakers, markdown, JSON.
TIMES = ["[2024-05-01 10:00]", "[10:05]", "[2024-13-45 99:99]", "[0001-01-01T00:00:00Z]",
         "[9999-12-31 23:59:59+14:00]", "## 2024-05-01", "[]", "[    ]", "[2024-05-01T10:00Z]"]
SPEAKERS = ["Bob: ", "**Ann:** ", "- Maya: ", ": ", "http://x: ", "A B C D E F: ", "Москва: ",
            "", "Bob:", "北京: "]
BODIES = ["I live in Paris.", "", "   ", "I left Atlas Robotics.", "I prefer 🍵.", "\x00\x1b[31m",
          "\u2028", "\ud800", "a" * 300, "Note: x", "---", "# heading", "```"]
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                 max_size=3),
    max_leaves=5,
)
KEYS = ["content", "reference_time", "source", "kind", "metadata", "group_id", "messages",
        "timestamp", "type", "id", "format", "version", "embedder", "role", "speakers"]


@st.composite
def transcript_lines(draw: st.DrawFn) -> str:
    lines = []
    for _ in range(draw(st.integers(0, 8))):
        if draw(st.booleans()):
            line = (draw(st.sampled_from(["", *TIMES])) + " " + draw(st.sampled_from(SPEAKERS))
                    + draw(st.sampled_from(BODIES)))
        else:
            line = draw(st.text(max_size=40))
        lines.append(line)
    return draw(st.sampled_from(["\n", "\r\n", "\n\n"])).join(lines)


@st.composite
def json_lines(draw: st.DrawFn) -> str:
    lines = []
    for _ in range(draw(st.integers(0, 6))):
        choice = draw(st.integers(0, 3))
        if choice == 0:
            obj = draw(st.dictionaries(st.sampled_from(KEYS), JSON_VALUES, max_size=5))
            lines.append(json.dumps(obj))
        elif choice == 1:
            lines.append(json.dumps(draw(JSON_VALUES)))
        elif choice == 2:
            lines.append(draw(st.text(max_size=40)))
        else:  # a valid episode, or one with a shape of time the parser must judge
            lines.append(json.dumps({"content": draw(st.sampled_from(BODIES)),
                                     "reference_time": draw(st.sampled_from(
                                         [t.strip("[]#") for t in TIMES] + [0, -1, 1e30]))}))
    return "\n".join(lines)


@st.composite
def export_files(draw: st.DrawFn) -> bytes:
    lines: list[bytes] = []
    for _ in range(draw(st.integers(0, 6))):
        choice = draw(st.integers(0, 3))
        if choice == 0:
            row = draw(st.dictionaries(st.sampled_from(KEYS), JSON_VALUES, max_size=5))
            if draw(st.booleans()):
                row["type"] = draw(st.sampled_from(
                    ["meta", "episode", "entity", "fact", "provenance", "ending", "link",
                     "mention", "other"]))
            lines.append(json.dumps(row).encode())
        elif choice == 1:
            lines.append(draw(st.binary(max_size=40)))
        elif choice == 2:
            lines.append(b'{"type": "meta", "format": "graphmem-export", "version": '
                         + str(draw(st.integers(-2, 100))).encode() + b"}")
        else:
            lines.append(draw(st.text(max_size=40)).encode("utf-8", "surrogatepass"))
    prefix = draw(st.sampled_from([b"", b"\xef\xbb\xbf", b"\xff\xfe"]))
    return prefix + b"\n".join(lines)


def _check_ingest(parsed: object) -> None:
    for record in parsed.records:  # type: ignore[attr-defined]
        validate_episode(dict(record.episode))
    for problem in parsed.problems:  # type: ignore[attr-defined]
        assert problem.reason


@FUZZ
@given(json_lines(), st.sampled_from(["jsonl", "events", "auto"]),
       st.sampled_from(["message", "conversation", "file"]))
def test_fuzz_jsonl_parser(text: str, fmt: str, per: str) -> None:
    _check_ingest(parse_text(text, source="x.jsonl", format=fmt, per=per))
    _check_ingest(parse_bytes(text.encode("utf-8", "surrogatepass"), source="x.jsonl",
                              format=fmt, per=per))


@FUZZ
@given(transcript_lines(), st.sampled_from(["transcript", "auto", "prose"]),
       st.sampled_from(["message", "conversation", "file", "paragraph"]))
def test_fuzz_transcript_parser(text: str, fmt: str, per: str) -> None:
    _check_ingest(parse_text(text, source="notes.txt", format=fmt, per=per))
    _check_ingest(parse_bytes(text.encode("utf-8", "surrogatepass"), source="notes.md",
                              format=fmt, per=per))


@FUZZ
@given(export_files())
def test_fuzz_import_reader(data: bytes) -> None:
    parsed = read_export(data, "x.jsonl")
    assert len(parsed.rows) == len(parsed.lines)
    for row in parsed.rows:
        assert isinstance(row, dict) and row.get("type") != "meta"
    for problem in parsed.problems:
        assert problem.line is not None and problem.reason
