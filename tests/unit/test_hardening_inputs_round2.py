"""Hardening, second round, on input: transcripts decided line by line, non-Latin names, the
import file's checks, the LLM endpoint in errors, exit 2 for invalid input in every command,
``forget --group`` under a global ``--group``, and the inputs that used to be accepted
silently (``--per`` on JSON, hidden files, malformed filters, implausible times, episode -1)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from graphmem import GraphMemory, HashEmbedder, InputError
from graphmem.cli import cli
from graphmem.sources.files import parse_paths, parse_text

ENV_VARS = ("GRAPHMEM_STORE", "GRAPHMEM_GROUP", "GRAPHMEM_EMBEDDER", "GRAPHMEM_LLM_MODEL",
            "GRAPHMEM_LLM_BASE_URL", "OPENAI_BASE_URL")


@pytest.fixture(autouse=True)
def _clean_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ENV_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)


def gm(*args: str, input: str | bytes | None = None) -> Result:
    return CliRunner().invoke(cli, ["--store", "m.db", *args], input=input)


def invalid(result: Result) -> str:
    """Exit 2 (invalid input), no traceback; the output."""
    assert result.exit_code == 2, (result.exit_code, result.output)
    assert "Traceback" not in result.output
    return result.output


@pytest.fixture
def mem(tmp_path: Path) -> Any:
    with GraphMemory(tmp_path / "py.db", embedder=HashEmbedder(64)) as memory:
        yield memory


# ------------------------------------------------------------------ transcripts
ODD = "[2024-01-02 10:00] Bob: I live in Paris.\nsome odd line\n"


def test_one_odd_line_does_not_turn_a_transcript_into_prose() -> None:
    parsed = parse_text(ODD, source="notes.txt")
    assert parsed.formats == {"notes.txt": "transcript"}
    (record,) = parsed.records
    assert record.episode["metadata"] == {"speaker": "Bob"}
    assert record.episode["reference_time"].isoformat() == "2024-01-02T10:00:00+00:00"


def test_one_odd_line_keeps_speaker_and_time_on_the_cli(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text(ODD)
    assert gm("ingest", "notes.txt").exit_code == 0
    shown = gm("facts").output
    assert "Bob lives in Paris." in shown and "2024-01-02" in shown
    assert "User" not in shown


def test_a_timestamped_line_without_a_speaker_is_reported(tmp_path: Path) -> None:
    text = ("[2024-01-03 10:00] Bob: I live in Rome.\n"
            "[2024-01-04 10:00] : I work at Acme.\n")
    parsed = parse_text(text, source="t.txt", format="transcript")
    assert [(p.line, p.field) for p in parsed.problems] == [(2, "speaker")]
    (tmp_path / "t.txt").write_text(text)
    out = invalid(gm("ingest", "t.txt"))
    assert "t.txt:2: speaker:" in out
    assert gm("stats").exit_code == 1  # nothing written: not even the store


def test_prose_with_one_speaker_like_line_stays_prose() -> None:
    text = "We met on Monday.\nNote: bring the charts.\nIt went well.\n"
    assert parse_text(text, source="a.txt").formats == {"a.txt": "prose"}


# ------------------------------------------------------------------ non-Latin text
@pytest.mark.parametrize(("text", "place"), [
    ("I live in Москва.", "Москва"),
    ("I live in 北京.", "北京"),
    ("I live in Αθήνα.", "Αθήνα"),
    ("I work at Łukasiewicz Labs.", "Łukasiewicz Labs"),
    ("I live in ಬೆಂಗಳೂರು.", "ಬೆಂಗಳೂರು"),
])
def test_rules_extractor_reads_names_in_other_scripts(mem: GraphMemory, text: str,
                                                      place: str) -> None:
    result = mem.add_episode(text, extractor="rules")
    assert result.facts_added == 1, result
    assert [f.object for f in mem.facts()] == [place]


@pytest.mark.parametrize("text", ["I prefer 🍵.", "I work at ☕."])
def test_text_the_rules_cannot_read_says_so(mem: GraphMemory, text: str) -> None:
    result = mem.add_episode(text, extractor="rules")
    assert result.facts_added == 0
    assert any(w.startswith("no fact: script not supported") for w in result.warnings)
    stored = mem.episode(result.episode_id)
    assert stored is not None and "script not supported" in (stored.error or "")


@pytest.mark.parametrize("text", ["The weather was fine.", "That was great 🌟", "Ну ладно."])
def test_no_script_warning_where_no_fact_was_missed(mem: GraphMemory, text: str) -> None:
    assert not mem.add_episode(text, extractor="rules").warnings


# ------------------------------------------------------------------ import
@pytest.mark.parametrize(("content", "says"), [
    (b"\xff\xfe{\"type\": \"fact\"}\n", "x.jsonl:1: not UTF-8"),
    (b'{"type": "meta", "format": "other", "version": 1}\n', "not a graphmem export"),
    (b'{"type": "meta", "format": "graphmem-export", "version": 99}\n', "version 99"),
    (b'{"type": "fact"}\n', "x.jsonl:1: an empty fact row"),
    (b'{"type": "fact", "id": "x"}\n', "group_id: missing"),
    (b'{"type": "meta", "format": "graphmem-export", "version": 1}\n' * 2, "x.jsonl:2:"),
])
def test_import_reports_bad_files_with_exit_2(tmp_path: Path, content: bytes, says: str) -> None:
    (tmp_path / "x.jsonl").write_bytes(content)
    assert says in invalid(gm("import", "x.jsonl"))


def test_import_still_reads_a_real_export(tmp_path: Path) -> None:
    gm("ingest", "-", input="I live in Paris.\n")
    assert gm("export", "-o", "backup.jsonl").exit_code == 0
    moved = CliRunner().invoke(cli, ["--store", "new.db", "import", "backup.jsonl"])
    assert moved.exit_code == 0, moved.output
    assert "1 facts" in moved.output


# ------------------------------------------------------------------ the LLM endpoint
def test_llm_errors_name_the_endpoint_called(mem: GraphMemory,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("openai")
    from graphmem.extract.llm.extractor import LLMExtractor

    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    extractor = LLMExtractor("some-model", api_key="x", max_retries=0, timeout=5)
    assert "127.0.0.1:9" in repr(extractor)
    result = mem.add_episode("I live in Paris.", extractor=extractor)
    assert result.status == "failed"
    assert "127.0.0.1:9" in (result.error or "") and "api.openai.com" not in (result.error or "")


# ------------------------------------------------------------------ exit codes
@pytest.mark.parametrize("args", [
    ["experience", "add", "T", "--outcome", '{"score": NaN}'],
    ["experience", "add", "T", "--outcome", '{"success": "yes"}'],
    ["experience", "add", "T", "--episode", "-1"],
    ["recall", ""],
    ["recall", "x", "--filter", "x<<13"],
    ["recall", "x", "--filter", "x<abc"],
    ["recall", "x", "--as-of", "2024-13-01"],
])
def test_invalid_input_is_exit_2_in_every_command(args: list[str]) -> None:
    assert gm("init").exit_code == 0
    invalid(gm(*args))


def test_experience_episode_must_not_be_negative(mem: GraphMemory) -> None:
    for episode in (-1, "-3"):
        with pytest.raises(InputError, match="0 or more"):
            mem.add_experience("grasp", episode=episode)
    assert mem.add_experience("grasp", episode="warm-up").status == "extracted"


def test_filters_with_a_number_a_date_or_quoted_text_work() -> None:
    gm("ingest", "-", input="I live in Paris.\n")
    for good in ('x<13', 'x<"abc"', "x>=2024-05-01"):
        assert gm("recall", "Paris", "--filter", good).exit_code == 0, good


# ------------------------------------------------------------------ forget --group
def test_forget_group_under_another_global_group_is_refused() -> None:
    for group in ("a", "b"):
        gm("--group", group, "ingest", "-", input=f"I live in {group.upper()}ville.\n")
    out = invalid(CliRunner().invoke(
        cli, ["--store", "m.db", "--group", "a", "forget", "--group", "b", "--yes"]))
    assert "'b'" in out and "'a'" in out
    assert "Bville" in gm("--group", "b", "facts").output  # nothing forgotten
    same = CliRunner().invoke(
        cli, ["--store", "m.db", "--group", "b", "forget", "--group", "b", "--yes"])
    assert same.exit_code == 0, same.output
    assert gm("forget", "--group", "a", "--yes").exit_code == 0  # alone: as before


# ------------------------------------------------------------------ silent acceptances
@pytest.mark.parametrize("per", ["file", "paragraph"])
def test_per_file_or_paragraph_on_json_input_is_reported(tmp_path: Path, per: str) -> None:
    (tmp_path / "e.jsonl").write_text(json.dumps({"content": "I live in Rome."}) + "\n")
    assert f"--per {per} does not apply to jsonl" in invalid(gm("ingest", "--per", per,
                                                                "e.jsonl"))
    (tmp_path / "c.json").write_text(json.dumps([{"role": "user", "content": "Hi"}]))
    parsed = parse_paths([tmp_path / "c.json"], per=per)
    assert parsed.problems and "does not apply to chat" in parsed.problems[0].reason


def test_hidden_files_are_listed_as_skipped(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    (notes / ".git").mkdir(parents=True)
    (notes / ".git" / "config.txt").write_text("x")
    (notes / ".draft.txt").write_text("I live in Rome.")
    (notes / "a.txt").write_text("I live in Oslo.")
    result = gm("ingest", "notes")
    assert result.exit_code == 0, result.output
    skipped = [line for line in result.output.splitlines() if line.startswith("skipped:")]
    assert any("notes/.draft.txt: hidden" in line for line in skipped)
    assert any("notes/.git: hidden" in line for line in skipped)
    assert parse_paths([notes]).skipped == [str(notes / ".draft.txt"), str(notes / ".git")]


def test_implausible_reference_times_are_warned_about(tmp_path: Path, mem: GraphMemory) -> None:
    lines = [{"content": "I live in Rome.", "reference_time": "0001-01-01T00:00:00Z"},
             {"content": "I live in Oslo.", "reference_time": "9999-01-01T00:00:00Z"},
             {"content": "I live in Bern.", "reference_time": "2024-01-01T00:00:00Z"}]
    (tmp_path / "e.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    out = gm("ingest", "e.jsonl").output
    warned = [line for line in out.splitlines() if line.startswith("warning:")]
    assert len(warned) == 2
    assert "e.jsonl:1: reference_time 0001-01-01" in warned[0] and "before 1900" in warned[0]
    assert "e.jsonl:2:" in warned[1] and "more than a year ahead" in warned[1]
    result = mem.add_episode("I live in Rome.", reference_time="0001-01-01")  # type: ignore[arg-type]
    assert any("before 1900" in w for w in result.warnings)
