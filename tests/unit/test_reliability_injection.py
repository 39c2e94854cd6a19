"""Injection corpus on every entry point.

SQL and Cypher metacharacters, FTS5 query syntax, very long strings, control characters, NUL,
lone surrogates, and non-UTF-8 bytes in files go through add_episode, add_episodes, add_fact,
recall (query and filters), history, facts, forget, export, the file parsers and the CLI. Where
the value is valid it is stored and read back verbatim; where it is not the call fails with a
clear ``GraphMemError``; and nothing else changes (a baseline group is compared byte for byte,
every table still exists, the store stays consistent).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from graphmem import GraphMemError, GraphMemory, HashEmbedder, InputError
from graphmem._args import GROUP_ID_MAX_CHARS
from graphmem._ids import entity_key
from tests.helpers.reliability import export_problems, snapshot, sqlite_problems

pytestmark = pytest.mark.timeout(120)
_sources = pytest.importorskip("graphmem.sources.files")
BASE = datetime(2024, 1, 1, tzinfo=UTC)

PAYLOADS: dict[str, str] = {
    "sql drop": "'; DROP TABLE facts; --",
    "sql or": '" OR 1=1 --',
    "sql quote": "' OR '1'='1",
    "bobby": "Robert'); DROP TABLE episodes;--",
    "sql comment": "/* */ -- ;",
    "backticks": "``; DROP TABLE `facts`",
    "cypher": "}) MATCH (n) DETACH DELETE n //",
    "cypher quote": "'}) MATCH (n) DETACH DELETE n //",
    "cypher param": "$group_id {group_id}",
    "fts near": "NEAR(alice paris)",
    "fts near quoted": 'NEAR("a" "b", 2)',
    "fts quote": '"',
    "fts quotes": '"" """',
    "fts star": "*",
    "fts prefix": "alice*",
    "fts caret": "^alice",
    "fts operators": "AND OR NOT",
    "fts dangling": "alice AND",
    "fts parens": "((",
    "fts column": "statement:alice facts_fts:*",
    "like wildcards": "%_%",
    "backslash": "\\ \\' \\\"",
    "escape sequences": "\x1b[31mred\x1b[0m",
    "crlf": "line one\r\nline two\r",
    "tab and vt": "a\tb\x0bc\x0c",
    "del": "a\x7fb",
    "rtl override": "\u202eevil",
    "zero width": "a\u200bb",
    "bom": "\ufeffstart",
    "emoji": "😀 lives in 🌍",
    "math letters": "𝔄𝔩𝔦𝔠𝔢",
    "ligature": "ﬁle",
    "turkish i": "İstanbul",
    "html": "<script>alert(1)</script>",
    "log4j": "${jndi:ldap://x/a}",
    "json": '{"a": [1, {"b": null}]}',
    "long": "x" * 100_000,
    "long words": "Alice lives in Paris. " * 1_000,
}
INVALID: dict[str, str] = {
    "nul": "a\x00b",
    "lone high surrogate": "a\ud800b",
    "lone low surrogate": "\udc80",
    "empty": "",
    "blank": " \n\t ",
}
ALL = {**PAYLOADS, **INVALID}


def has_surrogate(text: str) -> bool:
    return any(0xD800 <= ord(c) <= 0xDFFF for c in text)


def invalid_text(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return not text.strip()


@pytest.fixture
def mem(memory: GraphMemory) -> Iterator[GraphMemory]:
    memory.add_fact("Alice", "lives_in", "Paris", valid_from=BASE, group_id="base")
    memory.add_episode("Bob works at Acme.", reference_time=BASE, group_id="base")
    memory.add_episode('{"episode": 1, "success": true}', kind="json", group_id="base",
                       reference_time=BASE)
    yield memory


class Guard:
    """Checks that nothing outside the call's own group changed and the store is sound."""

    def __init__(self, mem: GraphMemory, store_kind: str) -> None:
        self.mem = mem
        self.kind = store_kind
        self.base = snapshot(mem, "base")

    def check(self) -> None:
        assert snapshot(self.mem, "base") == self.base
        assert export_problems(self.mem.export()) == []
        if self.kind == "sqlite":
            assert sqlite_problems(self.mem.store.path) == []  # type: ignore[attr-defined]
        # Every table is still there and the base data still answers.
        assert [f.target for f in self.mem.facts(group_id="base", entity="Alice")] == ["Paris"]


@pytest.fixture
def guard(mem: GraphMemory, store_kind: str) -> Guard:
    return Guard(mem, store_kind)


def expect(mem: GraphMemory, call: Any, *, ok: bool) -> Any:
    before = snapshot(mem)
    if ok:
        return call()
    with pytest.raises(GraphMemError) as info:
        call()
    assert info.value.code and str(info.value)
    assert snapshot(mem) == before
    return None


def via_episode_content_source_and_metadata(mem: GraphMemory, guard: Guard, name: str) -> None:
    text = ALL[name]
    ok = not invalid_text(text) and "\x00" not in text
    result = expect(mem, lambda: mem.add_episode(text, group_id="inj", reference_time=BASE),
                    ok=ok)
    if ok:
        stored = mem.episode(result.episode_id)
        assert stored is not None and stored.content == text
        again = mem.add_episode(text, group_id="inj", reference_time=BASE)
        assert again.already_present and again.episode_id == result.episode_id
    # The same value as source and in metadata (keys and values).
    src_ok = not has_surrogate(text)  # a blank source or one with NUL is still a source
    result = expect(mem, lambda: mem.add_episode("Carol likes chess.", group_id="inj",
                                                 source=text, metadata={"k": text, text: 1}),
                    ok=src_ok)
    if src_ok:
        stored = mem.episode(result.episode_id)
        assert stored is not None
        assert stored.source == text and stored.metadata == {"k": text, text: 1}
    guard.check()


def via_facts_subject_object_value_statement(mem: GraphMemory, guard: Guard, name: str) -> None:
    text = ALL[name]
    ok = not invalid_text(text)
    result = expect(mem, lambda: mem.add_fact(text, "likes", text, group_id="inj",
                                              valid_from=BASE, source=text), ok=ok)
    if ok:
        assert result.facts_added == 1
        (fact,) = mem.history(text, group_id="inj")
        assert fact.subject == text.strip() and fact.object == text.strip()
        assert [f.id for f in mem.facts(group_id="inj", entity=text)] == [fact.id]
    value_ok = not has_surrogate(text)
    result = expect(mem, lambda: mem.add_fact("Dana", "has_status", value=text, group_id="inj",
                                              valid_from=BASE, statement=text or None),
                    ok=value_ok)
    if value_ok:
        (fact,) = [f for f in mem.facts(group_id="inj", entity="Dana")]
        assert fact.value == text  # literal values verbatim, even blank or with NUL
        if text.strip():  # a blank statement falls back to the generated one
            assert fact.statement == text.strip()
    guard.check()


def via_recall_queries_and_filters(mem: GraphMemory, guard: Guard, name: str) -> None:
    text = ALL[name]
    mem.add_fact("Erin", "likes", "Paris", group_id="inj", valid_from=BASE)
    if not text.strip():  # an empty query asks for nothing: an input error
        with pytest.raises(InputError):
            mem.recall(text, group_id="inj", k=20)
    else:  # any other query string is a query
        result = mem.recall(text, group_id="inj", k=20)
        assert all(h.group_id == "inj" for h in result.facts)
        base = mem.recall(text, group_id="base", k=20)
        assert all(h.group_id == "base" for h in base.facts)
    for filters in (
        {"success": {"$in": [text]}}, {"success": text}, {"params.force": {"$lt": text}}
    ):
        mem.recall("episode", group_id="base", filters=filters)
    with pytest.raises(GraphMemError):
        mem.recall("x", group_id="base", filters={text: {"$regex": text}})
    guard.check()


def via_reads_and_forget_with_hostile_names(mem: GraphMemory, guard: Guard, name: str) -> None:
    text = ALL[name]
    ok = not invalid_text(text)
    expect(mem, lambda: mem.history(text, group_id="base"), ok=ok)
    expect(mem, lambda: mem.facts(group_id="base", entity=text), ok=ok)
    if ok and entity_key(text) in {"alice", "paris", "bob", "acme"}:
        # Names match by normalised key ("alice*", "𝔄𝔩𝔦𝔠𝔢" and "ALICE" all name Alice), so
        # this would really forget Alice: check it does exactly that, on a copy of the group.
        mem.add_fact("Alice", "lives_in", "Paris", valid_from=BASE, group_id="copy")
        mem.add_fact("Bob", "works_at", "Acme", valid_from=BASE, group_id="copy")
        gone = mem.forget(group_id="copy", entity=text)
        assert gone.entities_removed >= 1 and gone.facts_removed == 1
    else:
        with pytest.raises(GraphMemError):  # no such entity, or not a valid name
            mem.forget(group_id="base", entity=text)
    with pytest.raises(GraphMemError):  # no such episode, or not a valid id
        mem.forget(group_id="base", episode_id=text)
    if ok:
        assert mem.episode(text) is None
        mem.add_fact(text, "likes", "jazz", group_id="inj-reads", valid_from=BASE)
        gone = mem.forget(group_id="inj-reads", entity=text)
        assert gone.facts_removed == 1 and mem.history(text, group_id="inj-reads") == []
    guard.check()


def via_group_ids(mem: GraphMemory, guard: Guard, name: str) -> None:
    group = ALL[name]
    # A group id is indexed on every node (Neo4j refuses index entries over about 8 KB), so
    # both stores refuse one longer than GROUP_ID_MAX_CHARS.
    ok = not invalid_text(group) and len(group) <= GROUP_ID_MAX_CHARS
    result = expect(mem, lambda: mem.add_fact("Alice", "lives_in", "Rome", group_id=group,
                                              valid_from=BASE), ok=ok)
    if ok:
        rows = list(mem.export(group_id=group))
        assert rows and all(r["group_id"] == group for r in rows if "group_id" in r)
        assert [f.target for f in mem.facts(group_id=group)] == ["Rome"]
        assert [h.target for h in mem.recall("Alice", group_id=group).facts] == ["Rome"]
        assert mem.stats(group)["facts"] == 1
        assert mem.forget(group_id=group, episode_id=result.episode_id).facts_removed == 1
        mem.add_fact("Alice", "lives_in", "Rome", group_id=group, valid_from=BASE)
        assert mem.forget(group_id=group, all=True).facts_removed == 1
        assert list(mem.export(group_id=group)) == []
    else:
        for call in (lambda: mem.recall("x", group_id=group), lambda: mem.facts(group_id=group),
                     lambda: mem.forget(group_id=group, all=True),
                     lambda: list(mem.export(group_id=group))):
            expect(mem, call, ok=False)
    guard.check()


def test_bulk_ingest_is_all_or_nothing(mem: GraphMemory, guard: Guard) -> None:
    items = [{"content": text, "group_id": "inj"} for text in PAYLOADS.values()]
    for bad in INVALID.values():
        before = snapshot(mem)
        with pytest.raises(InputError, match=f"episode {len(items)}"):
            mem.add_episodes([*items, {"content": bad, "group_id": "inj"}])
        assert snapshot(mem) == before
    results = mem.add_episodes(items)
    assert [mem.episode(r.episode_id).content for r in results] == list(PAYLOADS.values())
    guard.check()


# ------------------------------------------------------------------------------------ files


def file_variants(text: str) -> dict[str, str]:
    """The payload inside each input format."""
    return {
        "log.jsonl": json.dumps({"content": text, "source": text, "metadata": {"k": text}}),
        "events.jsonl": json.dumps({"episode": 1, "note": text, text[:50] or "k": 1}),
        "chat.json": json.dumps({"messages": [{"role": "user", "content": text, "name": "Ana"}]}),
        "notes.md": f"Ana: {text}\nBob: ok",
        "notes.txt": text,
    }


def via_files(mem: GraphMemory, guard: Guard, tmp_path: Path, name: str) -> None:
    text = PAYLOADS[name]
    for file, body in file_variants(text).items():
        path = tmp_path / file
        path.write_text(body, encoding="utf-8", newline="")
        parsed = _sources.parse_file(path, group_id="inj")
        if parsed.problems:
            assert all(str(p).startswith(str(path)) for p in parsed.problems)
            continue
        if name not in PAYLOADS:
            continue
        results = mem.add_episodes(parsed.episodes())
        if file in ("log.jsonl", "chat.json"):
            stored = mem.episode(results[0].episode_id)
            assert stored is not None
            assert stored.content in (text, text.strip())  # chat messages are stripped
    guard.check()


@pytest.mark.parametrize("name", list(ALL))
def test_payload_on_every_entry_point(mem: GraphMemory, guard: Guard, tmp_path: Path,
                                      name: str) -> None:
    """Each payload through each entry point in turn, the guard checked after each."""
    via_episode_content_source_and_metadata(mem, guard, name)
    via_facts_subject_object_value_statement(mem, guard, name)
    via_recall_queries_and_filters(mem, guard, name)
    via_reads_and_forget_with_hostile_names(mem, guard, name)
    via_group_ids(mem, guard, name)
    if name in PAYLOADS:
        via_files(mem, guard, tmp_path, name)


BAD_BYTES = {
    "latin-1": "café".encode("latin-1"),
    "lone continuation": b"abc \x80 def",
    "truncated utf-8": "é".encode()[:1],
    "overlong": b"\xc0\xaf",
    "utf-16": "hello".encode("utf-16"),
    "surrogate as utf-8": b"\xed\xa0\x80",
}


@pytest.mark.parametrize("name", list(BAD_BYTES))
@pytest.mark.parametrize("suffix", [".jsonl", ".json", ".md", ".txt"])
def test_non_utf8_files_are_a_clear_problem(tmp_path: Path, name: str, suffix: str) -> None:
    path = tmp_path / f"input{suffix}"
    good = '{"content": "ok"}\n' if suffix in (".jsonl", ".json") else "Ana: ok\n"
    path.write_bytes(good.encode() + BAD_BYTES[name] + b"\n")
    parsed = _sources.parse_file(path)
    (problem,) = parsed.problems
    if suffix in (".jsonl", ".json"):  # JSON lines: only the bad line is lost (issue 14)
        assert [r.episode["content"] for r in parsed.records] == ["ok"] and problem.line == 2
    else:
        assert parsed.records == []
    assert "UTF-8" in str(problem) and str(problem).startswith(f"{path}:")


def test_cli_ingest_refuses_non_utf8_file_and_writes_nothing(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    from graphmem.cli import cli

    monkeypatch.chdir(tmp_path)
    for var in ("GRAPHMEM_STORE", "GRAPHMEM_GROUP", "GRAPHMEM_LLM_MODEL", "GRAPHMEM_EMBEDDER"):
        monkeypatch.delenv(var, raising=False)
    good = tmp_path / "good.jsonl"
    good.write_text('{"content": "Alice lives in Paris."}\n', encoding="utf-8")
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"content": "caf\xe9"}\n')
    store = f"sqlite:///{tmp_path}/m.db"
    result = CliRunner().invoke(cli, ["--store", store, "ingest", str(good), str(bad)])
    assert result.exit_code != 0
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "UTF-8" in result.output
    with GraphMemory(f"{tmp_path}/m.db", embedder=HashEmbedder(32)) as mem:
        assert mem.stats()["episodes"] == 0


def test_cli_ingest_stdin_with_non_utf8_bytes(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from graphmem.cli import cli

    monkeypatch.chdir(tmp_path)
    for var in ("GRAPHMEM_STORE", "GRAPHMEM_GROUP", "GRAPHMEM_LLM_MODEL", "GRAPHMEM_EMBEDDER"):
        monkeypatch.delenv(var, raising=False)
    store = f"sqlite:///{tmp_path}/m.db"
    result = CliRunner().invoke(cli, ["--store", store, "ingest", "-", "--format", "prose"],
                                input=b"Alice lives in Caf\xe9 Town.\n")
    # Either a clear error (nothing written) or the text stored with U+FFFD; never a traceback.
    assert not isinstance(result.exception, Exception) or isinstance(
        result.exception, SystemExit), result.exception
    with GraphMemory(f"{tmp_path}/m.db", embedder=HashEmbedder(32)) as mem:
        episodes = [r for r in mem.export() if r["type"] == "episode"]
        assert all("\udce9" not in r["content"] for r in episodes)
        if result.exit_code != 0:
            assert episodes == []


# ------------------------------------------------------------------------------------ parser edges
# Edge cases of graphmem/sources/files.py (the file parsers): each is a Problem, never a crash.
def _parse(text: str, source: str, **kw: Any) -> Any:
    return _sources.parse_text(text, source=source, **kw)


@pytest.mark.parametrize("source", ["deep.jsonl", "deep.json"])
def test_parser_deeply_nested_json_is_a_problem(source: str) -> None:
    parsed = _parse("[" * 100_000 + "]" * 100_000, source)
    assert parsed.problems and not parsed.records


@pytest.mark.parametrize("source", ["big.jsonl", "big.json"])
def test_parser_huge_json_number_is_a_problem(source: str) -> None:
    record = '{"episode": 1, "force": %s}' % ("9" * 5000)
    parsed = _parse(f"[{record}]" if source.endswith(".json") else record, source)
    assert parsed.problems and not parsed.records


@pytest.mark.parametrize("text,source", [
    (json.dumps({"date": "9999-12-31T23:59:59.999Z", "messages": [
        {"role": "user", "content": "a"}, {"role": "user", "content": "b"}]}), "chat.json"),
    ("[9999-12-31 23:59:59.999]\nAna: hi\nBob: there\n", "notes.md"),
])
def test_parser_timestamps_at_the_end_of_time(text: str, source: str) -> None:
    parsed = _parse(text, source)
    assert parsed.problems or all(r.episode["reference_time"] for r in parsed.records)


@pytest.mark.parametrize("text,source", [
    ('{"content": "broken emoji \\ud83d here"}', "log.jsonl"),
    ('[{"role": "user", "content": "broken \\udc00"}]', "chat.json"),
    ('{"episode": 1, "note": "\\ud800"}', "events.jsonl"),
])
def test_parser_lone_surrogate_escapes_are_a_problem(text: str, source: str) -> None:
    parsed = _parse(text, source)
    assert parsed.problems and not parsed.records
