"""Issue 14 (hardening) on the CLI and the file parsers: tenant-bound ingest, per-line skipping,
skipped files, capped error lists, closed pipes, control characters, forgetting nothing."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from graphmem import GraphMemory, HashEmbedder, InputError
from graphmem.cli import cli
from graphmem.sources.files import iter_input_files, parse_bytes, parse_paths, parse_text

ENV_VARS = ("GRAPHMEM_STORE", "GRAPHMEM_GROUP", "GRAPHMEM_EMBEDDER", "GRAPHMEM_LLM_MODEL",
            "GRAPHMEM_LLM_BASE_URL")
ROOT = Path(__file__).resolve().parents[2]


class Cli:
    def __init__(self, store: str) -> None:
        self.store = store

    def __call__(self, *args: str, input: str | bytes | None = None) -> Result:
        return CliRunner().invoke(cli, ["--store", self.store, *args], input=input,
                                  catch_exceptions=False)

    def json(self, *args: str, code: int = 0) -> Any:
        result = self(*args, "--json")
        assert result.exit_code == code, result.output
        return json.loads(result.stdout)


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Cli]:
    for var in ENV_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)
    yield Cli(f"sqlite:///{tmp_path}/m.db")


def groups_of(run: Cli) -> dict[str, int]:
    """Episodes per group, read from the export."""
    counts: dict[str, int] = {}
    for line in run("export").stdout.splitlines():
        row = json.loads(line)
        if row.get("type") == "episode":
            counts[row["group_id"]] = counts.get(row["group_id"], 0) + 1
    return counts


# ------------------------------------------------------------------ 1. --group bounds every write
EVIL = ('{"content": "Alice lives in Paris."}\n'
        '{"content": "Mallory was here.", "group_id": "bob"}\n'
        '{"content": "Alice likes tea.", "group_id": "alice"}\n')
REFUSED = ("evil.jsonl:2: group_id: 'bob' is not the command's group 'alice' "
           "(pass --allow-other-groups to write to other groups)")


def test_group_refuses_a_line_naming_another_group(run: Cli, tmp_path: Path) -> None:
    (tmp_path / "evil.jsonl").write_text(EVIL, encoding="utf-8")
    result = run("--group", "alice", "ingest", "evil.jsonl")
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines()[0] == REFUSED
    assert groups_of(run) == {}  # nothing written, in any group
    data = run.json("--group", "alice", "ingest", "evil.jsonl", code=2)
    assert data["written"] == 0 and data["invalid"][0]["field"] == "group_id"


def test_group_with_skip_invalid_skips_the_line(run: Cli, tmp_path: Path) -> None:
    (tmp_path / "evil.jsonl").write_text(EVIL, encoding="utf-8")
    result = run("--group", "alice", "ingest", "--skip-invalid", "evil.jsonl")
    assert result.exit_code == 0, result.output
    assert f"skipped: {REFUSED}" in result.stderr.splitlines()
    assert "; 1 invalid skipped" in result.stdout
    assert groups_of(run) == {"alice": 2}


def test_allow_other_groups_writes_them_and_reports_the_groups(run: Cli, tmp_path: Path) -> None:
    (tmp_path / "evil.jsonl").write_text(EVIL, encoding="utf-8")
    result = run("--group", "alice", "ingest", "--allow-other-groups", "evil.jsonl")
    assert result.exit_code == 0, result.output
    assert "groups written: 'alice' 2, 'bob' 1" in result.stdout.splitlines()
    assert groups_of(run) == {"alice": 2, "bob": 1}
    data = run.json("--group", "alice", "ingest", "--allow-other-groups", "evil.jsonl")
    assert data["groups"] == {"alice": 2, "bob": 1}


def test_without_group_a_lines_group_is_honoured_and_reported(run: Cli, tmp_path: Path) -> None:
    (tmp_path / "evil.jsonl").write_text(EVIL, encoding="utf-8")
    result = run("ingest", "evil.jsonl")
    assert result.exit_code == 0, result.output
    assert "groups written: 'alice' 1, 'bob' 1, 'default' 1" in result.stdout.splitlines()
    assert groups_of(run) == {"alice": 1, "bob": 1, "default": 1}


def test_group_on_stdin_is_bounded_too(run: Cli) -> None:
    result = run("--group", "alice", "ingest", "-", "--format", "jsonl", input=EVIL)
    assert result.exit_code == 2
    assert "stdin:2: group_id: 'bob' is not the command's group 'alice'" in result.stderr
    assert groups_of(run) == {}


def test_parser_refuses_other_groups_only_when_asked() -> None:
    kept = parse_text(EVIL, source="evil.jsonl", group_id="alice")
    assert [r.episode["group_id"] for r in kept.records] == ["alice", "bob", "alice"]
    bounded = parse_text(EVIL, source="evil.jsonl", group_id="alice", allow_other_groups=False)
    assert [r.episode["group_id"] for r in bounded.records] == ["alice", "alice"]
    assert [str(p) for p in bounded.problems] == [REFUSED]


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[GraphMemory]:
    with GraphMemory(f"{tmp_path}/py.db", embedder=HashEmbedder(32)) as memory:
        yield memory


def test_add_episodes_group_id_refuses_another_group(mem: GraphMemory) -> None:
    items = [{"content": "Alice lives in Paris."},
             {"content": "Mallory was here.", "group_id": "bob"}]
    with pytest.raises(InputError, match=r"^episode 1: group_id 'bob' is not 'alice'$"):
        mem.add_episodes(items, group_id="alice")
    assert mem.stats()["episodes"] == 0
    results = mem.add_episodes(items, group_id="alice", on_invalid="skip")
    assert [r.status for r in results][1] == "invalid"
    assert results[1].error == "episode 1: group_id 'bob' is not 'alice'"
    assert mem.stats("alice")["episodes"] == 1 and mem.stats("bob")["episodes"] == 0
    assert mem.stats()["episodes"] == 1  # the item without a group went to alice


def test_add_episodes_without_group_id_keeps_each_items_group(mem: GraphMemory) -> None:
    mem.add_episodes([{"content": "one"}, {"content": "two", "group_id": "bob"}])
    assert mem.stats("default")["episodes"] == 1 and mem.stats("bob")["episodes"] == 1


# ------------------------------------------------------------------ 2. one bad line, not the file
BAD_UTF8 = b'{"content": "one"}\n{"content": "caf\xe9"}\n{"content": "three"}\n'


def test_skip_invalid_keeps_the_lines_around_a_non_utf8_line(run: Cli, tmp_path: Path) -> None:
    (tmp_path / "log.jsonl").write_bytes(BAD_UTF8)
    result = run("ingest", "--skip-invalid", "log.jsonl")
    assert result.exit_code == 0, result.output
    assert "skipped: log.jsonl:2: not UTF-8 text (byte 35)" in result.stderr.splitlines()
    assert result.stdout.startswith("2 episodes from 1 file(s)")
    assert "; 1 invalid skipped" in result.stdout
    assert groups_of(run) == {"default": 2}


def test_without_skip_a_non_utf8_line_is_reported_by_line(run: Cli, tmp_path: Path) -> None:
    (tmp_path / "log.jsonl").write_bytes(BAD_UTF8 + b"not json\n")
    result = run("ingest", "log.jsonl")
    assert result.exit_code == 2
    assert result.stderr.splitlines()[:2] == [
        "log.jsonl:2: not UTF-8 text (byte 35)",
        "log.jsonl:4: invalid JSON: Expecting value (column 1)",
    ]
    assert groups_of(run) == {}


def test_parse_bytes_judges_json_lines_one_by_one() -> None:
    raw = b"\xef\xbb\xbf" + BAD_UTF8 + b"\xff\n"
    parsed = parse_bytes(raw, source="log.jsonl")
    assert [r.episode["content"] for r in parsed.records] == ["one", "three"]
    assert [(p.line, p.reason) for p in parsed.problems] == [
        (2, "not UTF-8 text (byte 38)"), (4, "not UTF-8 text (byte 63)")]
    events = parse_bytes(BAD_UTF8, source="x.log", format="events")
    assert len(events.records) == 2 and events.problems[0].line == 2


@pytest.mark.parametrize("name,raw", [
    ("chat.json", b'[{"role": "user", "content": "one"},\n{"role": "user", "content": "\xe9"}]\n'),
    ("array.json", b'[{"content": "one"},\n{"content": "caf\xe9"}]\n'),
    ("notes.md", b"Ana: one\nBob: caf\xe9\n"),
    ("pretty.jsonl", b'{\n  "content": "caf\xe9"\n}\n'),
    ("utf16.jsonl", '{"content": "one"}\n{"content": "two"}\n'.encode("utf-16")),
])
def test_whole_file_formats_report_the_file(name: str, raw: bytes) -> None:
    parsed = parse_bytes(raw, source=name)
    assert parsed.records == []
    (problem,) = parsed.problems
    assert problem.reason.startswith("not UTF-8 text")


def test_a_pathological_json_line_is_that_lines_problem() -> None:
    huge, deep = "9" * 5000, "[" * 50_000 + "]" * 50_000
    text = f'{{"content": "one"}}\n{{"force": {huge}}}\n{{"deep": {deep}}}\n{{"content": "four"}}\n'
    parsed = parse_text(text, source="log.jsonl")
    assert [r.episode["content"] for r in parsed.records] == ["one", "four"]
    assert [(p.line, p.reason.split(" (")[0]) for p in parsed.problems] == [
        (2, "cannot be parsed"), (3, "cannot be parsed")]


def test_json_lines_end_at_newline_only() -> None:
    # U+2028 and U+0085 may stand raw inside a JSON string; str.splitlines cut the line there.
    text = '{"content": "a\u2028b"}\n{"content": "c\x85d"}\r\n'
    parsed = parse_text(text, source="log.jsonl")
    assert parsed.problems == []
    assert [r.episode["content"] for r in parsed.records] == ["a\u2028b", "c\x85d"]


# ------------------------------------------------------------------ 3. skipped files are reported
def test_directory_ingest_reports_files_it_does_not_read(run: Cli, tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    (logs / "sub").mkdir(parents=True)
    (logs / "a.jsonl").write_text('{"content": "Alice lives in Paris."}\n', encoding="utf-8")
    (logs / "app.log").write_text("Alice lives in Rome.\n", encoding="utf-8")
    (logs / "sub" / "b.csv").write_text("x,y\n", encoding="utf-8")
    (logs / ".hidden.log").write_text("no\n", encoding="utf-8")
    result = run("ingest", "logs")
    assert result.exit_code == 0, result.output
    skipped = [line for line in result.stderr.splitlines() if line.startswith("skipped: ")]
    listed = ["logs/.hidden.log", "logs/app.log", "logs/sub/b.csv"]
    assert [line.split(": ")[1] for line in skipped] == listed
    assert "hidden" in skipped[0] and "name the file itself" in skipped[0]
    assert "not an input file" in skipped[1] and "name the file itself" in skipped[1]
    data = run.json("ingest", "logs")
    assert [s["file"] for s in data["skipped_files"]] == listed
    assert run("ingest", "logs/app.log").exit_code == 0  # a file named itself is read


def test_parse_paths_lists_skipped_files(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text('{"x": 1}\n', encoding="utf-8")
    (tmp_path / "b.log").write_text("x\n", encoding="utf-8")
    assert parse_paths([tmp_path]).skipped == [str(tmp_path / "b.log")]
    skipped: list[Path] = []
    assert [p.name for p in iter_input_files([tmp_path], skipped=skipped)] == ["a.jsonl"]
    assert skipped == [tmp_path / "b.log"]


# ------------------------------------------------------------------ 4. capped error lists
def test_invalid_records_list_is_capped(run: Cli, tmp_path: Path) -> None:
    (tmp_path / "bad.jsonl").write_text("not json\n" * 45, encoding="utf-8")
    result = run("ingest", "bad.jsonl")
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 22
    assert lines[19].startswith("bad.jsonl:20: invalid JSON")
    assert lines[20] == "… and 25 more (-v lists them all)"
    assert lines[21].startswith("45 invalid records; nothing was written")
    verbose = run("-v", "ingest", "bad.jsonl")
    assert verbose.exit_code == 2 and len(verbose.stderr.splitlines()) == 46
    assert len(run.json("ingest", "bad.jsonl", code=2)["invalid"]) == 45  # JSON is whole
    skipped = run("ingest", "--skip-invalid", "bad.jsonl")
    assert "… and 25 more (-v lists them all)" in skipped.stderr.splitlines()


def test_import_invalid_rows_list_is_capped(run: Cli, tmp_path: Path) -> None:
    (tmp_path / "bad.jsonl").write_text('{"type": "nope"}\n' * 30, encoding="utf-8")
    result = run("import", "bad.jsonl")
    assert result.exit_code == 2
    assert "… and 10 more (-v lists them all)" in result.stderr.splitlines()


# ------------------------------------------------------------------ 5. a closed pipe: exit 0
def _many_facts(path: Path) -> str:
    store = f"sqlite:///{path}"
    with GraphMemory(store, embedder=HashEmbedder(32)) as memory:  # > 64 KiB of table
        memory.add_episodes([{"content": json.dumps({"robot": f"r{i}", "note": "x" * 300}),
                              "kind": "json"} for i in range(300)])
    return store


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ENV_VARS}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


@pytest.mark.skipif(shutil.which("bash") is None or shutil.which("head") is None,
                    reason="needs bash and head")
def test_facts_into_head_exits_zero_quietly(tmp_path: Path) -> None:
    store = _many_facts(tmp_path / "m.db")
    script = (f'"{sys.executable}" -m graphmem.cli --store "{store}" facts 2>err | head -1; '
              'echo "${PIPESTATUS[0]}" > rc')
    out = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=_env(tmp_path),
                         capture_output=True, text=True, timeout=120)
    assert out.stdout.startswith("valid")
    assert (tmp_path / "err").read_text() == ""
    assert (tmp_path / "rc").read_text().strip() == "0"


def test_reader_closing_stdout_early_exits_zero(tmp_path: Path) -> None:
    store = _many_facts(tmp_path / "m.db")
    for args in (["facts"], ["facts", "--json"], ["export"]):
        proc = subprocess.Popen([sys.executable, "-m", "graphmem.cli", "--store", store, *args],
                                cwd=tmp_path, env=_env(tmp_path), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        assert proc.stdout is not None and proc.stderr is not None
        assert proc.stdout.readline()
        proc.stdout.close()
        err = proc.stderr.read()
        assert proc.wait(timeout=120) == 0, (args, err)
        assert err == b"", args


# ------------------------------------------------------------------ 6. control characters
HOSTILE = "Lis\x1b]0;pwned\x07bon \x1b[31mred\x9b2J\x7f\u202eevil\rtoo"


@pytest.fixture
def hostile(run: Cli, tmp_path: Path) -> Cli:
    with GraphMemory(run.store) as memory:
        memory.add_fact("Maya", "lives_in", HOSTILE, valid_from=datetime(2024, 3, 1, tzinfo=UTC),
                        source="src\x1b[2J")
        memory.add_fact("Maya", "lives_in", "Porto\x00", valid_from=datetime(2024, 9, 1,
                                                                           tzinfo=UTC))
        memory.add_experience("grasp \x1b]0;x\x07 mug", params={"grip": "a\x9bb\x1b[1m"},
                              outcome={"success": True})
    return run


def _terminal_safe(text: str) -> None:
    bad = [c for c in text if (ord(c) < 0x20 and c not in "\n\t") or 0x7f <= ord(c) <= 0x9f
           or c in "\u202e\u2028"]
    assert bad == [], text


@pytest.mark.parametrize("args", [
    ["facts"], ["facts", "--history"], ["history", "Maya"], ["recall", "Maya lives"],
    ["recall", "Maya lives", "--context"], ["experience", "recall", "grasp"],
])
def test_human_output_escapes_control_characters(hostile: Cli, args: list[str]) -> None:
    result = hostile(*args)
    assert result.exit_code == 0, result.output
    _terminal_safe(result.stdout)
    _terminal_safe(result.stderr)
    assert "\x00" not in result.stdout


def test_escapes_are_visible(hostile: Cli) -> None:
    out = hostile("facts", "--history").stdout
    assert "\\x1b]0;pwned\\x07bon \\x1b[31mred\\x9b2J\\x7f\\u202eevil\\rtoo" in out
    assert "Porto\\x00" in out
    assert "\\x1b[2J" in hostile("history", "Maya").stdout  # the source
    assert "a\\x9bb\\u001b[1m" in hostile("experience", "recall", "grasp").stdout


def test_problems_on_stderr_are_escaped(run: Cli, tmp_path: Path) -> None:
    (tmp_path / "bad.jsonl").write_text('{"content": "x", "col\\u001b]0;pwned\\u0007": 1}\n',
                                        encoding="utf-8")
    result = run("ingest", "bad.jsonl")
    assert result.exit_code == 2
    _terminal_safe(result.stderr)
    assert "unknown field col\\x1b]0;pwned\\x07;" in result.stderr


def test_json_output_stays_exact(hostile: Cli) -> None:
    statements = [f["statement"] for f in hostile.json("facts", "--history")]
    assert any(HOSTILE in s for s in statements)
    assert any("Porto\x00" in s for s in statements)
    found = hostile.json("experience", "recall", "grasp")
    assert found[0]["params"] == {"grip": "a\x9bb\x1b[1m"}


# ------------------------------------------------------------------ 7. forgetting nothing
def _audits(tmp_path: Path) -> int:
    with sqlite3.connect(tmp_path / "m.db") as db:
        return int(db.execute("SELECT count(*) FROM audit_log").fetchone()[0])


def test_forget_a_group_that_holds_nothing_is_an_error(run: Cli, tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text('{"content": "Alice lives in Paris."}\n', encoding="utf-8")
    assert run("--group", "alice", "ingest", "a.jsonl").exit_code == 0
    result = run("forget", "--group", "alcie", "--yes")
    assert result.exit_code == 1
    assert result.stderr == ("Error: nothing to forget: group 'alcie' holds no episodes, "
                             "entities or facts (`graphmem stats` lists the groups)\n")
    assert _audits(tmp_path) == 0
    typo = run("--group", "alcie", "forget", "--all-group", "--yes")
    assert typo.exit_code == 1 and "nothing to forget" in typo.stderr
    assert _audits(tmp_path) == 0
    done = run("forget", "--group", "alice", "--yes")
    assert done.exit_code == 0 and done.stdout.startswith("forgot EVERYTHING in group 'alice'")
    assert _audits(tmp_path) == 1
    again = run("forget", "--group", "alice", "--yes")
    assert again.exit_code == 1 and _audits(tmp_path) == 1
