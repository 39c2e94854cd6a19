"""Issue 14, import: an export file is checked the way ingest checks its input (times, types,
references, one group), all or nothing, with errors naming the row (its line) and the field."""

from __future__ import annotations

import base64
import copy
import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from graphmem import GraphMemory, HashEmbedder, InputError
from graphmem.cli import cli

ENV_VARS = ("GRAPHMEM_STORE", "GRAPHMEM_GROUP", "GRAPHMEM_EMBEDDER", "GRAPHMEM_LLM_MODEL",
            "GRAPHMEM_LLM_BASE_URL")
Row = dict[str, Any]


def t(year: int, month: int = 1, day: int = 1) -> datetime:
    return datetime(year, month, day, tzinfo=UTC)


@pytest.fixture(autouse=True)
def _env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ENV_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def rows(tmp_path: Path) -> list[Row]:
    """An export with supersession (a link), a literal, an ending, and two groups."""
    with GraphMemory(tmp_path / "src.db", embedder=HashEmbedder(32)) as mem:
        mem.add_fact("Ana", "lives_in", "Lisbon", valid_from=t(2023, 11, 2), source="chat")
        mem.add_fact("Ana", "lives_in", "Porto", valid_from=t(2024, 3), source="chat")
        mem.add_fact("Ana", "email", value="ana@example.com", valid_from=t(2024, 2))
        mem.add_fact("Bob", "works_at", "Atlas", valid_from=t(2020))
        mem.add_fact("Bob", "works_at", "Atlas", valid_from=t(2021), negated=True)
        mem.add_fact("Cy", "lives_in", "Faro", group_id="other", valid_from=t(2022))
        return list(mem.export())


def fresh(tmp_path: Path, name: str = "dst.db") -> GraphMemory:
    return GraphMemory(tmp_path / name, embedder=HashEmbedder(32))


def first(rows: list[Row], kind: str, **match: Any) -> Row:
    return next(
        r for r in rows if r["type"] == kind and all(r.get(k) == v for k, v in match.items())
    )


def empty(mem: GraphMemory) -> bool:
    stats = mem.stats()
    return stats["episodes"] == 0 and stats["facts"] == 0 and stats["entities"] == 0


# ------------------------------------------------------------------------------- the case
def invoke(store: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--store", str(store), *args])


def test_cli_refuses_valid_to_before_valid_from_naming_the_line(
    tmp_path: Path, rows: list[Row]
) -> None:
    """Was: imported, and `facts --history` showed `2023-11-02 → 1999-01-01`."""
    source = tmp_path / "src.db"
    assert invoke(source, "export", "-o", "dump.jsonl").exit_code == 0
    lines = (tmp_path / "dump.jsonl").read_text(encoding="utf-8").splitlines()
    number = next(i for i, line in enumerate(lines, start=1)
                  if '"type": "fact"' in line and '"Ana lives in Lisbon."' in line)
    fact = json.loads(lines[number - 1])
    fact["valid_to"] = "1999-01-01T00:00:00.000Z"
    lines[number - 1] = json.dumps(fact)
    lines.insert(1, "")  # a blank line: the numbers stay the file's lines
    (tmp_path / "dump.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")

    result = invoke(tmp_path / "dst.db", "import", "dump.jsonl")
    assert result.exit_code == 2, result.output  # invalid input
    assert result.stderr.strip() == (
        f"Error: dump.jsonl: row {number + 1} (type fact, id {fact['id']}): valid_to "
        "1999-01-01T00:00:00.000Z is before valid_from 2023-11-02T00:00:00.000Z; "
        "nothing was imported"
    )
    stats = json.loads(invoke(tmp_path / "dst.db", "stats", "--json").stdout)
    assert stats["episodes"] == 0 and stats["facts"] == 0
    assert "1999" not in invoke(tmp_path / "dst.db", "facts", "--history").stdout


def test_valid_exports_still_import_losslessly(tmp_path: Path, rows: list[Row]) -> None:
    with fresh(tmp_path) as mem:
        counts = mem.import_rows(rows)
        assert counts["facts"] == sum(r["type"] == "fact" for r in rows)
        assert list(mem.export()) == rows
        assert mem.import_rows(iter(rows)) == {"episodes": 0, "entities": 0, "facts": 0,
                                               "links": 0}


def test_an_iterator_of_rows_imports_whole(tmp_path: Path, rows: list[Row]) -> None:
    """Was: the store read the iterator twice, so the episodes of ``import_rows(mem.export())``
    were lost."""
    with fresh(tmp_path) as mem:
        mem.import_rows(iter(rows))
        assert list(mem.export()) == rows


# ------------------------------------------------------------------------------- one bad row
Edit = Callable[[list[Row]], None]


def _set(kind: str, field: str, value: Any, **match: Any) -> Edit:
    def edit(rows: list[Row]) -> None:
        first(rows, kind, **match)[field] = value

    return edit


def _drop(kind: str, **match: Any) -> Edit:
    def edit(rows: list[Row]) -> None:
        rows.remove(first(rows, kind, **match))

    return edit


def _duplicate_fact(rows: list[Row]) -> None:
    fact = first(rows, "fact")
    rows.append(copy.deepcopy(fact))


def _cross_group_object(rows: list[Row]) -> None:
    faro = first(rows, "entity", name="Faro")  # in group "other"
    first(rows, "fact", statement="Ana lives in Porto.")["object_id"] = faro["id"]


def _cross_group_link(rows: list[Row]) -> None:
    cy = first(rows, "fact", group_id="other")
    first(rows, "link")["dst"] = cy["id"]


def _claim_end_before_start(rows: list[Row]) -> None:
    claim = first(rows, "provenance")["claim"]
    claim["valid_to"] = claim["valid_from"] - 1


def _short_embedding(rows: list[Row]) -> None:
    first(rows, "fact")["embedding"] = base64.b64encode(b"\0" * 16).decode()


CASES: list[tuple[str, Edit, str]] = [
    ("valid_to equal", lambda rows: first(rows, "fact").update(
        valid_to=first(rows, "fact")["valid_from"]),
     r"\): valid_to .* is the same time as valid_from"),
    ("valid_from not a time", _set("fact", "valid_from", "last spring"),
     r"valid_from: 'last spring' is not a date"),
    ("naive time", _set("fact", "valid_from", "2024-01-01T10:00:00"),
     r"valid_from: .* has no timezone"),
    ("time as a number", _set("fact", "recorded_at", 1700000000000),
     r"recorded_at: expected an ISO-8601 time string, got int"),
    ("missing field", _set("fact", "statement", None), r"statement: missing"),
    ("group_id not text", _set("entity", "group_id", 7), r"group_id: expected a string, got int"),
    ("confidence", _set("fact", "confidence", 2), r"confidence: expected a number from 0 to 1"),
    ("value a list", _set("fact", "value", [1, 2], predicate="email"),
     r"value: expected a string, number or boolean, got list"),
    ("object and value", _set("fact", "value", "x", predicate="works_at"),
     r"object_id: a fact has either an object_id \(an entity\) or a value"),
    ("predicate", _set("fact", "predicate", "Lives In"), r"predicate: .* not a snake_case"),
    ("episode kind", _set("episode", "kind", "chat"), r"kind: expected one of message, text"),
    ("episode status", _set("episode", "status", "done"), r"status: expected one of pending"),
    ("metadata", _set("episode", "metadata", ["a"]), r"metadata: expected an object, got list"),
    ("link kind", _set("link", "kind", "REPLACES"), r"kind: expected one of SUPERSEDES"),
    ("unknown field", _set("fact", "colour", "red"), r"fields: unknown field\(s\) \['colour'\]"),
    ("embedding dimension", _short_embedding,
     r"embedding: 4 dimensions, but the store's embedder has 32"),
    ("embedding not base64", _set("entity", "embedding", "%%%"), r"embedding: not base64"),
    ("claim end", _claim_end_before_start,
     r"\): claim.valid_to \d{4}-.* is before claim.valid_from"),
    ("claim kind", lambda rows: first(rows, "provenance")["claim"].update(kind="maybe"),
     r"claim.kind: expected one of assert"),
    ("ending without claim", _set("ending", "claim", None), r"claim: missing"),
    ("duplicate id", _duplicate_fact, r"id: also on row 1?\d"),
    ("subject missing", _drop("entity", name="Ana"),
     r"subject_id: entity ent_\w+ is neither in the rows nor in the store \(group default\)"),
    ("object in another group", _cross_group_object,
     r"object_id: entity ent_\w+ is in group other, not default"),
    ("provenance episode missing", _set("provenance", "episode_id", "ep_nope"),
     r"\(type provenance, fact fact_\w+, episode ep_nope\): episode_id: episode ep_nope is "
     r"neither"),
    ("link to a missing fact", _set("link", "src", "fact_nope"), r"src: fact fact_nope is neither"),
    ("link across groups", _cross_group_link, r"dst: fact fact_\w+ is in group other, not default"),
    ("link to itself", lambda rows: first(rows, "link").update(dst=first(rows, "link")["src"]),
     r"dst: a fact cannot be linked to itself"),
    ("mention of a missing entity", _set("mention", "entity_id", "ent_nope"),
     r"\(type mention, episode ep_\w+, entity ent_nope\): entity_id: entity ent_nope is neither"),
    ("unknown type", lambda rows: rows.append({"type": "table"}),
     r"\(type 'table'\): type: expected one of episode, entity"),
    ("not an object", lambda rows: rows.append(["x"]),  # type: ignore[arg-type]
     r"\(list\): expected an export row \(an object\), got list"),
]


@pytest.mark.parametrize(("edit", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_one_bad_row_is_named_and_nothing_is_written(
    tmp_path: Path, rows: list[Row], edit: Edit, message: str
) -> None:
    edit(rows)
    with fresh(tmp_path) as mem:
        with pytest.raises(InputError, match=r"^row \d+ .*" + message) as caught:
            mem.import_rows(rows)
        assert str(caught.value).endswith("nothing was imported")
        assert empty(mem)


def test_row_numbers_are_positions_or_the_given_lines(tmp_path: Path, rows: list[Row]) -> None:
    index = next(i for i, r in enumerate(rows) if r["type"] == "fact")
    rows[index]["valid_to"] = "1999-01-01T00:00:00Z"
    with fresh(tmp_path) as mem:
        with pytest.raises(InputError, match=rf"^row {index + 1} \(type fact, id "):
            mem.import_rows(rows)
        lines = [n * 10 for n in range(len(rows))]
        with pytest.raises(InputError, match=rf"^dump.jsonl: row {index * 10} \(type fact"):
            mem.import_rows(rows, lines=lines, source="dump.jsonl")
        assert empty(mem)


def test_every_bad_row_is_counted(tmp_path: Path, rows: list[Row]) -> None:
    for r in rows:
        if r["type"] == "fact":
            r["confidence"] = -1
        elif r["type"] == "episode":
            r["status"] = "done"
    bad = sum(r["type"] in ("fact", "episode") for r in rows)
    with fresh(tmp_path) as mem, pytest.raises(InputError) as caught:
        mem.import_rows(rows)
    text = str(caught.value)
    assert text.count("status: expected") == 5  # the first five, in row order
    assert f"and {bad - 5} more invalid row(s); nothing was imported" in text
    assert "neither" not in text  # what refers to a bad row is not reported as well


# ------------------------------------------------------------------------------- references
def test_references_may_be_in_the_store(tmp_path: Path, rows: list[Row]) -> None:
    """A file holding facts whose entities (or episodes) the store already has imports."""
    entities = [r for r in rows if r["type"] == "entity"]
    episodes = [r for r in rows if r["type"] == "episode"]
    rest = [r for r in rows if r["type"] not in ("entity", "episode")]
    with fresh(tmp_path) as mem:
        mem.import_rows(entities + episodes)
        mem.import_rows(rest)
        assert list(mem.export()) == rows


def test_a_store_entity_of_another_group_does_not_count(tmp_path: Path, rows: list[Row]) -> None:
    faro = first(rows, "entity", name="Faro")
    with fresh(tmp_path) as mem:
        mem.import_rows([faro])
        fact = copy.deepcopy(first(rows, "fact", statement="Ana lives in Porto."))
        fact["object_id"] = faro["id"]
        ana = first(rows, "entity", name="Ana")
        with pytest.raises(InputError, match=r"object_id: entity .* neither in the rows nor in "
                                              r"the store \(group default\)"):
            mem.import_rows([ana, fact])
        assert mem.stats()["entities"] == 1


def test_store_references_on_every_store(memory: GraphMemory, tmp_path: Path) -> None:
    """The reference checks read the store through the GraphStore protocol (SQLite and Bolt):
    what is there counts, in its group only; a bad file writes nothing."""
    with GraphMemory(tmp_path / "src64.db", embedder=HashEmbedder(64)) as src:
        src.add_fact("Ana", "lives_in", "Lisbon", valid_from=t(2023))
        src.add_fact("Ana", "lives_in", "Porto", valid_from=t(2024))
        src.add_fact("Cy", "lives_in", "Faro", group_id="other", valid_from=t(2022))
        rows = list(src.export())
    parents = [r for r in rows if r["type"] in ("entity", "episode")]
    rest = [r for r in rows if r["type"] not in ("entity", "episode")]
    memory.import_rows(parents)
    bad = copy.deepcopy(rest)
    first(bad, "provenance")["episode_id"] = "ep_nope"
    with pytest.raises(InputError, match=r"episode_id: episode ep_nope is neither in the rows"):
        memory.import_rows(bad)
    assert memory.stats()["facts"] == 0
    memory.import_rows(rest)  # the entities and episodes they name are in the store
    assert list(memory.export()) == rows
    cy = first(rows, "fact", group_id="other")
    link = copy.deepcopy(first(rows, "link"))
    link["dst"] = cy["id"]
    with pytest.raises(InputError, match=r"dst: fact fact_\w+ is in group other, not default"):
        memory.import_rows([link])
    assert list(memory.export()) == rows


def test_odd_but_stored_text_still_round_trips(tmp_path: Path) -> None:
    """The checks refuse what a store cannot hold or a reader would misread, not what ingest
    stores: NUL and control characters in record values, a blank statement."""
    with GraphMemory(tmp_path / "odd.db", embedder=HashEmbedder(32)) as src:
        src.add_episode(json.dumps({"id": "x", "note": "a\u0000b", "bell": "ring\x07"}),
                        kind="json")
        src.add_fact("Ana", "likes", "tea", statement="   ")
        src.add_fact("!!!", "likes", "\U0001F916", valid_from=t(2024), valid_to=t(2025))
        rows = list(src.export())
    with fresh(tmp_path) as mem:
        mem.import_rows(rows)
        assert list(mem.export()) == rows
