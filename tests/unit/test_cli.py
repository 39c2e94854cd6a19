"""The ``graphmem`` CLI (CliRunner): global options, errors, read commands, forget, db, reprocess.

Ingest paths are in ``test_cli_ingest.py``; export/import in ``test_cli_export.py``. These tests
use JSON event records (the structured extractor) so they hold without an LLM or the rules
extractor; the text-fact path is covered by ``test_cli_ingest.py`` and the subprocess test.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from graphmem import ExtractionError, __version__
from graphmem.cli import cli, main, shared
from graphmem.extract.structured import StructuredExtractor

ENV_VARS = ("GRAPHMEM_STORE", "GRAPHMEM_GROUP", "GRAPHMEM_EMBEDDER", "GRAPHMEM_LLM_MODEL",
            "GRAPHMEM_LLM_BASE_URL")

ARM = [
    {"id": "arm-1", "timestamp": "2024-04-02T09:35:00Z", "location": "Lab B", "payload_kg": 3},
    {"id": "arm-1", "timestamp": "2024-04-16T14:02:00Z", "location": "Lab C", "payload_kg": 3},
    {"id": "gripper-7", "timestamp": "2024-04-03T10:00:00Z", "firmware": "v2.3",
     "note": "<fragile> & \"quoted\""},
]


class Cli:
    """Runs the click app against one tmp SQLite store."""

    def __init__(self, store: str) -> None:
        self.store = store

    def __call__(self, *args: str, input: str | None = None, store: bool = True,
                 env: dict[str, str] | None = None) -> Result:
        argv = (["--store", self.store] if store else []) + list(args)
        return CliRunner().invoke(cli, argv, input=input, env=env, catch_exceptions=False)

    def json(self, *args: str) -> Any:
        result = self(*args, "--json")
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Cli]:
    for var in ENV_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)
    yield Cli(f"sqlite:///{tmp_path}/m.db")


@pytest.fixture
def arm_file(tmp_path: Path) -> Path:
    path = tmp_path / "arm.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ARM), encoding="utf-8")
    return path


@pytest.fixture
def loaded(run: Cli, arm_file: Path) -> Cli:
    result = run("ingest", str(arm_file))
    assert result.exit_code == 0, result.output
    return run


# ------------------------------------------------------------------------------- global
def test_version_and_help(run: Cli) -> None:
    result = run("--version", store=False)
    assert result.exit_code == 0 and __version__ in result.stdout
    result = run("--help", store=False)
    for command in ("init", "ingest", "recall", "history", "facts", "stats", "forget",
                    "export", "import", "db", "reprocess"):
        assert command in result.stdout
    assert run("db", "-h", store=False).exit_code == 0


def test_main_entry_point(run: Cli, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert __version__ in capsys.readouterr().out


def test_init_creates_the_store_and_is_idempotent(run: Cli, tmp_path: Path) -> None:
    result = run("init")
    assert result.exit_code == 0, result.output
    assert str(tmp_path / "m.db") in result.stdout and "applied" in result.stdout
    assert (tmp_path / "m.db").exists()
    again = run.json("init")
    assert again["migrations_applied"] == [] and again["schema_version"] >= 1
    assert again["path"] == str(tmp_path / "m.db")


def test_store_from_environment_as_plain_path(run: Cli, tmp_path: Path) -> None:
    path = tmp_path / "env.db"
    result = run("init", store=False, env={"GRAPHMEM_STORE": str(path)})
    assert result.exit_code == 0, result.output
    assert path.exists()


def test_unknown_store_scheme_is_a_clear_one_line_error(run: Cli) -> None:
    result = run("--store", "mysql://localhost/x", "stats", store=False)
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: unknown store URL scheme 'mysql'")
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.output
    result = run("--store", "memory.txt", "stats", store=False)
    assert result.exit_code == 1 and "expected sqlite:///path.db" in result.stderr


def test_foreign_sqlite_file_is_refused_and_verbose_shows_traceback(run: Cli,
                                                                    tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE customers (id INTEGER)")
    result = run("--store", str(other), "stats", store=False)
    assert result.exit_code == 1
    assert "not a graphmem store" in result.stderr and "Traceback" not in result.stderr
    verbose = run("-v", "--store", str(other), "stats", store=False)
    assert verbose.exit_code == 1 and "Traceback" in verbose.stderr
    assert "SchemaError" in verbose.stderr


def test_empty_group_is_a_usage_error(run: Cli) -> None:
    result = run("--group", " ", "stats")
    assert result.exit_code == 2 and "--group" in result.stderr


# ------------------------------------------------------------------------------- db
def test_db_status_and_migrate(run: Cli) -> None:
    missing = run("db", "status")
    assert missing.exit_code == 1 and "graphmem init" in missing.stderr
    sqlite3.connect(run.store.removeprefix("sqlite:///")).close()  # a file with no schema yet
    status = run.json("db", "status")
    assert status["pending"] >= 1
    assert all(m["applied_at"] is None for m in status["migrations"])
    text = run("db", "status")
    assert "PENDING" in text.stdout and "graphmem db migrate" in text.stdout
    migrated = run("db", "migrate")
    assert migrated.exit_code == 0 and "applied 1:" in migrated.stdout
    assert run("db", "migrate").stdout.strip() == "already up to date"
    assert run.json("db", "migrate")["migrations_applied"] == []
    status = run.json("db", "status")
    assert status["pending"] == 0 and all(m["applied_at"] for m in status["migrations"])
    assert "PENDING" not in run("db", "status").stdout


# ------------------------------------------------------------------------------- read commands
def test_stats(loaded: Cli) -> None:
    stats = loaded.json("stats")
    assert stats["episodes"] == 3 and stats["facts"] > 0 and stats["supersedes_links"] >= 1
    assert stats["embedder"]["name"].startswith("hash-ngram")
    text = loaded("stats").stdout
    assert "episodes" in text and "supersedes_links" in text
    assert loaded.json("--group", "nobody", "stats")["episodes"] == 0


def test_facts_current_history_and_entity(loaded: Cli) -> None:
    current = loaded.json("facts")
    statements = [f["statement"] for f in current]
    assert "arm-1 location = Lab C" in statements
    assert "arm-1 location = Lab B" not in statements
    every = loaded.json("facts", "--history")
    assert "arm-1 location = Lab B" in [f["statement"] for f in every]
    text = loaded("facts", "--history").stdout
    assert "superseded" in text and "current" in text and "Lab B" in text
    only = loaded.json("facts", "--entity", "gripper-7")
    assert {f["subject"] for f in only} == {"gripper-7"}
    assert "arm-1 location = Lab C" in loaded("facts").stdout
    empty = loaded("--group", "other", "facts")
    assert empty.exit_code == 0 and "no facts in group 'other'" in empty.stdout


def test_history_shows_the_supersession_chain(loaded: Cli) -> None:
    result = loaded("history", "arm-1", "--predicate", "location")
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert text.index("Lab B") < text.index("Lab C")
    assert "2024-04-02 09:35Z → 2024-04-16 14:02Z" in text
    assert "superseded" in text and "by: arm-1 location = Lab C" in text
    assert "from: arm.jsonl @ 2024-04-02 09:35Z" in text
    chain = loaded.json("history", "arm-1", "--predicate", "location")
    assert [f["value"] for f in chain] == ["Lab B", "Lab C"]
    assert chain[0]["valid_to"] is not None and chain[0]["superseded_by"] == chain[1]["id"]
    assert chain[1]["valid_to"] is None
    missing = loaded("history", "nobody")
    assert missing.exit_code == 0 and "no facts about 'nobody'" in missing.stdout
    assert loaded.json("history", "nobody") == []


def test_history_bad_predicate_is_an_error(loaded: Cli) -> None:
    result = loaded("history", "arm-1", "--predicate", "Lives In!")
    assert result.exit_code == 2 and result.stderr.startswith("Error: ")  # invalid input


def test_recall_table_context_and_json(loaded: Cli) -> None:
    table = loaded("recall", "where is arm-1 located")
    assert table.exit_code == 0, table.output
    assert "score" in table.stdout and "arm-1 location = Lab C" in table.stdout
    assert "arm.jsonl" in table.stdout
    assert "replaced: arm-1 location = Lab B" in table.stdout
    context = loaded("recall", "arm-1 location", "--context")
    assert context.stdout.startswith("Memory for: arm-1 location")
    data = loaded.json("recall", "arm-1 location", "-k", "3", "--hops", "1")
    assert data["query"] == "arm-1 location" and len(data["facts"]) <= 3
    assert {"statement", "valid_from", "score", "superseded"} <= set(data["facts"][0])


def test_recall_as_of_sees_the_past(loaded: Cli) -> None:
    data = loaded.json("recall", "arm-1 location", "--as-of", "2024-04-10")
    statements = [f["statement"] for f in data["facts"]]
    assert "arm-1 location = Lab B" in statements
    assert "arm-1 location = Lab C" not in statements
    known = loaded.json("recall", "arm-1 location", "--known-at", "2020-01-01T00:00:00Z")
    assert known["facts"] == []
    table = loaded("recall", "arm-1", "--as-of", "2024-04-10T00:00:00+02:00")
    assert "as of 2024-04-09 22:00Z" in table.stdout
    lab_b = next(line for line in table.stdout.splitlines() if "location = Lab B" in line)
    assert "no longer true" not in lab_b  # it was true then
    now = loaded("recall", "arm-1 location Lab B", "-k", "50").stdout
    assert "replaced: arm-1 location = Lab B" in now


def test_recall_filters(loaded: Cli) -> None:
    data = loaded.json("recall", "arm", "--filter", "payload_kg=3", "--filter", "location!=Lab B")
    assert data["facts"] and {f["subject"] for f in data["facts"]} == {"arm-1"}
    none = loaded.json("recall", "arm", "--filter", "payload_kg>3")
    assert none["facts"] == []
    some = loaded.json("recall", "arm", "--filter", "payload_kg>=3", "--filter", "payload_kg<4")
    assert {f["subject"] for f in some["facts"]} == {"arm-1"}
    quoted = loaded.json("recall", "gripper", "--filter", 'firmware="v2.3"')
    assert {f["subject"] for f in quoted["facts"]} == {"gripper-7"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--as-of", "yesterday"], "expected ISO-8601 like 2024-05-01T10:00:00Z"),
        (["--as-of", "2024-05-01T10:00:00"], "has no timezone; add Z or an offset"),
        (["--known-at", "2024-13-01"], "is not a date"),
        (["--filter", "success"], "expected PATH=VALUE"),
        (["--filter", "=3"], "expected PATH=VALUE"),
        (["--filter", "a<true"], "compares with a number, a date"),
        (["-k", "0"], "-k"),
        (["--hops", "9"], "--hops"),
        (["--context", "--json"], "exclusive"),
    ],
)
def test_recall_usage_errors(loaded: Cli, args: list[str], message: str) -> None:
    result = loaded("recall", "arm", *args)
    assert result.exit_code == 2, result.output
    assert message in result.stderr
    assert "Traceback" not in result.output


def test_bad_date_on_every_date_option(run: Cli) -> None:
    for option in ("--as-of", "--known-at"):
        result = run("recall", "x", option, "01/05/2024")
        assert result.exit_code == 2
        assert f"Invalid value for '{option}'" in result.stderr
        assert "2024-05-01T12:00:00+02:00 or 2024-05-01" in result.stderr


# ------------------------------------------------------------------------------- forget
def test_forget_refuses_without_yes_when_not_a_terminal(loaded: Cli) -> None:
    before = loaded.json("stats")
    result = loaded("forget", "--entity", "gripper-7")
    assert result.exit_code == 1
    assert "refusing to forget" in result.stderr and "--yes" in result.stderr
    assert loaded.json("stats") == before


def test_forget_entity_with_yes(loaded: Cli) -> None:
    result = loaded("forget", "--entity", "gripper-7", "--yes")
    assert result.exit_code == 0, result.output
    assert "forgot entity 'gripper-7'" in result.stdout and "fact(s)" in result.stdout
    assert loaded.json("facts", "--entity", "gripper-7") == []
    assert loaded.json("facts", "--entity", "arm-1")


def test_forget_asks_on_a_terminal(loaded: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shared, "stdin_is_tty", lambda: True)
    declined = loaded("forget", "--entity", "gripper-7", input="n\n")
    assert declined.exit_code == 1 and "Aborted" in declined.stderr
    assert loaded.json("facts", "--entity", "gripper-7")
    accepted = loaded("forget", "--entity", "gripper-7", input="y\n")
    assert accepted.exit_code == 0, accepted.output
    assert "Forget entity 'gripper-7'" in accepted.stderr
    assert loaded.json("facts", "--entity", "gripper-7") == []


def test_forget_episode_and_json(loaded: Cli) -> None:
    facts = loaded.json("facts", "--entity", "gripper-7")
    episode = facts[0]["episode_ids"][0]
    result = loaded.json("forget", "--episode", episode, "--yes")
    assert result["episodes_removed"] == 1 and result["facts_removed"] >= 1
    assert loaded.json("stats")["episodes"] == 2
    again = loaded("forget", "--episode", episode, "--yes")
    assert again.exit_code == 1 and "no episode" in again.stderr


def test_forget_whole_group(run: Cli, arm_file: Path) -> None:
    assert run("--group", "lab", "ingest", str(arm_file)).exit_code == 0
    assert run("ingest", str(arm_file)).exit_code == 0
    result = run("--group", "lab", "forget", "--all-group", "--yes")
    assert result.exit_code == 0 and "EVERYTHING in group 'lab'" in result.stdout
    assert run.json("--group", "lab", "stats")["episodes"] == 0
    assert run.json("stats")["episodes"] == 3
    result = run("forget", "--group", "default", "--yes")
    assert result.exit_code == 0
    assert run.json("stats")["episodes"] == 0


@pytest.mark.parametrize(
    "args",
    [[], ["--entity", "a", "--episode", "b"], ["--all-group", "--group", "g"]],
)
def test_forget_needs_exactly_one_target(loaded: Cli, args: list[str]) -> None:
    result = loaded("forget", "--yes", *args)
    assert result.exit_code == 2 and "exactly one of" in result.stderr


def test_forget_unknown_entity(loaded: Cli) -> None:
    result = loaded("forget", "--entity", "nobody", "--yes")
    assert result.exit_code == 1 and "no entity named 'nobody'" in result.stderr


# ------------------------------------------------------------------------------- reprocess
def test_reprocess_retries_failed_episodes(run: Cli, arm_file: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    original = StructuredExtractor.extract

    def broken(self: StructuredExtractor, *args: Any) -> Any:
        raise ExtractionError("the extractor is down")

    monkeypatch.setattr(StructuredExtractor, "extract", broken)
    failed = run("ingest", str(arm_file))
    assert failed.exit_code == 1
    assert "3 episode(s) were stored but their extraction failed" in failed.stderr
    assert "graphmem reprocess" in failed.stderr
    assert run.json("stats")["episodes_failed"] == 3
    still = run("reprocess")
    assert still.exit_code == 1 and "still failed" in still.stderr
    monkeypatch.setattr(StructuredExtractor, "extract", original)
    fixed = run.json("reprocess")
    assert fixed["episodes"] == 3 and fixed["episodes_failed"] == 0 and fixed["facts_added"] > 0
    stats = run.json("stats")
    assert stats["episodes_failed"] == 0 and stats["facts"] > 0
    nothing = run("reprocess")
    assert nothing.exit_code == 0 and "reprocessed 0 episode(s)" in nothing.stdout


def test_llm_extractor_without_a_model_is_a_config_error(run: Cli, arm_file: Path) -> None:
    result = run("ingest", "--extractor", "llm", str(arm_file))
    assert result.exit_code == 1 and result.stderr.startswith("Error: ")
    assert "Traceback" not in result.output
    assert run.json("stats")["episodes"] == 0
