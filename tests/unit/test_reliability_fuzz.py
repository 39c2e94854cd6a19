"""Fuzzing (hypothesis) of the API arguments, the filter language and the ingest parsers.

The contract: whatever the arguments, only ``GraphMemError`` subclasses escape, a rejected call
leaves the store exactly as it was (export snapshot before/after), and an accepted episode is
stored verbatim. For the parsers (``graphmem._sources``): only ``GraphMemError`` escapes, and
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

pytestmark = pytest.mark.timeout(180)

EXAMPLES = int(os.environ.get("GRAPHMEM_FUZZ_EXAMPLES", "60"))
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
groups = st.one_of(st.sampled_from(["default", "other", "Default", " ", ""]), texts, anything)
predicates = st.one_of(
    st.sampled_from(["lives_in", "likes", "works_at", "params.force", "has_status", "Lives In",
                     "a..b", "_x", "x.", "1abc", "lives_in\n", "ñ", "a" * 300]),
    texts,
    anything,
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
@FUZZ
@given(
    content=st.one_of(texts, st.builds(json.dumps, json_values), anything),
    group_id=groups,
    source=st.one_of(st.none(), texts, anything),
    kind=st.one_of(st.sampled_from(["message", "text", "json", "event", "fact", "video"]),
                   anything),
    reference_time=st.one_of(st.none(), datetimes, st.sampled_from(
        ["2024-05-01", "2024-05-01T10:00:00Z", "2024-05-01T10:00:00", "2024-13-45", "yesterday",
         "9999-12-31T23:59:59+00:00", "0001-01-01T00:00:00+01:00"]), anything),
    metadata=st.one_of(st.none(), st.dictionaries(st.text(max_size=8), json_values, max_size=3),
                       st.dictionaries(texts, scalars, max_size=2), anything),
    extractor=st.one_of(st.sampled_from([None, "rules", "structured", "auto", "llm", "bogus",
                                         " RULES "]), anything),
)
def test_fuzz_add_episode(mem: GraphMemory, content: Any, group_id: Any, source: Any, kind: Any,
                          reference_time: Any, metadata: Any, extractor: Any) -> None:
    ok, result = attempt(mem, lambda: mem.add_episode(
        content, group_id=group_id, source=source, kind=kind, reference_time=reference_time,
        metadata=metadata, extractor=extractor))
    event(f"add_episode: {'stored' if ok else 'rejected'}")
    if ok:
        stored = mem.episode(result.episode_id)
        assert stored is not None and stored.content == content  # verbatim
        assert stored.group_id == group_id and stored.source == source


@FUZZ
@given(
    subject=st.one_of(st.sampled_from(["Alice", "Bob"]), texts, anything),
    predicate=predicates,
    object_=st.one_of(st.none(), st.sampled_from(["Paris", "Rome"]), texts, anything),
    value=st.one_of(st.none(), scalars, anything),
    group_id=groups,
    valid_from=st.one_of(st.none(), datetimes, anything),
    valid_to=st.one_of(st.none(), datetimes, anything),
    source=st.one_of(st.none(), texts, anything),
    confidence=st.one_of(st.just(1.0), st.floats(), st.integers(), anything),
    negated=st.one_of(st.booleans(), anything),
    correction=st.one_of(st.booleans(), anything),
    statement=st.one_of(st.none(), texts, anything),
    replaces=st.one_of(st.none(), texts, anything),
)
def test_fuzz_add_fact(mem: GraphMemory, subject: Any, predicate: Any, object_: Any, value: Any,
                       group_id: Any, valid_from: Any, valid_to: Any, source: Any,
                       confidence: Any, negated: Any, correction: Any, statement: Any,
                       replaces: Any) -> None:
    ok, result = attempt(mem, lambda: mem.add_fact(
        subject, predicate, object_, value=value, group_id=group_id, valid_from=valid_from,
        valid_to=valid_to, source=source, confidence=confidence, negated=negated,
        correction=correction, statement=statement, replaces=replaces))
    event(f"add_fact: {'stored' if ok else 'rejected'}")
    if ok:
        episode = mem.episode(result.episode_id)
        assert episode is not None and episode.group_id == group_id
        if statement:
            assert episode.content == statement


filters = st.one_of(
    st.none(),
    anything,
    st.dictionaries(
        st.one_of(st.sampled_from(["success", "params.force", "grip_force_for", "Lives In",
                                   "a..b", "1abc", "$in"]), texts, st.integers(), st.none(),
                  st.booleans()),
        st.one_of(
            scalars,
            st.dictionaries(
                st.one_of(st.sampled_from(["$eq", "$ne", "$lt", "$lte", "$gt", "$gte", "$in",
                                           "$regex", "$where", "eq", ""]), texts),
                st.one_of(scalars, st.lists(scalars, max_size=3), anything),
                max_size=3,
            ),
            anything,
        ),
        max_size=3,
    ),
)


@FUZZ
@given(
    query=st.one_of(texts, st.text(max_size=400), anything),
    group_id=groups,
    as_of=st.one_of(st.none(), datetimes, anything),
    known_at=st.one_of(st.none(), datetimes, anything),
    k=st.one_of(st.integers(), st.sampled_from([1, 1000, 1001, 10**30, True]), anything),
    hops=st.one_of(st.integers(-2, 5), anything),
    filters=filters,
)
def test_fuzz_recall(mem: GraphMemory, query: Any, group_id: Any, as_of: Any, known_at: Any,
                     k: Any, hops: Any, filters: Any) -> None:
    ok, result = attempt(mem, lambda: mem.recall(
        query, group_id=group_id, as_of=as_of, known_at=known_at, k=k, hops=hops,
        filters=filters))
    event(f"recall: {'answered' if ok else 'rejected'}")
    if ok:
        assert len(result.facts) <= k
        assert all(h.group_id == group_id for h in result.facts)
        result.to_context()


@FUZZ
@given(
    entity=st.one_of(st.sampled_from(["Alice", "alice", "ALICE ", "Nobody"]), texts, anything),
    predicate=st.one_of(st.none(), predicates),
    group_id=groups,
    include_history=st.one_of(st.booleans(), anything),
    which=st.sampled_from(["history", "facts", "episode", "stats", "export"]),
)
def test_fuzz_reads(mem: GraphMemory, entity: Any, predicate: Any, group_id: Any,
                    include_history: Any, which: str) -> None:
    calls: dict[str, Callable[[], Any]] = {
        "history": lambda: mem.history(entity, predicate=predicate, group_id=group_id),
        "facts": lambda: mem.facts(group_id=group_id, entity=entity,
                                   include_history=include_history),
        "episode": lambda: mem.episode(entity),
        "stats": lambda: mem.stats(group_id),
        "export": lambda: list(mem.export(group_id=group_id)),
    }
    attempt(mem, calls[which])


@FUZZ
@given(
    group_id=groups,
    episode_id=st.one_of(st.none(), texts, anything, st.just("EXISTING")),
    entity=st.one_of(st.none(), st.sampled_from(["Alice", "Nobody", "jazz"]), texts, anything),
    all_=st.one_of(st.booleans(), anything),
)
def test_fuzz_forget(mem: GraphMemory, group_id: Any, episode_id: Any, entity: Any,
                     all_: Any) -> None:
    if episode_id == "EXISTING":
        episodes = [r["id"] for r in mem.export() if r["type"] == "episode"]
        episode_id = episodes[0] if episodes else None
    ok, result = attempt(mem, lambda: mem.forget(group_id=group_id, episode_id=episode_id,
                                                 entity=entity, all=all_))
    if ok:
        assert result.audit_id


@FUZZ
@given(items=st.one_of(
    anything,
    st.lists(st.one_of(
        st.fixed_dictionaries({"content": texts}, optional={
            "group_id": groups, "kind": st.sampled_from(["message", "json", "x"]),
            "reference_time": st.one_of(datetimes, anything), "metadata": anything,
            "source": anything, "extractor": st.sampled_from(["rules", "bogus", None]),
            "colour": anything}),
        anything,
    ), max_size=4),
))
def test_fuzz_add_episodes(mem: GraphMemory, items: Any) -> None:
    ok, results = attempt(mem, lambda: mem.add_episodes(items))
    if ok:
        assert len(results) == len(items)


# ------------------------------------------------------------------------------------ filters
@FUZZ
@given(spec=filters, values=st.dictionaries(predicates.filter(lambda p: isinstance(p, str)),
                                            st.lists(scalars, max_size=3), max_size=3))
def test_fuzz_filter_language(spec: Any, values: dict[str, list[Any]]) -> None:
    try:
        conditions = parse_filters(spec)
    except GraphMemError as exc:
        assert exc.code == "filter"
        return
    assert isinstance(matches(values, conditions), bool)  # evaluating never raises


# ------------------------------------------------------------------------------------ parsers
_sources = pytest.importorskip("graphmem._sources")

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
documents = st.one_of(
    st.builds(json.dumps, chat_docs),
    st.lists(records, max_size=4).map(lambda rs: "\n".join(json.dumps(r) for r in rs)),
    st.builds(json.dumps, st.lists(records, max_size=3)),
    transcripts,
    safe_text,
)


@FUZZ
@given(
    text=documents,
    name=st.sampled_from(["chat.json", "log.jsonl", "notes.md", "notes.txt", "stdin", "x.ndjson"]),
    fmt=st.sampled_from(["auto", "chat", "jsonl", "events", "transcript", "prose"]),
    per=st.sampled_from(["message", "paragraph", "conversation", "file"]),
    assume_utc=st.booleans(),
)
def test_fuzz_source_parsers(mem: GraphMemory, text: str, name: str, fmt: str, per: str,
                             assume_utc: bool) -> None:
    try:
        parsed = _sources.parse_text(text, source=name, format=fmt, per=per,
                                     assume_utc=assume_utc)
    except GraphMemError:
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
    lambda t, junk: t.encode("utf-8") + junk, documents, st.binary(min_size=1, max_size=4))),
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
        assert parsed.records == [] and parsed.problems
        assert "UTF-8" in str(parsed.problems[0])
