"""``graphmem.sources``: every input format, times, and structured problems with file and line."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from graphmem import GraphMemError, GraphMemory, HashEmbedder, InputError
from graphmem.sources.files import (
    ParseResult,
    Problem,
    SourceError,
    detect_format,
    iter_input_files,
    load_episodes,
    parse_file,
    parse_paths,
    parse_text,
)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "data"


def parse(text: str, name: str = "in.json", **kwargs: Any) -> ParseResult:
    return parse_text(text, source=name, **kwargs)


def ok(text: str, name: str = "in.json", **kwargs: Any) -> list[dict[str, Any]]:
    result = parse(text, name, **kwargs)
    assert result.problems == [], [str(p) for p in result.problems]
    return result.episodes()


def problems(text: str, name: str = "in.json", **kwargs: Any) -> list[str]:
    return [str(p) for p in parse(text, name, **kwargs).problems]


# ------------------------------------------------------------------------------- detection
@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("a.jsonl", '{"content": "x"}\n', "jsonl"),
        ("a.ndjson", '{"x": 1}\n', "jsonl"),
        ("a.json", '[{"role": "user", "content": "hi"}]', "chat"),
        ("a.json", '{"messages": []}', "chat"),
        ("a.json", '[{"type": "human", "data": {"content": "hi"}}]', "chat"),
        ("a.json", '[{"episode": 1, "success": true}]', "jsonl"),
        ("a.json", '{"episode": 1}', "jsonl"),
        ("a.md", "Ana: hi\nBob: hello\n", "transcript"),
        ("a.txt", "[2024-05-01 10:00] Ana: hi\n[10:01] Bob: yo\n", "transcript"),
        ("a.md", "# Notes\n\nI live in Lisbon.\n\nIt is sunny.\n", "prose"),
        ("stdin", '{"a": 1}\n{"a": 2}\n', "jsonl"),
        ("stdin", '[{"role": "user", "content": "hi"}]', "chat"),
        ("stdin", "Ana: hi\nBob: hey\n", "transcript"),
        ("stdin", "Just some text.", "prose"),
    ],
)
def test_detect_format(name: str, text: str, expected: str) -> None:
    assert detect_format(name, text) == expected


def test_unknown_format_and_per_are_input_errors() -> None:
    with pytest.raises(InputError, match="format must be one of"):
        parse_text("x", source="a", format="csv")
    with pytest.raises(InputError, match="per must be one of"):
        parse_text("x", source="a", per="line")


# ------------------------------------------------------------------------------- chat
def test_openai_messages_one_episode_per_message() -> None:
    text = json.dumps([
        {"role": "system", "content": "be nice"},
        {"role": "user", "name": "Ana", "content": "I live in Lisbon.",
         "timestamp": "2024-01-08T09:12:00Z"},
        {"role": "assistant", "content": "Nice!"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "1"}]},
        {"role": "user", "content": [{"type": "text", "text": "I work"},
                                     {"type": "image_url", "image_url": {"url": "x"}},
                                     {"type": "text", "text": "at Acme."}]},
    ])
    eps = ok(text, "chat.json")
    assert [e["content"] for e in eps] == ["I live in Lisbon.", "Nice!", "I work\nat Acme."]
    assert eps[0]["metadata"] == {"speaker": "Ana", "role": "user"}
    assert eps[1]["metadata"] == {"speaker": "assistant", "role": "assistant"}
    assert eps[2]["metadata"] == {"speaker": "user", "role": "user"}
    assert all(e["kind"] == "message" and e["source"] == "chat.json" for e in eps)
    t0 = datetime(2024, 1, 8, 9, 12, tzinfo=UTC)
    # messages without their own time follow the last one, 1 ms apart, in file order
    assert [e["reference_time"] for e in eps] == [t0, t0 + timedelta(milliseconds=1),
                                                  t0 + timedelta(milliseconds=2)]


def test_messages_object_with_file_time_and_speakers() -> None:
    text = json.dumps({
        "reference_time": "2024-03-14T18:30:00+01:00",
        "speakers": {"user": "Maya"},
        "metadata": {"channel": "app"},
        "messages": [
            {"role": "user", "content": "I moved to Porto last month."},
            {"role": "assistant", "content": "Congrats!"},
        ],
    })
    eps = ok(text)
    start = datetime(2024, 3, 14, 17, 30, tzinfo=UTC)
    assert eps[0]["reference_time"] == start
    assert eps[1]["reference_time"] == start + timedelta(milliseconds=1)
    assert eps[0]["metadata"] == {"channel": "app", "speaker": "Maya", "role": "user"}


def test_langchain_message_dicts() -> None:
    text = json.dumps([
        {"type": "human", "data": {"content": "I like tea.", "type": "human", "name": None,
                                   "additional_kwargs": {"timestamp": "2024-02-01T10:00:00Z"}}},
        {"type": "ai", "data": {"content": "Tea it is.", "type": "ai"}},
        {"type": "HumanMessage", "content": "I love Porto."},
        {"type": "chat", "data": {"content": "hello", "role": "assistant"}},
    ])
    eps = ok(text)
    assert [e["metadata"]["role"] for e in eps] == ["user", "assistant", "user", "assistant"]
    assert eps[0]["reference_time"] == datetime(2024, 2, 1, 10, tzinfo=UTC)
    assert eps[2]["content"] == "I love Porto."


def test_per_conversation_makes_one_text_episode() -> None:
    text = json.dumps({"timestamp": "2024-01-01", "messages": [
        {"role": "user", "name": "Ana", "content": "I live in Lisbon."},
        {"role": "assistant", "content": "Nice."},
    ]})
    (ep,) = ok(text, per="conversation")
    assert ep["kind"] == "text"
    assert ep["content"] == "Ana: I live in Lisbon.\nassistant: Nice."
    assert ep["metadata"] == {"speakers": ["Ana", "assistant"], "messages": 2}
    assert ep["reference_time"] == datetime(2024, 1, 1, tzinfo=UTC)


def test_chat_problems_have_the_message_line_and_field() -> None:
    text = (
        '{\n'
        '  "messages": [\n'
        '    {"role": "user", "content": "fine"},\n'
        '    {"role": "user", "content": ""},\n'
        '    {"content": "who?"},\n'
        '    {"role": "user", "content": "x", "timestamp": "yesterday"},\n'
        '    {"role": "user", "content": "y", "timestamp": "2024-01-01T10:00:00"}\n'
        '  ]\n'
        '}\n'
    )
    found = problems(text, "c.json", format="chat")
    assert found[0] == "c.json:4: messages[1].content: is empty"
    assert found[1].startswith("c.json:5: messages[2].role: missing")
    assert found[2].startswith("c.json:6: messages[3].timestamp: 'yesterday' is not a date")
    assert found[3].startswith("c.json:7: messages[4].timestamp:")
    assert "no timezone" in found[3] and "--assume-utc" in found[3]
    assert len(found) == 4
    # assume_utc accepts the naive time; the other three stay invalid
    assert len(problems(text, "c.json", format="chat", assume_utc=True)) == 3


def test_chat_bad_shapes() -> None:
    assert problems("[1, 2", "c.json", format="chat")[0].startswith("c.json:1: invalid JSON")
    assert problems('{"x": 1}', "c.json", format="chat") == [
        'c.json:1: messages: a chat file needs a "messages" list'
    ]
    assert problems('{"messages": []}', "c.json") == [
        "c.json:1: messages: the conversation has no messages"
    ]
    only_system = json.dumps([{"role": "system", "content": "x"}])
    assert "no message with text" in problems(only_system, "c.json")[0]
    bad_speakers = json.dumps({"speakers": ["Ana"], "messages": [{"role": "user",
                                                                  "content": "x"}]})
    assert "speakers: must map roles to names" in problems(bad_speakers, "c.json")[0]


# ------------------------------------------------------------------------------- JSONL
def test_jsonl_episodes_and_events() -> None:
    text = "\n".join([
        json.dumps({"content": "I live in Lisbon.", "reference_time": "2024-01-01T10:00:00Z",
                    "metadata": {"speaker": "Ana"}}),
        "",
        json.dumps({"content": "hello", "source": "mail", "kind": "text", "group_id": "g2"}),
        json.dumps({"episode": 743, "timestamp": "2024-05-06T09:15:37Z", "success": True,
                    "params": {"force_peak": 12.5}}),
        json.dumps({"tool": "search", "ts": 1714988137}),
        json.dumps({"tool": "search", "ts": 1714988137500}),
        json.dumps({"step": 1}),
    ])
    eps = ok(text, "log.jsonl")
    assert eps[0]["reference_time"] == datetime(2024, 1, 1, 10, tzinfo=UTC)
    assert eps[0]["metadata"] == {"speaker": "Ana"} and eps[0]["kind"] == "message"
    assert eps[1]["source"] == "mail" and eps[1]["group_id"] == "g2" and eps[1]["kind"] == "text"
    event = eps[2]
    assert event["kind"] == "json" and event["source"] == "log.jsonl"
    assert json.loads(event["content"])["params"] == {"force_peak": 12.5}
    assert event["reference_time"] == datetime(2024, 5, 6, 9, 15, 37, tzinfo=UTC)
    assert eps[3]["reference_time"] == datetime.fromtimestamp(1714988137, UTC)
    assert eps[4]["reference_time"] == datetime.fromtimestamp(1714988137.5, UTC)
    assert eps[5]["reference_time"] is None


def test_events_format_keeps_content_fields_as_records() -> None:
    (ep,) = ok('{"content": "raw", "n": 1}\n', "x.jsonl", format="events")
    assert ep["kind"] == "json" and json.loads(ep["content"]) == {"content": "raw", "n": 1}


def test_jsonl_problems_are_collected_for_every_line() -> None:
    text = "\n".join([
        '{"content": "ok"}',
        '{"content": ""}',
        "not json",
        "[1, 2]",
        '{"content": "x", "speaker": "Ana"}',
        '{"content": "x", "kind": "fact"}',
        '{"content": "x", "reference_time": "2024-13-01"}',
        '{"content": "x", "metadata": [1]}',
        '{"timestamp": true}',
        "{}",
        '{"content": 5}',
    ])
    found = problems(text, "bad.jsonl")
    assert found == [
        "bad.jsonl:2: content: is empty",
        "bad.jsonl:3: invalid JSON: Expecting value (column 1)",
        "bad.jsonl:4: expected a JSON object, got a list",
        "bad.jsonl:5: speaker: unknown field speaker; an episode line has content, "
        "reference_time, source, kind, metadata, group_id (put extra data under metadata)",
        'bad.jsonl:6: kind: must be one of message, text, json, event, got "fact"',
        found[5],
        "bad.jsonl:8: metadata: must be an object, got a list",
        "bad.jsonl:9: timestamp: expected a date-time, got true",
        "bad.jsonl:10: empty JSON object",
        "bad.jsonl:11: content: must be a string, got a number",
    ]
    assert found[5].startswith("bad.jsonl:7: reference_time: '2024-13-01' is not a date")


def test_json_array_of_records_and_pretty_object() -> None:
    text = '[\n  {"episode": 1, "ok": true},\n  {"episode": 2}\n]\n'
    result = parse(text, "r.json")
    assert [r.line for r in result.records] == [2, 3]
    (ep,) = ok('\n{\n  "episode": 9,\n  "ok": false\n}\n', "one.json")
    assert json.loads(ep["content"]) == {"episode": 9, "ok": False}


def test_jsonl_line_with_messages_is_a_conversation() -> None:
    line = json.dumps({"messages": [{"role": "user", "content": "hi"},
                                    {"role": "assistant", "content": "hello"}]})
    eps = ok(line + "\n" + line.replace("hi", "hey") + "\n", "convs.jsonl")
    assert [e["content"] for e in eps] == ["hi", "hello", "hey", "hello"]


# ------------------------------------------------------------------------------- transcripts
TRANSCRIPT = """\
# Sync

## 2024-04-02

[09:30] Maya: Morning!
[09:31] **Leo:** I live in Braga.
Leo: I work at Atlas Robotics,
  on the perception side.
- **Maya**: I like the silicone fingertips.

[2024-04-16 14:02 +02:00] Leo: The arm moved.
[2024-04-17T08:00:00Z] Maya: ok
"""


def test_transcript_speakers_times_and_continuations() -> None:
    eps = ok(TRANSCRIPT, "sync.md")
    assert [(e["metadata"]["speaker"], e["content"]) for e in eps] == [
        ("Maya", "Morning!"),
        ("Leo", "I live in Braga."),
        ("Leo", "I work at Atlas Robotics, on the perception side."),
        ("Maya", "I like the silicone fingertips."),
        ("Leo", "The arm moved."),
        ("Maya", "ok"),
    ]
    t931 = datetime(2024, 4, 2, 9, 31, tzinfo=UTC)  # no offset: UTC
    assert eps[0]["reference_time"] == datetime(2024, 4, 2, 9, 30, tzinfo=UTC)
    assert eps[1]["reference_time"] == t931
    assert eps[2]["reference_time"] == t931 + timedelta(milliseconds=1)
    assert eps[3]["reference_time"] == t931 + timedelta(milliseconds=2)
    assert eps[4]["reference_time"] == datetime(2024, 4, 16, 12, 2, tzinfo=UTC)
    assert all(e["kind"] == "message" and e["source"] == "sync.md" for e in eps)


def test_transcript_per_conversation() -> None:
    (ep,) = ok(TRANSCRIPT, "sync.md", per="conversation")
    assert ep["kind"] == "text" and ep["content"].startswith("Maya: Morning!\nLeo: I live")
    assert ep["metadata"]["speakers"] == ["Maya", "Leo"]
    assert ep["reference_time"] == datetime(2024, 4, 2, 9, 30, tzinfo=UTC)


def test_transcript_without_times_has_no_reference_time() -> None:
    eps = ok("Ana: I live in Lisbon.\nBob: I live in Braga.\n", "t.txt")
    assert [e["reference_time"] for e in eps] == [None, None]


def test_transcript_problems() -> None:
    text = ("Intro text\n[10:00] Ana: hi\n[2024-02-30 10:00] Bob: x\nCara:\n"
            "[2024-01-01 25:00] D: y\n")
    found = problems(text, "t.md", format="transcript")
    assert found[0] == "t.md:1: expected `Speaker: text` (use --format prose for free text)"
    assert found[1] == ("t.md:2: timestamp: [10:00] has a time but no date yet; "
                        "give a full date first")
    assert found[2].startswith("t.md:3: timestamp: [2024-02-30 10:00]")
    assert found[3].startswith("t.md:5: timestamp:")
    assert found[4] == "t.md:4: text: Cara says nothing"
    assert problems("# only a heading\n", "t.md", format="transcript") == [
        "t.md: no `Speaker: text` lines found"
    ]


# ------------------------------------------------------------------------------- prose
def test_prose_paragraphs_and_whole_file() -> None:
    text = "I live in Lisbon.\nIt is sunny.\n\n\nI work at Acme.\n"
    eps = ok(text, "notes.txt", format="prose")
    assert [e["content"] for e in eps] == ["I live in Lisbon. It is sunny.", "I work at Acme."]
    assert all(e["kind"] == "text" and e["reference_time"] is None for e in eps)
    assert [r.line for r in parse(text, "notes.txt", format="prose").records] == [1, 5]
    (whole,) = ok(text, "notes.txt", format="prose", per="file")
    assert whole["content"] == text.strip()


def test_empty_input_and_nul() -> None:
    assert problems("  \n", "e.txt") == ["e.txt: the input is empty"]
    assert problems('{"content": "a\\u0000b"}\n', "n.jsonl") == [
        "n.jsonl:1: content: contains a NUL character"
    ]


# ------------------------------------------------------------------------------- files, errors
def test_parse_file_names_the_source_by_file_name(tmp_path: Path) -> None:
    sub = tmp_path / "deep"
    sub.mkdir()
    path = sub / "log.jsonl"
    path.write_text('{"x": 1}\n', encoding="utf-8")
    result = parse_file(path)
    assert result.episodes()[0]["source"] == "log.jsonl"
    assert result.records[0].file == str(path)


def test_unreadable_and_non_utf8_files(tmp_path: Path) -> None:
    bad = tmp_path / "latin.txt"
    bad.write_bytes(b"Ana: ol\xe1\n")
    assert str(parse_file(bad).problems[0]) == f"{bad}:1: not UTF-8 text (byte 7)"
    missing = parse_file(tmp_path / "nope.json")
    assert "cannot read" in str(missing.problems[0])
    bom = tmp_path / "bom.jsonl"
    bom.write_bytes('\ufeff{"x": 1}\n'.encode())
    assert parse_file(bom).problems == []


def test_directories_expand_to_known_extensions(tmp_path: Path) -> None:
    (tmp_path / "b.jsonl").write_text('{"x": 1}\n')
    (tmp_path / "a.md").write_text("Ana: hi\nBob: yo\n")
    (tmp_path / "skip.py").write_text("print(1)\n")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "c.json").write_text("[]")
    assert [p.name for p in iter_input_files([tmp_path])] == ["a.md", "b.jsonl"]
    assert len(parse_paths([tmp_path]).records) == 3


def test_source_error_carries_every_problem(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text('{"content": ""}\n{"content": "fine"}\n')
    (tmp_path / "b.jsonl").write_text("oops\n")
    with pytest.raises(SourceError) as info:
        load_episodes([tmp_path])
    err = info.value
    assert isinstance(err, InputError) and isinstance(err, GraphMemError)
    assert err.code == "source"
    assert [p.file.rsplit("/", 1)[-1] for p in err.problems] == ["a.jsonl", "b.jsonl"]
    assert err.lines()[0].endswith("a.jsonl:1: content: is empty")
    assert str(err).startswith("2 invalid records: ")
    assert err.problems[0].to_dict()["line"] == 1
    assert [e["content"] for e in load_episodes([tmp_path], skip_invalid=True)] == ["fine"]


def test_problem_formatting() -> None:
    assert str(Problem("f", 3, "x", "bad")) == "f:3: x: bad"
    assert str(Problem("f", None, None, "bad")) == "f: bad"


def test_episodes_feed_add_episodes_and_reingest_is_a_noop(tmp_path: Path) -> None:
    path = tmp_path / "robot.jsonl"
    path.write_text("".join(
        json.dumps({"episode": i, "timestamp": f"2024-05-0{i}T10:00:00Z", "success": i % 2 == 0})
        + "\n" for i in range(1, 5)
    ))
    with GraphMemory(f"{tmp_path}/m.db", embedder=HashEmbedder(64)) as memory:
        first = memory.add_episodes(load_episodes([path]))
        again = memory.add_episodes(load_episodes([path]))
        assert [r.episode_id for r in first] == [r.episode_id for r in again]
        assert not any(r.already_present for r in first)
        assert all(r.already_present for r in again)
        assert memory.stats()["episodes"] == 4


def test_bundled_examples_parse_cleanly() -> None:
    result = parse_paths([EXAMPLES])
    assert result.problems == []
    formats = {Path(f).name: fmt for f, fmt in result.formats.items()}
    assert formats["01-maya-lisbon.json"] == "chat"
    assert formats["04-lab-sync.md"] == "transcript"
    assert formats["05-robot-grasps.jsonl"] == "jsonl"
    robot = [r for r in result.records if r.episode["source"] == "05-robot-grasps.jsonl"]
    assert 30 <= len(robot) <= 60 and all(r.episode["kind"] == "json" for r in robot)
    speakers = {r.episode["metadata"].get("speaker") for r in result.records}
    assert {"Maya", "Leo", "assistant"} <= speakers
    assert all(r.episode["reference_time"] is not None for r in result.records)
