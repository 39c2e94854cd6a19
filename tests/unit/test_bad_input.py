"""Bad input: a clear GraphMemError subclass, and nothing already stored changes."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

import graphmem
from graphmem import (
    ConfigError,
    EmbeddingMismatchError,
    GraphMemError,
    GraphMemory,
    HashEmbedder,
    InputError,
    PredicateError,
    SchemaError,
)


def snapshot(mem: GraphMemory) -> list[dict[str, object]]:
    return sorted((dict(r) for r in mem.export()), key=lambda r: str(sorted(r.items())))


@pytest.fixture
def mem(tmp_path: Path) -> GraphMemory:
    m = GraphMemory(tmp_path / "m.db", embedder=HashEmbedder(32))
    m.add_fact("Alice", "lives_in", "Paris", valid_from=datetime(2020, 1, 1, tzinfo=UTC))
    return m


@pytest.mark.parametrize(
    ("call", "error", "text"),
    [
        (lambda m: m.add_episode(""), InputError, "empty"),
        (lambda m: m.add_episode("   \n"), InputError, "empty"),
        (lambda m: m.add_episode(None), InputError, "string"),
        (lambda m: m.add_episode("x", kind="video"), InputError, "kind"),
        (lambda m: m.add_episode("{not json", kind="json"), InputError, "not valid JSON"),
        (lambda m: m.add_episode("[1, 2]", kind="json"), InputError, "JSON object"),
        (lambda m: m.add_episode("x", metadata={"a": object()}), InputError, "metadata"),
        (lambda m: m.add_episode("x", group_id=""), InputError, "group_id"),
        (lambda m: m.add_episode("x", group_id="g" * 1025), InputError, "at most 1,024"),
        (lambda m: m.recall("x", group_id="g" * 1025), InputError, "at most 1,024"),
        (
            lambda m: m.add_episode("x", reference_time=datetime(2024, 1, 1)),
            InputError,
            "reference_time",
        ),
        (lambda m: m.add_fact("Alice", "lives in!", "Rome"), PredicateError, "snake_case"),
        (lambda m: m.add_fact("Alice", "1abc", "Rome"), PredicateError, "snake_case"),
        (lambda m: m.add_fact("", "lives_in", "Rome"), InputError, "subject"),
        (lambda m: m.add_fact("Alice", "lives_in"), InputError, "object or a value"),
        (lambda m: m.add_fact("Alice", "lives_in", "Rome", value=3), InputError, "not both"),
        (lambda m: m.add_fact("Alice", "age", value=[1]), InputError, "value"),
        (lambda m: m.add_fact("Alice", "age", value=3, confidence=2.0), InputError, "confidence"),
        (
            lambda m: m.add_fact(
                "A",
                "lives_in",
                "R",
                valid_from=datetime(2024, 2, 1, tzinfo=UTC),
                valid_to=datetime(2024, 1, 1, tzinfo=UTC),
            ),
            InputError,
            "after",
        ),
        (lambda m: m.recall("x", k=0), InputError, "k must"),
        (lambda m: m.recall("x", hops=9), InputError, "hops"),
        (lambda m: m.recall("x", filters={"a": {"$regex": "x"}}), InputError, "unknown operator"),
        (lambda m: m.recall("x", filters={"a": {"$in": 3}}), InputError, "non-empty list"),
        (lambda m: m.recall("x", filters={"a": None}), InputError, "expected"),
        (lambda m: m.history("Alice", predicate="no way"), PredicateError, "snake_case"),
        (lambda m: m.add_episodes([{"content": "ok"}, {"content": ""}]), InputError, "episode 1"),
        (lambda m: m.add_episodes([{"content": "ok", "colour": "red"}]), InputError, "unknown"),
    ],
)
def test_bad_input_is_rejected_and_changes_nothing(
    mem: GraphMemory, call: object, error: type[Exception], text: str
) -> None:
    before = snapshot(mem)
    with pytest.raises(error, match=text) as info:
        call(mem)  # type: ignore[operator]
    assert isinstance(info.value, GraphMemError)
    assert info.value.code
    assert snapshot(mem) == before


def test_input_errors_are_value_errors() -> None:
    assert issubclass(InputError, ValueError)
    assert issubclass(graphmem.NaiveDatetimeError, ValueError)


@pytest.mark.parametrize("url", ["mysql://x", "ftp://host/db", "memory.txt", ""])
def test_unknown_store_urls(url: str) -> None:
    with pytest.raises(ConfigError):
        GraphMemory(url)


def test_constructor_does_no_io(tmp_path: Path) -> None:
    GraphMemory(tmp_path / "never.db")
    assert not (tmp_path / "never.db").exists()


def test_foreign_sqlite_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "foreign.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE customers (id INTEGER)")
        conn.execute("INSERT INTO customers VALUES (1)")
    with pytest.raises(SchemaError, match="not a graphmem store"):
        GraphMemory(path).connect()
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT count(*) FROM customers").fetchone() == (1,)
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master")]
    assert tables == ["customers"]


def test_corrupt_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "corrupt.db"
    path.write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(SchemaError):
        GraphMemory(path).connect()
    assert path.read_bytes().startswith(b"this is not a database")


def test_embedder_mismatch_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with GraphMemory(path, embedder=HashEmbedder(32)) as mem:
        mem.add_fact("Alice", "lives_in", "Paris")
    with pytest.raises(EmbeddingMismatchError, match="32"):
        GraphMemory(path, embedder=HashEmbedder(64)).connect()
    with GraphMemory(path) as reopened:  # no embedder given: the recorded one is used
        assert reopened.embedder.dim == 32
        assert [f.target for f in reopened.facts(entity="Alice")] == ["Paris"]


def test_public_api_all_is_complete() -> None:
    exported = set(graphmem.__all__)
    public = {n for n in dir(graphmem) if not n.startswith("_") and n[0].isupper()}
    assert public <= exported, public - exported
    for name in graphmem.__all__:
        assert hasattr(graphmem, name), name


def test_exception_tree_is_rooted() -> None:
    for name in graphmem.__all__:
        obj = getattr(graphmem, name)
        if isinstance(obj, type) and issubclass(obj, Exception):
            assert issubclass(obj, GraphMemError)


def test_an_incomplete_store_object_is_named_with_what_it_lacks() -> None:
    from graphmem import ConfigError

    class HalfStore:
        def connect(self) -> None: ...

    with pytest.raises(ConfigError, match=r"GraphStore, got HalfStore \(missing .*vector_episodes"):
        GraphMemory(HalfStore())  # type: ignore[arg-type]
