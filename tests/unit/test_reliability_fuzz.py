"""Fuzzing (hypothesis) of the API arguments, the filter language and the ingest parsers.

The contract: whatever the arguments, only ``GraphMemError`` subclasses escape, a rejected call
leaves the store exactly as it was (export snapshot before/after), and an accepted episode is
stored verbatim. For the parsers (``graphmem.sources.files``): only ``GraphMemError`` escapes, and
whatever they accept without problems ``add_episodes`` accepts too.

Runs are derandomized (the same examples every run) so that CI is stable; raise
``GRAPHMEM_FUZZ_EXAMPLES`` and set ``GRAPHMEM_FUZZ_RANDOM=1`` locally to search longer.
"""

from __future__ import annotations

import json
import os
import string
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from graphmem import GraphMemError, GraphMemory
from graphmem._filters import matches, parse_filters
from tests.helpers.reliability import snapshot

EXAMPLES = int(os.environ.get("GRAPHMEM_FUZZ_EXAMPLES", "100"))
pytestmark = pytest.mark.timeout(max(180, EXAMPLES))  # longer local searches get longer
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=not os.environ.get("GRAPHMEM_FUZZ_RANDOM"),
    database=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
        HealthCheck.data_too_large,
    ],
)
BASE = datetime(2024, 1, 1, tzinfo=UTC)

# ------------------------------------------------------------------------------------ strategies
INJECTIONS = [
    "'; DROP TABLE facts; --",
    '" OR 1=1 --',
    "`facts`",
    "}) MATCH (n) DETACH DELETE n //",
    "$param",
    'NEAR("a" "b")',
    '"',
    "*",
    "^start",
    "AND OR NOT",
    "a:b",
    "\\",
    "%_",
]
def _big(exponent: int) -> int:
    """10**5000-like ints (built lazily: hypothesis reprs its strategies' constants)."""
    if exponent in (63, -64):
        return 2**63 if exponent > 0 else -(2**63) - 1
    return 10**exponent if exponent > 0 else -(10**-exponent)


odd_chars = st.one_of(
    st.characters(),
    st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),  # lone surrogates
    st.characters(max_codepoint=0x1F),  # control characters, NUL included
    st.sampled_from(list("'\"`;%*^(){}[]\\$:\u200b\u202e\ufeff\ufffd")),
)
texts = st.one_of(
    st.text(max_size=40),
    st.text(odd_chars, max_size=40),
    st.sampled_from(INJECTIONS),
    st.builds(lambda a, b: f"{a} lives in {b}.", st.sampled_from(["Alice", "Bob", "I"]),
              st.text(string.ascii_letters, min_size=1, max_size=12)),
)
offsets = st.builds(
    timezone, st.timedeltas(min_value=timedelta(hours=-23, minutes=59),
                            max_value=timedelta(hours=23, minutes=59))
)
datetimes = st.one_of(
    st.datetimes(),  # naive
    st.datetimes(timezones=st.just(UTC)),
    st.datetimes(timezones=offsets),  # includes year 1 at +05:00 and year 9999 at -05:00
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.sampled_from([5000, -4400, 63, -64]).map(_big),  # 10**5000: even repr() fails on it
    st.floats(),
    texts,
    st.binary(max_size=8),
    datetimes,
    st.dates(),
)
anything = st.one_of(
    scalars,
    st.lists(scalars, max_size=3),
    st.dictionaries(st.text(max_size=6), scalars, max_size=3),
    st.sampled_from([object(), ..., {1, 2}, ("a",), len]),
)
json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
              st.text(max_size=20)),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)


@pytest.fixture
def mem(memory: GraphMemory) -> Iterator[GraphMemory]:
    """The memory fixture (every store) with a little of everything in it."""
    memory.add_fact("Alice", "lives_in", "Paris", valid_from=BASE)
    memory.add_fact("Alice", "likes", "jazz", valid_from=BASE)
    memory.add_fact("gripper", "grip_force_for", value=12.5, valid_from=BASE)
    memory.add_episode("Bob works at Acme.", reference_time=BASE)
    memory.add_episode('{"episode": 4, "success": true, "params": {"force": 3}}', kind="json",
                       reference_time=BASE)
    memory.add_fact("Zed", "lives_in", "Oslo", group_id="other", valid_from=BASE)
    yield memory


def attempt(mem: GraphMemory, call: Callable[[], Any]) -> tuple[bool, Any]:
    """Run ``call``; an error must be a GraphMemError and must leave the store unchanged."""
    before = snapshot(mem)
    try:
        return True, call()
    except GraphMemError as exc:
        assert exc.code and str(exc)
        after = snapshot(mem)
        assert after == before, f"rejected call changed the store: {exc!r}"
        return False, exc


# ------------------------------------------------------------------------------------ API
# Each example passes plausible values for most arguments and breaks up to two of them (so that
# calls get past the first check and the deeper paths are fuzzed too).
Spec = dict[str, tuple[st.SearchStrategy[Any], st.SearchStrategy[Any]]]

aware = st.datetimes(min_value=datetime(1900, 1, 1), max_value=datetime(2100, 1, 1),
                     timezones=st.one_of(st.just(UTC), offsets))
names = st.one_of(st.sampled_from(["Alice", "alice", "Bob", "Paris", "jazz", "gripper"]), texts)
group_names = st.one_of(st.sampled_from(["default", "other", "tenant a"]), texts)
iso_times = st.sampled_from(
    ["2024-05-01", "2024-05-01T10:00:00Z", "2024-05-01T10:00:00", "2024-13-45", "2024-02-30",
     "yesterday", "9999-12-31T23:59:59+00:00", "0001-01-01T00:00:00+01:00", ""]
)
filter_paths = st.one_of(
    st.sampled_from(["success", "params.force", "grip_force_for", "Lives In", "a..b", "1abc",
                     "$in"]),
    texts, st.integers(), st.none(), st.booleans(),
)
operators = st.one_of(st.sampled_from(["$eq", "$ne", "$lt", "$lte", "$gt", "$gte", "$in",
                                       "$regex", "$where", "eq", ""]), texts)
operands = st.one_of(scalars, st.lists(scalars, max_size=3), st.just([]))
filters = st.one_of(
    st.none(),
    st.dictionaries(filter_paths, st.one_of(
        scalars, st.dictionaries(operators, operands, max_size=3), anything), max_size=3),
    anything,
)


def draw_args(data: st.DataObject, spec: Spec) -> dict[str, Any]:
    broken = data.draw(st.sets(st.sampled_from(sorted(spec)), max_size=2), label="broken")
    return {
        name: data.draw(weird if name in broken else valid, label=name)
        for name, (valid, weird) in spec.items()
    }


EPISODE_ARGS: Spec = {
    "content": (st.one_of(texts, st.builds(json.dumps, json_values)), anything),
    "group_id": (group_names, anything),
    "source": (st.one_of(st.none(), texts), anything),
    "kind": (st.sampled_from(["message", "text", "json", "event"]),
             st.one_of(st.sampled_from(["fact", "video", "MESSAGE"]), anything)),
    "reference_time": (st.one_of(st.none(), aware, iso_times), st.one_of(datetimes, anything)),
    "metadata": (st.one_of(st.none(), st.dictionaries(st.text(max_size=8), json_values,
                                                      max_size=3)),
                 st.one_of(st.dictionaries(texts, scalars, max_size=2), anything)),
    "extractor": (st.sampled_from([None, "rules", "structured", "auto"]),
                  st.one_of(st.sampled_from(["llm", "bogus", " RULES "]), anything)),
}


@FUZZ
@given(data=st.data())
def test_fuzz_add_episode(mem: GraphMemory, data: st.DataObject) -> None:
    args = draw_args(data, EPISODE_ARGS)
    content = args.pop("content")
    ok, result = attempt(mem, lambda: mem.add_episode(content, **args))
    event(f"add_episode: {'stored' if ok else 'rejected'}")
    if ok:
        stored = mem.episode(result.episode_id)
        assert stored is not None and stored.content == content  # verbatim
        assert stored.group_id == args["group_id"]
        if not result.already_present:  # (source None and "" are the same episode)
            assert stored.source == args["source"]
            assert stored.metadata == (args["metadata"] or {})


FACT_ARGS: Spec = {
    "subject": (names, anything),
    "predicate": (st.sampled_from(["lives_in", "likes", "works_at", "params.force",
                                   "has_status", "grip_force_for"]),
                  st.one_of(st.sampled_from(["Lives In", "a..b", "_x", "x.", "1abc", "ñ",
                                             "lives_in\n", "a" * 300]), texts, anything)),
    "target": (st.one_of(st.tuples(names, st.none()), st.tuples(st.none(), st.one_of(
        st.booleans(), st.integers(), st.floats(), texts))), st.tuples(anything, anything)),
    "group_id": (group_names, anything),
    "valid_from": (st.one_of(st.none(), aware), st.one_of(datetimes, anything)),
    "valid_to": (st.one_of(st.none(), st.none(), aware), st.one_of(datetimes, anything)),
    "source": (st.one_of(st.none(), texts), anything),
    "confidence": (st.floats(0, 1), st.one_of(st.floats(), st.integers(), anything)),
    "mode": (st.sampled_from([(False, False), (True, False), (False, True)]),
             st.tuples(anything, anything)),
    "statement": (st.one_of(st.none(), texts), anything),
    "replaces": (st.one_of(st.none(), names), anything),
}


@FUZZ
@given(data=st.data())
def test_fuzz_add_fact(mem: GraphMemory, data: st.DataObject) -> None:
    args = draw_args(data, FACT_ARGS)
    subject, predicate = args.pop("subject"), args.pop("predicate")
    obj, args["value"] = args.pop("target")
    args["negated"], args["correction"] = args.pop("mode")
    ok, result = attempt(mem, lambda: mem.add_fact(subject, predicate, obj, **args))
    event(f"add_fact: {'stored' if ok else 'rejected'}")
    if ok:
        episode = mem.episode(result.episode_id)
        assert episode is not None and episode.group_id == args["group_id"]
        if args["statement"]:
            assert episode.content == args["statement"]  # verbatim
        for fact in mem.history(subject, group_id=args["group_id"]):
            assert fact.group_id == args["group_id"]


RECALL_ARGS: Spec = {
    "query": (st.one_of(texts, st.text(max_size=400), st.sampled_from(INJECTIONS)), anything),
    "group_id": (group_names, anything),
    "as_of": (st.one_of(st.none(), aware), st.one_of(datetimes, anything)),
    "known_at": (st.one_of(st.none(), aware), st.one_of(datetimes, anything)),
    "k": (st.integers(1, 1000), st.one_of(st.integers(),
                                          st.sampled_from([0, 1001, 10**30, True]), anything)),
    "hops": (st.integers(0, 3), st.one_of(st.integers(-2, 5), anything)),
    "filters": (filters, anything),
}


@FUZZ
@given(data=st.data())
def test_fuzz_recall(mem: GraphMemory, data: st.DataObject) -> None:
    args = draw_args(data, RECALL_ARGS)
    query = args.pop("query")
    ok, result = attempt(mem, lambda: mem.recall(query, **args))
    event(f"recall: {'answered' if ok else 'rejected'}")
    if ok:
        assert len(result.facts) <= args["k"]
        assert all(h.group_id == args["group_id"] for h in result.facts)
        result.to_context()


READ_ARGS: Spec = {
    "entity": (names, anything),
    "predicate": (st.one_of(st.none(), st.sampled_from(["lives_in", "likes"])),
                  st.one_of(texts, anything)),
    "group_id": (group_names, anything),
    "include_history": (st.booleans(), anything),
    "which": (st.sampled_from(["history", "facts", "episode", "stats", "export"]),
              st.sampled_from(["history", "facts", "episode", "stats", "export"])),
}


@FUZZ
@given(data=st.data())
def test_fuzz_reads(mem: GraphMemory, data: st.DataObject) -> None:
    a = draw_args(data, READ_ARGS)
    calls: dict[str, Callable[[], Any]] = {
        "history": lambda: mem.history(a["entity"], predicate=a["predicate"],
                                       group_id=a["group_id"]),
        "facts": lambda: mem.facts(group_id=a["group_id"], entity=a["entity"],
                                   include_history=a["include_history"]),
        "episode": lambda: mem.episode(a["entity"]),
        "stats": lambda: mem.stats(a["group_id"]),
        "export": lambda: list(mem.export(group_id=a["group_id"])),
    }
    ok, _ = attempt(mem, calls[a["which"]])
    event(f"{a['which']}: {'answered' if ok else 'rejected'}")


FORGET_ARGS: Spec = {
    "group_id": (group_names, anything),
    "target": (
        st.one_of(st.tuples(st.just("episode_id"), st.one_of(st.just("EXISTING"), texts)),
                  st.tuples(st.just("entity"), names), st.just(("all", True))),
        st.one_of(st.tuples(st.sampled_from(["episode_id", "entity", "all"]), anything),
                  st.just(("all", False))),
    ),
    "extra": (st.just(None), st.tuples(st.sampled_from(["episode_id", "entity", "all"]),
                                       anything)),
}


@FUZZ
@given(data=st.data())
def test_fuzz_forget(mem: GraphMemory, data: st.DataObject) -> None:
    drawn = draw_args(data, FORGET_ARGS)
    args: dict[str, Any] = {"group_id": drawn["group_id"]}
    for pair in (drawn["extra"], drawn["target"]):
        if pair is not None:
            args[pair[0]] = pair[1]
    if args.get("episode_id") == "EXISTING":
        episodes = [r["id"] for r in mem.export(group_id=None) if r["type"] == "episode"
                    and r["group_id"] == args["group_id"]]
        args["episode_id"] = episodes[0] if episodes else "ep_missing"
    ok, result = attempt(mem, lambda: mem.forget(**args))
    event(f"forget: {'done' if ok else 'rejected'}")
    if ok:
        assert result.audit_id


good_items = st.fixed_dictionaries({"content": texts}, optional={
    "group_id": group_names, "kind": st.sampled_from(["message", "text"]),
    "reference_time": st.one_of(st.none(), aware), "source": st.one_of(st.none(), texts),
    "metadata": st.dictionaries(st.text(max_size=5), json_values, max_size=2),
    "extractor": st.sampled_from(["rules", None])})
bad_items = st.one_of(
    st.fixed_dictionaries({"content": st.one_of(texts, anything)}, optional={
        "group_id": anything, "kind": st.one_of(st.sampled_from(["json", "x"]), anything),
        "reference_time": st.one_of(datetimes, anything), "metadata": anything,
        "source": anything, "extractor": st.one_of(st.just("bogus"), anything),
        "colour": anything}),
    anything,
)


@FUZZ
@given(items=st.one_of(
    st.lists(good_items, max_size=4),
    st.lists(st.one_of(good_items, good_items, good_items, bad_items), max_size=4),
    anything,
))
def test_fuzz_add_episodes(mem: GraphMemory, items: Any) -> None:
    ok, results = attempt(mem, lambda: mem.add_episodes(items))
    event(f"add_episodes: {'stored' if ok else 'rejected'}")
    if ok:
        assert len(results) == len(items)


# ------------------------------------------------------------------------------------ filters
@FUZZ
@given(spec=filters, values=st.dictionaries(
    st.sampled_from(["success", "params.force", "grip_force_for"]),
    st.lists(scalars, max_size=3), max_size=3))
def test_fuzz_filter_language(spec: Any, values: dict[str, list[Any]]) -> None:
    try:
        conditions = parse_filters(spec)
    except GraphMemError as exc:
        assert exc.code == "filter"
        event("filter: rejected")
        return
    event("filter: parsed")
    assert isinstance(matches(values, conditions), bool)  # evaluating never raises


# ------------------------------------------------------------------------------------ parsers
_sources = pytest.importorskip("graphmem.sources.files")

# Sane ranges for the generic parser fuzz; the edges that break are pinned in
# test_reliability_injection.py (deep nesting, 5000-digit numbers, year 9999, lone surrogates).
times = st.one_of(
    st.datetimes(min_value=datetime(1971, 1, 1), max_value=datetime(2100, 1, 1))
    .map(lambda d: d.isoformat()),
    st.datetimes(min_value=datetime(1971, 1, 1), max_value=datetime(2100, 1, 1),
                 timezones=st.just(UTC)).map(lambda d: d.isoformat().replace("+00:00", "Z")),
    st.integers(0, 4_000_000_000),
    st.sampled_from(["2024-05-01", "2024-02-30", "10:05", "soon", "", None, True, 1e300]),
)
safe_text = st.text(st.characters(blacklist_categories=["Cs"]), max_size=30)
messages = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant", "human", "ai", "system", "tool", "", 3])},
    optional={"content": st.one_of(safe_text, st.lists(st.one_of(
        safe_text, st.fixed_dictionaries({"type": st.just("text"), "text": safe_text}),
        json_values), max_size=2), json_values),
        "name": st.one_of(safe_text, json_values), "timestamp": times,
        "tool_calls": st.lists(json_values, max_size=1)},
)
chat_docs = st.one_of(
    st.lists(messages, max_size=4),
    st.fixed_dictionaries({"messages": st.lists(messages, max_size=4)},
                          optional={"speakers": json_values, "date": times,
                                    "metadata": json_values}),
)
records = st.one_of(
    st.fixed_dictionaries({"content": st.one_of(safe_text, json_values)},
                          optional={"reference_time": times, "kind": st.sampled_from(
                              ["message", "json", "event", "text", "x"]),
                              "metadata": json_values, "source": json_values,
                              "group_id": json_values, "extra": json_values}),
    st.dictionaries(st.text(max_size=8), json_values, max_size=4),
    st.fixed_dictionaries({"episode": st.integers(0, 999)},
                          optional={"ts": times, "params": json_values}),
    json_values,
)
transcripts = st.lists(
    st.one_of(
        st.builds(lambda w, s, t: f"[{w}] {s}: {t}" if w else f"{s}: {t}",
                  st.one_of(st.none(), times.map(str)),
                  st.sampled_from(["Alice", "Bob", "**Ana**", "http", "A b c d e"]), safe_text),
        times.map(lambda t: f"## {t}"),
        safe_text,
        st.just(""),
    ),
    max_size=8,
).map("\n".join)
clean_text = st.one_of(
    st.text(st.characters(blacklist_categories=["Cs", "Cc"]), min_size=1, max_size=30)
    .filter(str.strip),
    st.sampled_from(INJECTIONS),
    st.builds(lambda a, b: f"{a} lives in {b}.", st.sampled_from(["Alice", "Bob", "I"]),
              st.sampled_from(["Paris", "Rome", "Lima"])),
)
good_times = st.one_of(
    st.datetimes(min_value=datetime(1971, 1, 1), max_value=datetime(2100, 1, 1),
                 timezones=st.one_of(st.just(UTC), offsets)).map(lambda d: d.isoformat()),
    st.dates(min_value=datetime(1971, 1, 1).date(), max_value=datetime(2100, 1, 1).date())
    .map(str),
    st.integers(0, 4_000_000_000),
)
speaker_names = st.sampled_from(["Alice", "Bob", "Ana María", "O'Brien", "x-1"])
good_messages = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant", "human", "ai"]), "content": clean_text},
    optional={"timestamp": good_times, "name": speaker_names},
)
good_chat = st.one_of(
    st.lists(good_messages, min_size=1, max_size=4),
    st.fixed_dictionaries({"messages": st.lists(good_messages, min_size=1, max_size=4)},
                          optional={"speakers": st.dictionaries(
                              st.sampled_from(["user", "assistant"]), speaker_names),
                              "date": good_times}),
).map(json.dumps)
good_records = st.one_of(
    st.fixed_dictionaries({"content": clean_text}, optional={
        "reference_time": good_times, "kind": st.sampled_from(["message", "text"]),
        "metadata": st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
        "source": clean_text}),
    st.fixed_dictionaries({"episode": st.integers(0, 999)}, optional={
        "ts": good_times, "params": st.dictionaries(st.sampled_from(["force", "speed"]),
                                                    st.floats(0, 100), max_size=2),
        "success": st.booleans(), "tags": st.lists(clean_text, max_size=2)}),
)
good_jsonl = st.lists(good_records, min_size=1, max_size=4).map(
    lambda rs: "\n".join(json.dumps(r) for r in rs))
good_transcript = st.lists(
    st.builds(lambda w, who, t: f"[{w}] {who}: {t}" if w else f"{who}: {t}",
              st.one_of(st.none(), st.datetimes(min_value=datetime(1971, 1, 1),
                                                max_value=datetime(2100, 1, 1))
                        .map(lambda d: d.strftime("%Y-%m-%d %H:%M"))),
              speaker_names, clean_text.map(lambda t: t.replace("\n", " "))),
    min_size=2, max_size=6,
).map("\n".join)
good_prose = st.lists(clean_text, min_size=1, max_size=4).map("\n\n".join)
documents = st.one_of(
    st.tuples(good_chat, st.just("chat.json")),
    st.tuples(good_jsonl, st.just("log.jsonl")),
    st.tuples(good_transcript, st.just("notes.md")),
    st.tuples(good_prose, st.just("notes.txt")),
    st.tuples(
        st.one_of(
            st.builds(json.dumps, chat_docs),
            st.lists(records, max_size=4).map(lambda rs: "\n".join(json.dumps(r) for r in rs)),
            st.builds(json.dumps, st.lists(records, max_size=3)),
            transcripts,
            safe_text,
        ),
        st.sampled_from(["chat.json", "log.jsonl", "notes.md", "notes.txt", "stdin",
                         "x.ndjson"]),
    ),
)


@FUZZ
@given(
    doc=documents,
    fmt=st.one_of(st.just("auto"), st.just("auto"),
                  st.sampled_from(["chat", "jsonl", "events", "transcript", "prose"])),
    per=st.sampled_from(["message", "paragraph", "conversation", "file"]),
    assume_utc=st.booleans(),
)
def test_fuzz_source_parsers(mem: GraphMemory, doc: tuple[str, str], fmt: str, per: str,
                             assume_utc: bool) -> None:
    text, name = doc
    try:
        parsed = _sources.parse_text(text, source=name, format=fmt, per=per,
                                     assume_utc=assume_utc)
    except GraphMemError:
        event("parser: raised")
        return
    for problem in parsed.problems:
        assert str(problem)
    if parsed.problems or not parsed.records:
        event("parser: rejected or empty")
        return
    event(f"parser: accepted as {sorted(set(parsed.formats.values()))}")
    before = snapshot(mem)
    # What the parser accepted, the memory accepts: validation first, nothing fails after it.
    results = mem.add_episodes(parsed.episodes())
    assert len(results) == len(parsed.records)
    assert snapshot(mem) != before or all(r.already_present for r in results)


@FUZZ
@given(raw=st.one_of(st.binary(max_size=200), st.builds(
    lambda d, junk: d[0].encode("utf-8") + junk, documents, st.binary(min_size=1, max_size=4))),
    suffix=st.sampled_from([".json", ".jsonl", ".md", ".txt"]))
def test_fuzz_source_files_with_arbitrary_bytes(tmp_path: Path, raw: bytes, suffix: str) -> None:
    path = tmp_path / f"input{suffix}"
    path.write_bytes(raw)
    try:
        parsed = _sources.parse_file(path)
    except GraphMemError:
        return
    try:
        raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        # JSON lines are judged one by one (issue 14): the bad line is a problem, the rest stay.
        assert any("UTF-8" in str(p) for p in parsed.problems)


# ------------------------------------------------------------------------------------ pinned
# What the fuzzers found (each escaped as a non-GraphMemError, or changed the store although the
# call was rejected); kept as plain examples so they are checked on every run.
DEEP = "[" * 50_000 + "]" * 50_000
PINNED: dict[str, Callable[[GraphMemory], Any]] = {
    "lone surrogate in content": lambda m: m.add_episode("hi \ud800 there"),
    "lone surrogate in group": lambda m: m.recall("hi", group_id="g\udc80"),
    "lone surrogate in subject": lambda m: m.add_fact("A\ud800", "likes", "x"),
    "lone surrogate as the whole entity": lambda m: m.history("\ud800"),
    "lone surrogate in metadata": lambda m: m.add_episode("x y", metadata={"k": "\udcff"}),
    "lone surrogate in a bulk item": lambda m: m.add_episodes([{"content": "ok"},
                                                               {"content": "\ud800"}]),
    "deeply nested JSON episode": lambda m: m.add_episode(DEEP, kind="json"),
    "deeply nested metadata": lambda m: m.add_episode("x", metadata=_nested(5000)),
    "5000-digit number in a JSON episode": lambda m: m.add_episode(
        '{"a": %s}' % ("9" * 5000), kind="json"),
    "5000-digit literal value": lambda m: m.add_fact("A", "age", value=10**5000),
    "5000-digit confidence": lambda m: m.add_fact("A", "likes", "b", confidence=10**5000),
    "5000-digit group id (repr fails)": lambda m: m.facts(group_id=10**5000),
    "5000-digit k (repr fails)": lambda m: m.recall("x", k=10**5000),
    "5000-digit filter path": lambda m: m.recall("x", filters={10**5000: 1}),
    "negated='no' (truthy text)": lambda m: m.add_fact("A", "likes", "b", negated="no"),
    "5000-digit export group": lambda m: list(m.export(group_id=10**5000)),
    "confidence None": lambda m: m.add_fact("A", "age", value=3, confidence=None),
    "confidence text": lambda m: m.add_fact("A", "age", value=3, confidence="high"),
    "replaces not text": lambda m: m.add_fact("A", "age", value=3, replaces=5),
    "statement not text": lambda m: m.add_fact("A", "age", value=3, statement=5),
    "source not text": lambda m: m.add_fact("A", "age", value=3, source=5),
    "year 1 at +05:00 (UTC overflow)": lambda m: m.recall(
        "x", as_of=datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=5)))),
    "reference_time 2024-02-30": lambda m: m.add_episode("x y", reference_time="2024-02-30"),
    "episodes not a list": lambda m: m.add_episodes(None),
    "episode not a mapping": lambda m: m.add_episodes(["abc"]),
    "metadata not a mapping": lambda m: m.add_episode("x y", metadata="abc"),
    "extractor not an extractor": lambda m: m.add_episode("x y", extractor=5),
    "episode id not text": lambda m: m.forget(episode_id=object()),
    "episode lookup not text": lambda m: m.episode(["a"]),
    # rejected, but used to leave a 'failed' provenance episode behind:
    "NaN literal value": lambda m: m.add_fact("A", "weight", value=float("nan")),
    "valid_to before the implied valid_from": lambda m: m.add_fact(
        "A", "lives_in", "X", valid_to=datetime(2000, 1, 1, tzinfo=UTC)),
}


def _nested(depth: int) -> dict[str, Any]:
    node: dict[str, Any] = {}
    for _ in range(depth):
        node = {"a": node}
    return node


@pytest.mark.parametrize("name", list(PINNED))
def test_pinned_bad_arguments(mem: GraphMemory, name: str) -> None:
    ok, result = attempt(mem, lambda: PINNED[name](mem))
    assert not ok, f"accepted: {result!r}"


def test_bulk_with_a_bad_extractor_in_a_later_chunk_writes_nothing(mem: GraphMemory) -> None:
    mem.settings.bulk_chunk = 2
    items: list[dict[str, Any]] = [{"content": f"Alice likes thing {i}."} for i in range(5)]
    items.append({"content": "x y", "extractor": "bogus"})
    ok, error = attempt(mem, lambda: mem.add_episodes(items))
    assert not ok and "episode 5" in str(error)
