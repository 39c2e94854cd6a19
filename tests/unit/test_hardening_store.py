"""Issue 14 (hardening), forget: the forgotten text leaves the SQLite file (full-text index
pages and WAL included), and ``forget(entity=...)`` says what it does with the entity's own
episodes and removes them on request (both stores).
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from graphmem import GraphMemory, HashEmbedder, InputError
from graphmem.cli import cli
from graphmem.store.sqlite import store as sqlite_store

MARKER = "zorblaxquint"  # a word that appears nowhere else
BASE = datetime(2024, 1, 1, tzinfo=UTC)


def _at(day: int) -> datetime:
    return BASE.replace(day=day)


def _raw_hits(db: Path, word: str = MARKER) -> dict[str, int]:
    """How often ``word`` (any case) occurs in the bytes of the database and its -wal."""
    hits: dict[str, int] = {}
    for path in (db, Path(f"{db}-wal")):
        if path.exists():
            hits[path.name] = path.read_bytes().lower().count(word.encode())
    return hits


# ------------------------------------------------------------------ 1. text leaves the file
@pytest.fixture
def marked(tmp_path: Path) -> Iterator[tuple[GraphMemory, Path, str]]:
    """A store of some chatter, one episode holding MARKER (as a word, an entity name and in
    a fact's statement) and one that must survive."""
    db = tmp_path / "memory.db"
    mem = GraphMemory(db, embedder=HashEmbedder(64))
    mem.connect()
    mem.add_episodes(
        [
            {"content": f"Filler turn {i}: I went hiking with Ana.", "source": "chat",
             "metadata": {"speaker": "Bob"}, "reference_time": _at(1)}
            for i in range(40)
        ]
    )
    secret = mem.add_episode(
        f"My friend {MARKER.capitalize()} moved to Lisbon; {MARKER} likes it there.",
        metadata={"speaker": "Maya"}, reference_time=_at(2), source="chat",
    )
    mem.add_episode("I live in Porto.", metadata={"speaker": "Maya"}, reference_time=_at(3),
                    source="chat")
    assert sum(_raw_hits(db).values()) > 0
    yield mem, db, secret.episode_id
    mem.close()


def _assert_gone(db: Path) -> None:
    assert sum(_raw_hits(db).values()) == 0, _raw_hits(db)


def test_forgotten_episode_leaves_no_byte_in_the_file(
    marked: tuple[GraphMemory, Path, str],
) -> None:
    mem, db, secret = marked
    reader = sqlite3.connect(db)  # another connection, idle: the WAL must still be truncated
    try:
        assert reader.execute("SELECT count(*) FROM episodes").fetchone()[0] == 42
        mem.forget(episode_id=secret)
        _assert_gone(db)  # while the store is open (database and WAL)
        wal = Path(f"{db}-wal")
        assert not wal.exists() or wal.stat().st_size == 0
    finally:
        reader.close()
    assert [f.statement for f in mem.facts()] == ["Maya lives in Porto."]
    assert "I live in Porto." in [e.content for e in mem.recall("Where does Maya live?").episodes]
    assert mem.recall(MARKER).episodes == []
    mem.close()
    _assert_gone(db)  # and after the last close
    with sqlite3.connect(db) as conn:  # the indexes are still whole
        for table in ("facts_fts", "entities_fts", "episodes_fts"):
            conn.execute(f"INSERT INTO {table}({table}) VALUES ('integrity-check')")
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_a_reader_holding_a_snapshot_delays_the_wal_truncation(
    marked: tuple[GraphMemory, Path, str],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The forget still succeeds (after a bounded wait) and says what it left; the last
    close copies the WAL over, and the file holds nothing of it."""
    mem, db, secret = marked
    monkeypatch.setattr(sqlite_store, "_CHECKPOINT_WAIT_MS", 100)
    reader = sqlite3.connect(db, isolation_level=None)
    reader.execute("BEGIN")
    assert reader.execute("SELECT count(*) FROM episodes").fetchone()[0] == 42
    with caplog.at_level(logging.WARNING, logger="graphmem"):
        mem.forget(episode_id=secret)
    assert "still holds the deleted rows' old pages in its WAL" in caplog.text
    assert reader.execute("SELECT count(*) FROM episodes").fetchone()[0] == 42  # its snapshot
    reader.execute("COMMIT")
    reader.close()
    mem.close()
    _assert_gone(db)


def test_forgotten_entity_and_group_leave_no_byte_in_the_file(
    marked: tuple[GraphMemory, Path, str],
) -> None:
    mem, db, _ = marked
    mem.forget(entity=MARKER, episodes=True)
    _assert_gone(db)
    mem.add_episode(f"{MARKER.capitalize()} is back in town.", group_id="other",
                    metadata={"speaker": "Maya"})
    assert sum(_raw_hits(db).values()) > 0
    mem.forget(group_id="other", all=True)
    _assert_gone(db)
    mem.close()
    _assert_gone(db)


def test_forgetting_a_bare_episode_drops_its_cached_vector(tmp_path: Path) -> None:
    """An episode with no fact and no entity: its vector left the in-process cache too."""
    mem = GraphMemory(tmp_path / "m.db", embedder=HashEmbedder(64))
    with mem:
        mem.add_episode("I live in Lisbon.", metadata={"speaker": "Maya"})
        bare = mem.add_episode("okay sounds good", metadata={"speaker": "Maya"})
        vector = mem.embedder.embed(["okay sounds good"])[0]
        store = mem.store
        assert bare.episode_id in dict(store.vector_episodes("default", vector, 5))
        mem.forget(episode_id=bare.episode_id)
        assert bare.episode_id not in dict(store.vector_episodes("default", vector, 5))


# ------------------------------------------------------------------ 2. an entity's own episodes
TURNS = [
    ("Maya", "I live in Brackenfold."),
    ("Horatio", "I live in Brackenfold too."),  # his own
    ("Maya", "Horatio likes chess."),  # a fact about him
    ("Maya", "I saw Horatio at the market."),  # only a mention: not his own
    ("Horatio", "I prefer tea."),  # his own
    ("Maya", "I like coffee."),
]


def _converse(mem: GraphMemory) -> dict[str, str]:
    ids: dict[str, str] = {}
    for day, (speaker, text) in enumerate(TURNS, start=1):
        result = mem.add_episode(text, metadata={"speaker": speaker}, reference_time=_at(day),
                                 source="chat")
        ids[text] = result.episode_id
    return ids


def _episode_texts(mem: GraphMemory) -> set[str]:
    return {r["content"] for r in mem.export() if r["type"] == "episode"}


def test_forget_entity_says_how_many_own_episodes_it_kept(memory: GraphMemory) -> None:
    ids = _converse(memory)
    result = memory.forget(entity="Horatio")
    assert result.own_episodes_kept == 3 and result.episodes_removed == 0
    assert set(result.own_episode_ids_kept) == {
        ids["I live in Brackenfold too."], ids["Horatio likes chess."], ids["I prefer tea."]
    }
    assert result.facts_removed == 3
    assert _episode_texts(memory) == {text for _, text in TURNS}
    assert sorted(f.statement for f in memory.facts()) == [
        "Maya likes coffee.", "Maya lives in Brackenfold."
    ]
    # What he said is still recalled, with him as the speaker: the result said so.
    recalled = memory.recall("Who lives in Brackenfold?")
    assert "I live in Brackenfold too." in [e.content for e in recalled.episodes]
    # Forgetting by his name now: the episodes he spoke (the entity itself is gone).
    later = memory.forget(entity="Horatio", episodes=True)
    assert later.episodes_removed == 2 and later.facts_removed == 0
    assert "Horatio likes chess." in _episode_texts(memory)
    with pytest.raises(InputError, match="no episode it spoke"):
        memory.forget(entity="Horatio", episodes=True)


def test_forget_entity_with_episodes_removes_what_he_said(memory: GraphMemory) -> None:
    _converse(memory)
    result = memory.forget(entity="Horatio", episodes=True)
    assert result.own_episodes_kept == 0
    assert result.episodes_removed == 3 and result.facts_removed == 3
    assert _episode_texts(memory) == {
        "I live in Brackenfold.", "I saw Horatio at the market.", "I like coffee."
    }
    recalled = memory.recall("Who lives in Brackenfold?")
    assert "I live in Brackenfold too." not in [e.content for e in recalled.episodes]
    assert {e.metadata.get("speaker") for e in recalled.episodes} <= {"Maya"}
    assert sorted(f.statement for f in memory.facts()) == [
        "Maya likes coffee.", "Maya lives in Brackenfold."
    ]
    audit = [r for r in memory.export() if r["type"] == "audit"]
    if audit:  # the export carries the audit log on stores that export it
        assert audit[-1]["action"] == "forget_entity"


def test_forget_entity_with_episodes_keeps_shared_facts(memory: GraphMemory) -> None:
    """A fact his episode supports beside another episode stays, with the other provenance."""
    memory.add_episode("Horatio lives in Brackenfold.", metadata={"speaker": "Maya"},
                       reference_time=_at(1), source="chat")
    memory.add_episode("I live in Brackenfold and I like tea.", metadata={"speaker": "Horatio"},
                       reference_time=_at(2), source="chat")
    memory.add_episode("Maya likes tea.", metadata={"speaker": "Ana"}, reference_time=_at(3),
                       source="chat")
    result = memory.forget(entity="Horatio", episodes=True)
    assert result.episodes_removed == 2
    assert [f.statement for f in memory.facts()] == ["Maya likes tea."]
    assert _episode_texts(memory) == {"Maya likes tea."}


def test_forget_episodes_flag_needs_an_entity(memory: GraphMemory) -> None:
    ids = _converse(memory)
    with pytest.raises(InputError, match="entity"):
        memory.forget(episode_id=ids["I like coffee."], episodes=True)
    with pytest.raises(InputError, match="True or False"):
        memory.forget(entity="Horatio", episodes="yes")  # type: ignore[arg-type]


def test_cli_forget_entity_reports_and_removes_own_episodes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GRAPHMEM_STORE", raising=False)
    monkeypatch.delenv("GRAPHMEM_EMBEDDER", raising=False)
    db = tmp_path / "m.db"
    with GraphMemory(db) as mem:
        ids = _converse(mem)
    url = f"sqlite:///{db}"
    run = CliRunner()
    kept = run.invoke(cli, ["--store", url, "forget", "--entity", "Horatio", "--yes"])
    assert kept.exit_code == 0, kept.output
    assert "kept 3 episode(s)" in kept.stdout and "--with-episodes" in kept.stdout
    assert ids["I live in Brackenfold too."] in kept.stdout
    assert ids["Horatio likes chess."] in kept.stdout
    # The entity is gone; the episodes he spoke can still be forgotten by his name.
    removed = run.invoke(
        cli, ["--store", url, "forget", "--entity", "Horatio", "--with-episodes", "--yes",
              "--json"]
    )
    assert removed.exit_code == 0, removed.output
    data = json.loads(removed.stdout)
    assert data["episodes_removed"] == 2 and data["own_episodes_kept"] == 0
    with GraphMemory(db) as mem:
        assert "I live in Brackenfold too." not in _episode_texts(mem)
        assert "Horatio likes chess." in _episode_texts(mem)
    again = run.invoke(
        cli, ["--store", url, "forget", "--entity", "Horatio", "--with-episodes", "--yes"]
    )
    assert again.exit_code == 1 and "no episode it spoke" in again.stderr
    wrong = run.invoke(cli, ["--store", url, "forget", "--all-group", "--with-episodes",
                             "--yes"])
    assert wrong.exit_code == 2 and "--with-episodes goes with --entity" in wrong.stderr
