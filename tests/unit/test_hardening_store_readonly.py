"""Issue 14 (hardening): a SQLite store that cannot be written opens read-only.

Explicitly (``sqlite:///memory.db?mode=ro``, ``?immutable=1``, or a plain ``memory.db?mode=ro``)
or by itself when this process cannot write the file or its directory (tests run as root,
where chmod does not stop a write, so that detection is tested with a patched ``os.access``,
and with a real chmod only when not root). Reads work; writes and migrations raise a clear
``StoreError`` / ``SchemaError``; the file is not changed.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from graphmem import ConfigError, GraphMemory, HashEmbedder, SchemaError, StoreError
from graphmem.cli import cli
from graphmem.store import SQLiteStore, open_store


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def store_file(tmp_path: Path) -> Path:
    """A closed store (no -wal, no -shm) holding one fact."""
    db = tmp_path / "memory.db"
    with GraphMemory(db, embedder=HashEmbedder(64)) as mem:
        mem.add_episode("I live in Lisbon.", metadata={"speaker": "Maya"})
    assert not Path(f"{db}-wal").exists()
    return db


def _reads_work(mem: GraphMemory) -> None:
    assert [f.statement for f in mem.facts()] == ["Maya lives in Lisbon."]
    recalled = mem.recall("Where does Maya live?")
    assert [f.statement for f in recalled.facts] == ["Maya lives in Lisbon."]
    assert mem.stats()["episodes"] == 1
    assert any(r["type"] == "fact" for r in mem.export())
    assert mem.history("Maya")


def _writes_fail(mem: GraphMemory, needs: str) -> None:
    for write in (
        lambda: mem.add_episode("I moved to Porto.", metadata={"speaker": "Maya"}),
        lambda: mem.add_fact("Maya", "likes", "tea"),
        lambda: mem.forget(entity="Maya"),
        lambda: mem.forget(all=True),
    ):
        with pytest.raises(StoreError, match="is read-only: reads work, writes need") as info:
            write()
        assert needs in str(info.value)


@pytest.mark.parametrize(
    "form", ["sqlite:///{db}?mode=ro", "{db}?mode=ro", "sqlite:///{db}?immutable=1"]
)
def test_explicit_read_only_url(store_file: Path, form: str) -> None:
    before = _digest(store_file)
    mem = GraphMemory(form.format(db=store_file))
    with mem:
        assert isinstance(mem.store, SQLiteStore) and mem.store.read_only
        assert mem.store.path == str(store_file)
        _reads_work(mem)
        _writes_fail(mem, "without ?mode=ro")
    assert _digest(store_file) == before
    with GraphMemory(store_file) as writable:  # the same file, opened normally, still writes
        writable.add_episode("I moved to Porto.", metadata={"speaker": "Maya"})


def test_store_url_options() -> None:
    ro = open_store("sqlite:////data/m.db?mode=ro")
    assert isinstance(ro, SQLiteStore) and ro.read_only and not ro.immutable
    assert ro.path == "/data/m.db"
    frozen = open_store("m.db?immutable=1")
    assert isinstance(frozen, SQLiteStore) and frozen.read_only and frozen.immutable
    plain = open_store("sqlite:///m.db?mode=rw")
    assert isinstance(plain, SQLiteStore) and not plain.read_only and plain.path == "m.db"
    odd = open_store("sqlite:///what?.db")  # a '?' that is not an option: part of the name
    assert isinstance(odd, SQLiteStore) and odd.path == "what?.db"
    with pytest.raises(ConfigError, match="mode=rox is not an option"):
        open_store("sqlite:///m.db?mode=rox")


def _unwritable(monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
    """os.access says this process cannot write ``path`` (root ignores chmod)."""
    real_access = os.access

    def access(target: object, mode: int, **kw: object) -> bool:
        if mode & os.W_OK and Path(str(target)) == path:
            return False
        return real_access(target, mode)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "access", access)


def test_auto_read_only_when_the_file_is_not_writable(
    store_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nobody has the store open: it is read as it is (immutable), and no -wal or -shm file
    is made, which would be this process's and block the owner's next write."""
    _unwritable(monkeypatch, store_file)
    before = _digest(store_file)
    with GraphMemory(store_file) as mem:
        assert mem.store.read_only and mem.store.immutable  # type: ignore[attr-defined]
        _reads_work(mem)
        _writes_fail(mem, f"write access to {store_file}")
    assert _digest(store_file) == before
    assert sorted(p.name for p in store_file.parent.iterdir()) == ["memory.db"]


def test_auto_read_only_beside_a_writer_sees_its_writes(
    store_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the owner's connection open (its -shm exists): mode=ro, and new writes show."""
    with GraphMemory(store_file) as owner:
        owner.facts()  # its connection holds the -wal and -shm files
        _unwritable(monkeypatch, store_file)
        with GraphMemory(store_file) as mem:
            assert mem.store.read_only and not mem.store.immutable  # type: ignore[attr-defined]
            _reads_work(mem)
            owner.add_episode("I like tea.", metadata={"speaker": "Maya"})
            assert "Maya likes tea." in [f.statement for f in mem.facts()]
            _writes_fail(mem, f"write access to {store_file}")


def test_auto_immutable_when_the_directory_is_not_writable(
    store_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No -shm can be made and there is no -wal: opened immutable (read-only media)."""
    directory = store_file.parent
    _unwritable(monkeypatch, directory)
    with GraphMemory(store_file) as mem:
        store = mem.store
        assert store.read_only and store.immutable  # type: ignore[attr-defined]
        _reads_work(mem)
        _writes_fail(mem, f"write access to its directory {directory}")
    assert sorted(p.name for p in directory.iterdir()) == ["memory.db"]  # no -wal, no -shm


def test_read_only_store_that_needs_a_migration(store_file: Path) -> None:
    from graphmem.store.sqlite.schema import MIGRATIONS

    newest = max(version for version, _, _ in MIGRATIONS)
    with sqlite3.connect(store_file) as conn:
        conn.execute("DELETE FROM graphmem_migrations WHERE version = ?", (newest,))
    conn.close()
    with pytest.raises(SchemaError, match=rf"needs migrations \[{newest}\] but is read-only"):
        GraphMemory(f"sqlite:///{store_file}?mode=ro").connect()
    with sqlite3.connect(store_file) as conn:  # nothing was migrated
        found = conn.execute("SELECT max(version) FROM graphmem_migrations").fetchone()
        assert found == (newest - 1,)
    conn.close()


def test_read_only_store_that_does_not_exist(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="read-only: it does not exist"):
        GraphMemory(f"sqlite:///{tmp_path}/none.db?mode=ro").connect()
    assert not (tmp_path / "none.db").exists()


def test_cannot_open_says_so_not_that_it_is_not_a_store(tmp_path: Path) -> None:
    """A path SQLite cannot open (here: a directory) is not called 'not a graphmem store'."""
    folder = tmp_path / "folder.db"
    folder.mkdir()
    with pytest.raises(StoreError, match="cannot open the store") as info:
        GraphMemory(folder).connect()
    assert "not a graphmem store" not in str(info.value)


def test_cli_reads_a_read_only_store_and_refuses_to_write(
    store_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for var in ("GRAPHMEM_STORE", "GRAPHMEM_EMBEDDER", "GRAPHMEM_GROUP"):
        monkeypatch.delenv(var, raising=False)
    url = f"sqlite:///{store_file}?mode=ro"
    run = CliRunner()
    recalled = run.invoke(cli, ["--store", url, "recall", "Where does Maya live?"])
    assert recalled.exit_code == 0, recalled.output
    assert "Lisbon" in recalled.stdout
    refused = run.invoke(cli, ["--store", url, "forget", "--entity", "Maya", "--yes"])
    assert refused.exit_code == 1
    assert "is read-only: reads work" in refused.stderr and "Traceback" not in refused.stderr


@pytest.fixture
def locked_dir(store_file: Path) -> Iterator[Path]:
    directory = store_file.parent
    store_file.chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    directory.chmod(stat.S_IRUSR | stat.S_IXUSR)
    yield directory
    directory.chmod(stat.S_IRWXU)
    store_file.chmod(stat.S_IRUSR | stat.S_IWUSR)


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() == 0,
    reason="root writes whatever the mode bits say: chmod cannot make a file read-only",
)
def test_real_read_only_directory(store_file: Path, locked_dir: Path) -> None:
    with GraphMemory(store_file) as mem:
        _reads_work(mem)
        _writes_fail(mem, "write access to")
