"""Hardening, second round, where a store is involved: a failed export keeps its target, a
mistyped store path is not a new memory, a damaged store is one ``StoreError`` on every surface,
a store records only an embedder that loaded, a newer store is refused, and the read checks
(``stats`` of future facts, ``recall("")``, string times, a negation in ``history``)."""

from __future__ import annotations

import json
import random
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from graphmem import GraphMemory, HashEmbedder, InputError, SchemaError, StoreError
from graphmem._connect import require_existing
from graphmem.cli import cli
from graphmem.store import open_store
from tests.conftest import t
from tests.helpers.bolt import empty_bolt_memory, requires_bolt

ENV_VARS = ("GRAPHMEM_STORE", "GRAPHMEM_GROUP", "GRAPHMEM_EMBEDDER", "GRAPHMEM_LLM_MODEL",
            "GRAPHMEM_LLM_BASE_URL", "OPENAI_BASE_URL")


@pytest.fixture(autouse=True)
def _clean_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ENV_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)


def gm(*args: str, input: str | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), input=input)


def one_error_line(result: Result) -> str:
    """The command failed with exactly one ``Error:`` line and no traceback."""
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, result.output
    return errors[0]


# ------------------------------------------------------------------ a damaged SQLite store
@pytest.fixture(scope="module")
def damaged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store whose middle pages are overwritten: it opens (the header is intact) and fails
    half-way through reads."""
    where = tmp_path_factory.mktemp("damaged")
    good = where / "good.db"
    with GraphMemory(good, embedder=HashEmbedder(64)) as memory:
        memory.add_episodes([
            {"content": f"I live in City{i % 7}. I work at Firm{i}.",
             "reference_time": t(2024) + timedelta(hours=i), "metadata": {"speaker": "Ann"}}
            for i in range(300)
        ])
    data = bytearray(good.read_bytes())
    rng = random.Random(7)
    pages = len(data) // 4096
    # The middle half: wherever the schema's tables put their rows, the facts are hit.
    for page in range(pages // 4, pages // 4 + max(3, pages // 2)):
        for at in range(100, 4096, 7):
            data[page * 4096 + at] = rng.randrange(256)
    bad = where / "bad.db"
    bad.write_bytes(bytes(data))
    return bad


def test_failed_export_keeps_the_previous_backup(damaged: Path, tmp_path: Path) -> None:
    backup = tmp_path / "backup.jsonl"
    backup.write_text("the previous backup\n" * 1000)
    before = backup.read_bytes()
    line = one_error_line(gm("--store", str(damaged), "export", "-o", str(backup)))
    assert "damaged" in line
    assert backup.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["backup.jsonl"]  # no temporary file left


def test_graphml_export_without_networkx_keeps_the_target(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gm("--store", "m.db", "ingest", "-", input="I live in Paris.\n")
    target = tmp_path / "good.graphml"
    target.write_text("<graphml/>")
    import builtins

    real_import = builtins.__import__

    def no_networkx(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "networkx" or name.startswith("networkx."):
            raise ImportError("No module named 'networkx'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_networkx)
    result = gm("--store", "m.db", "export", "--format", "graphml", "-o", str(target))
    assert "networkx" in one_error_line(result)
    assert target.read_text() == "<graphml/>"


def test_export_is_renamed_into_place_with_the_target_mode(tmp_path: Path) -> None:
    gm("--store", "m.db", "ingest", "-", input="I live in Paris.\n")
    target = tmp_path / "backup.jsonl"
    target.write_text("old")
    target.chmod(0o640)
    assert gm("--store", "m.db", "export", "-o", str(target)).exit_code == 0
    assert json.loads(target.read_text().splitlines()[0])["type"] == "meta"
    assert target.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["backup.jsonl", "m.db"]


@pytest.mark.parametrize("args", [["recall", "City1"], ["history", "Ann"], ["facts"],
                                  ["stats"], ["export"]])
def test_damaged_store_is_one_error_line_on_the_cli(damaged: Path, args: list[str]) -> None:
    assert "damaged" in one_error_line(gm("--store", str(damaged), *args))


def test_damaged_store_is_a_store_error_in_python(damaged: Path) -> None:
    with GraphMemory(damaged, embedder=HashEmbedder(64)) as memory:
        with pytest.raises(StoreError, match="damaged"):
            memory.recall("City1", group_id="default")
        with pytest.raises(StoreError, match="damaged"):
            memory.history("Ann")
        with pytest.raises(StoreError, match="damaged"):
            list(memory.export())


def test_damaged_store_is_readable_error_text_in_mcp_and_langchain(damaged: Path) -> None:
    pytest.importorskip("mcp")
    import asyncio

    from mcp import Client

    from graphmem.integrations import mcp as graphmem_mcp

    with GraphMemory(damaged, embedder=HashEmbedder(64)) as memory:
        server = graphmem_mcp.build_server(memory, group_id="default")

        async def go() -> Any:
            async with Client(server) as client:
                return await client.call_tool("recall", {"query": "City1"})

        answer = asyncio.run(go())
        text = "".join(block.text for block in answer.content)
        assert answer.is_error and "damaged" in text

        pytest.importorskip("langchain_core")
        from langchain_core.tools import ToolException

        from graphmem.integrations.langchain import make_memory_tools

        tools = {tool.name: tool for tool in make_memory_tools(memory, group_id="default")}
        try:
            reply = tools["recall"].invoke({"query": "City1"})
        except ToolException as exc:
            reply = str(exc)
        assert "damaged" in reply


def test_unreachable_bolt_store_is_a_store_error() -> None:
    pytest.importorskip("neo4j")
    from graphmem.store.neo4j import Neo4jStore

    memory = GraphMemory(Neo4jStore("bolt://127.0.0.1:1", max_retry_time=0),
                         embedder=HashEmbedder(64))
    with pytest.raises(StoreError):
        memory.recall("anything")
    with pytest.raises(StoreError):
        memory.history("anyone")
    result = gm("--store", "bolt://127.0.0.1:1", "recall", "anything")
    one_error_line(result)


# ------------------------------------------------------------------ a mistyped store path
@pytest.mark.parametrize("args", [
    ["recall", "x"], ["history", "x"], ["facts"], ["stats"], ["pins"], ["export"],
    ["experience", "recall", "x"], ["forget", "--all-group", "--yes"], ["reprocess"],
    ["db", "status"], ["unpin", "fact_x"],
])
def test_read_commands_refuse_a_store_that_does_not_exist(tmp_path: Path,
                                                          args: list[str]) -> None:
    line = one_error_line(gm("--store", "memroy.db", *args))
    assert "memroy.db" in line and "graphmem init" in line
    assert not (tmp_path / "memroy.db").exists()


def test_export_to_a_mistyped_store_keeps_the_backup(tmp_path: Path) -> None:
    backup = tmp_path / "backup2.jsonl"
    backup.write_text("kept\n")
    one_error_line(gm("--store", "memroy.db", "export", "-o", str(backup)))
    assert backup.read_text() == "kept\n"
    assert not (tmp_path / "memroy.db").exists()


def test_writes_create_the_store_and_reads_then_work(tmp_path: Path) -> None:
    assert gm("--store", "new.db", "init").exit_code == 0
    assert gm("--store", "new.db", "facts").exit_code == 0
    assert gm("--store", "other.db", "ingest", "-", input="I live in Rome.\n").exit_code == 0
    assert "Rome" in gm("--store", "other.db", "facts").output


def test_require_existing_in_python(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="graphmem init"):
        require_existing(open_store(str(tmp_path / "missing.db")))
    assert not (tmp_path / "missing.db").exists()
    (tmp_path / "empty.db").write_bytes(b"")
    with pytest.raises(StoreError, match="no graphmem store"):
        require_existing(open_store(str(tmp_path / "empty.db")))
    with GraphMemory(tmp_path / "real.db", embedder=HashEmbedder(64)) as memory:
        memory.connect()
    require_existing(open_store(str(tmp_path / "real.db")))
    # GraphMemory(create=False): the same refusal when the store is first opened, after the
    # call's own arguments were checked.
    typo = GraphMemory(tmp_path / "gone.db", create=False)
    with pytest.raises(InputError):
        typo.recall("")
    with pytest.raises(StoreError, match=r"gone\.db.*graphmem init"):
        typo.recall("x")
    with pytest.raises(StoreError, match="graphmem init"):
        typo.history("x")
    assert not (tmp_path / "gone.db").exists()
    with GraphMemory(tmp_path / "real.db", create=False) as memory:
        assert memory.facts() == []


@pytest.mark.integration
@requires_bolt
def test_require_existing_on_bolt() -> None:
    memory = empty_bolt_memory()
    try:
        require_existing(memory.store)  # migrated by connect()
        memory.store.wipe_all_for_tests()  # its migration records too: no graphmem store
        with pytest.raises(StoreError, match="graphmem init"):
            require_existing(memory.store)
        memory.store.migrate()
        require_existing(memory.store)
    finally:
        memory.close()


# ------------------------------------------------------------------ the embedder stamp
def test_a_failed_first_command_does_not_stamp_the_embedder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from graphmem import embeddings

    class Broken(HashEmbedder):
        def __init__(self, dim: int) -> None:
            super().__init__(dim)
            self.name = "broken-model"

        def embed(self, texts: list[str]) -> Any:
            raise embeddings.factory.ConfigError("broken-model needs: pip install it")

    with pytest.raises(Exception, match="pip install"):
        GraphMemory(tmp_path / "m.db", embedder=Broken(64)).add_episode("I live in Rome.")
    with GraphMemory(tmp_path / "m.db") as memory:  # the store's own: none recorded
        memory.add_episode("I live in Rome.")
        assert json.loads(memory.store.get_meta("embedder") or "{}")["name"] != "broken-model"


def test_a_missing_extra_on_the_first_command_leaves_the_store_free(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import builtins

    real_import = builtins.__import__

    def without_the_extra(name: str, *args: Any, **kwargs: Any) -> Any:
        if name.split(".")[0] == "sentence_transformers":
            raise ImportError("No module named 'sentence_transformers'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", without_the_extra)
    monkeypatch.setenv("GRAPHMEM_EMBEDDER", "sentence-transformers")
    first = gm("--store", "m.db", "ingest", "-", input="I live in Rome.\n")
    assert "local-embeddings" in one_error_line(first)
    monkeypatch.delenv("GRAPHMEM_EMBEDDER")
    second = gm("--store", "m.db", "ingest", "-", input="I live in Rome.\n")
    assert second.exit_code == 0, second.output


# ------------------------------------------------------------------ a store of a newer graphmem
def test_db_status_refuses_a_store_of_a_newer_graphmem(tmp_path: Path) -> None:
    with GraphMemory(tmp_path / "m.db", embedder=HashEmbedder(64)) as memory:
        memory.connect()
    conn = sqlite3.connect(tmp_path / "m.db")
    conn.execute("INSERT INTO graphmem_migrations VALUES (999, 'from the future', 1)")
    conn.commit()
    conn.close()
    line = one_error_line(gm("--store", "m.db", "db", "status"))
    assert "newer graphmem" in line and "v999" in line
    with pytest.raises(SchemaError, match="newer graphmem"):
        open_store(str(tmp_path / "m.db")).migration_status()


# ------------------------------------------------------------------ reads, on both stores
def test_stats_does_not_count_future_facts_as_current(memory: GraphMemory) -> None:
    future = datetime.now(UTC) + timedelta(days=400)
    memory.add_fact("Ann", "lives_in", "Rome", valid_from=t(2020))
    memory.add_fact("Ann", "works_at", "Acme", valid_from=future)
    counts = memory.stats("default")
    assert counts["facts"] == 2
    assert counts["facts_current"] == 1


def test_recall_of_nothing_is_an_input_error(memory: GraphMemory) -> None:
    for query in ("", "   "):
        with pytest.raises(InputError, match="must not be empty"):
            memory.recall(query)


def test_as_of_takes_the_forms_reference_time_takes(memory: GraphMemory) -> None:
    memory.add_episode("I live in Rome.", reference_time="2020-01-01")  # type: ignore[arg-type]
    memory.add_episode("I live in Oslo.", reference_time="2023-01-01")  # type: ignore[arg-type]
    then = memory.recall("Where do I live?", as_of="2021-06-01")  # type: ignore[arg-type]
    assert [f.object for f in then.facts if f.predicate == "lives_in"] == ["Rome"]
    known = memory.recall("live", known_at="2999-01-01T00:00:00Z")  # type: ignore[arg-type]
    assert known.facts
    with pytest.raises(InputError, match="no timezone"):
        memory.recall("live", as_of="2021-06-01T10:00")  # type: ignore[arg-type]


def test_history_does_not_report_a_negation_as_a_supersession(memory: GraphMemory) -> None:
    memory.add_episode("I work at Atlas Robotics.", reference_time=t(2024, 1))
    memory.add_episode("I left Atlas Robotics.", reference_time=t(2024, 3))
    memory.add_episode("I work at Tidewater.", reference_time=t(2024, 5))
    facts = {f.object: f for f in memory.history("user", predicate="works_at")}
    atlas, tidewater = facts["Atlas Robotics"], facts["Tidewater"]
    assert atlas.valid_to == t(2024, 3)
    assert atlas.superseded_by is None
    assert tidewater.valid_to is None


def test_history_cli_says_ended_not_replaced(tmp_path: Path) -> None:
    lines = "".join(
        json.dumps({"content": text, "reference_time": when}) + "\n"
        for text, when in (("I work at Atlas Robotics.", "2024-01-01T00:00:00Z"),
                           ("I left Atlas Robotics.", "2024-03-01T00:00:00Z"),
                           ("I work at Tidewater.", "2024-05-01T00:00:00Z"))
    )
    (tmp_path / "neg.jsonl").write_text(lines)
    assert gm("--store", "m.db", "ingest", "neg.jsonl").exit_code == 0
    shown = gm("--store", "m.db", "history", "user").output
    atlas = shown.split("Atlas Robotics.", 1)[1].split("\n2.", 1)[0]
    assert "superseded" not in atlas and "Tidewater" not in atlas
    assert "ended" in atlas

