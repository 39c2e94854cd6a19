"""Issue 14, configuration: bad settings and embedder choices are ``ConfigError`` /
``EmbeddingMismatchError`` naming the setting (or variable), what it accepts and the fix."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from graphmem import (
    ConfigError,
    EmbeddingMismatchError,
    GraphMemory,
    HashEmbedder,
    OpenAIEmbedder,
    Settings,
)
from graphmem.cli import cli

ENV_VARS = ("GRAPHMEM_STORE", "GRAPHMEM_GROUP", "GRAPHMEM_EMBEDDER", "GRAPHMEM_LLM_MODEL",
            "GRAPHMEM_LLM_BASE_URL", "GRAPHMEM_LLM_RPM", "GRAPHMEM_LLM_TPM",
            "GRAPHMEM_EMBEDDING_MODEL")


@pytest.fixture(autouse=True)
def _env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ENV_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def hash64(tmp_path: Path) -> Path:
    """A store built with the 64-dimension hashed n-grams, holding one fact."""
    path = tmp_path / "m.db"
    with GraphMemory(path, embedder=HashEmbedder(64)) as mem:
        mem.add_fact("Alice", "lives_in", "Paris")
    return path


def recorded(path: Path) -> dict[str, Any]:
    mem = GraphMemory(path, embedder=HashEmbedder(8))
    mem.store.connect()
    try:
        return dict(json.loads(mem.store.get_meta("embedder") or "{}"))
    finally:
        mem.store.close()


# ------------------------------------------------------------------------------- embedder=
def test_an_unknown_embedder_name_is_a_config_error_listing_the_names(tmp_path: Path) -> None:
    # was: AttributeError: 'str' object has no attribute 'dim' (at the first call)
    with pytest.raises(
        ConfigError, match=r"embedder='bogus'.*hash, openai, sentence-transformers or onnx"
    ):
        GraphMemory(tmp_path / "x.db", embedder="bogus")  # type: ignore[arg-type]
    assert not (tmp_path / "x.db").exists()


def test_an_object_that_is_not_an_embedder_names_what_it_lacks(tmp_path: Path) -> None:
    class Half:
        name = "half"

    with pytest.raises(ConfigError, match=r"got Half \(missing dim, embed\)"):
        GraphMemory(tmp_path / "x.db", embedder=Half())  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"got int \(missing name, dim, embed\)"):
        GraphMemory(tmp_path / "x.db", embedder=3)  # type: ignore[arg-type]


def test_embedder_names_are_accepted_as_a_convenience(tmp_path: Path, hash64: Path) -> None:
    with GraphMemory(tmp_path / "new.db", embedder="hash") as mem:
        assert isinstance(mem.embedder, HashEmbedder) and mem.embedder.dim == 384
    with GraphMemory(hash64, embedder="HASH") as mem:  # the store's dimension is kept
        assert mem.embedder.dim == 64
        assert [f.target for f in mem.facts(entity="Alice")] == ["Paris"]


def test_an_embedder_name_the_store_disagrees_with_names_both_and_the_fix(hash64: Path) -> None:
    with pytest.raises(EmbeddingMismatchError) as caught:
        GraphMemory(hash64, embedder="openai").connect()
    text = str(caught.value)
    assert "hash-ngram-v1-64 (64 dimensions)" in text and "embedder='openai'" in text
    assert "leave embedder= out" in text and "embedder='hash'" in text and "new store" in text
    assert "graphmem db reembed --embedder openai" in text


def test_an_embedder_object_the_store_disagrees_with_names_both(hash64: Path) -> None:
    with pytest.raises(EmbeddingMismatchError, match=r"hash-ngram-v1-64 \(64 dim.*"
                       r"hash-ngram-v1-32 \(32 dimensions\)"):
        GraphMemory(hash64, embedder=HashEmbedder(32)).connect()


# ------------------------------------------------------------------------------- GRAPHMEM_EMBEDDER
def test_graphmem_embedder_that_disagrees_with_the_store_is_an_error(
    hash64: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Was: GRAPHMEM_EMBEDDER=openai on a hash store silently kept the hash embedder."""
    monkeypatch.setenv("GRAPHMEM_EMBEDDER", "openai")
    with pytest.raises(EmbeddingMismatchError) as caught:
        GraphMemory(hash64).connect()
    text = str(caught.value)
    assert "GRAPHMEM_EMBEDDER=openai asks for openai:text-embedding-3-small" in text
    assert "built with embedder hash-ngram-v1-64 (64 dimensions)" in text
    assert "unset GRAPHMEM_EMBEDDER" in text and "set it to hash" in text
    assert recorded(hash64) == {"name": "hash-ngram-v1-64", "dim": 64}  # nothing changed


def test_the_cli_refuses_graphmem_embedder_that_disagrees(
    hash64: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    note = tmp_path / "note.txt"
    note.write_text("I live in Lisbon.", encoding="utf-8")
    monkeypatch.setenv("GRAPHMEM_EMBEDDER", "openai")
    result = CliRunner().invoke(cli, ["--store", str(hash64), "ingest", str(note)])
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith("Error: ") and "unset GRAPHMEM_EMBEDDER" in result.stderr
    assert "Traceback" not in result.stderr
    monkeypatch.delenv("GRAPHMEM_EMBEDDER")
    with GraphMemory(hash64) as mem:  # nothing was ingested
        assert mem.stats()["episodes"] == 1


def test_graphmem_embedder_of_the_stores_family_is_fine(
    hash64: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GRAPHMEM_EMBEDDER", "hash")
    with GraphMemory(hash64) as mem:
        assert mem.embedder.dim == 64
    # an explicit embedder= wins over the variable
    monkeypatch.setenv("GRAPHMEM_EMBEDDER", "openai")
    with GraphMemory(hash64, embedder=HashEmbedder(64)) as mem:
        assert mem.embedder.dim == 64


def test_an_unknown_graphmem_embedder_fails_at_construction(
    hash64: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # was: ignored on an existing store
    monkeypatch.setenv("GRAPHMEM_EMBEDDER", "word2vec")
    with pytest.raises(ConfigError, match=r"GRAPHMEM_EMBEDDER='word2vec'.*hash, openai"):
        GraphMemory(hash64)


def test_nothing_asked_for_uses_the_stores_embedder(tmp_path: Path) -> None:
    """Without embedder= or GRAPHMEM_EMBEDDER, a store built with an OpenAI-compatible model
    opens with that model (was: the hash embedder, then a mismatch error) and no probe call."""
    path = tmp_path / "o.db"
    with GraphMemory(path, embedder=HashEmbedder(8)) as mem:
        mem.store.set_meta("embedder", json.dumps({"name": "openai:my-model", "dim": 12}))
    with GraphMemory(path) as mem:
        assert isinstance(mem.embedder, OpenAIEmbedder)
        assert (mem.embedder.name, mem.embedder.dim) == ("openai:my-model", 12)


def test_a_custom_embedder_store_needs_that_embedder(tmp_path: Path) -> None:
    class Mine:
        name = "mine-v1"
        dim = 8

        def embed(self, texts: Any) -> Any:
            return np.ones((len(texts), 8), dtype=np.float32) / np.sqrt(8)

    path = tmp_path / "c.db"
    with GraphMemory(path, embedder=Mine()) as mem:
        mem.add_fact("Alice", "lives_in", "Paris")
    with pytest.raises(EmbeddingMismatchError, match=r"mine-v1 \(8 dimensions\).*cannot rebuild"):
        GraphMemory(path).connect()
    with GraphMemory(path, embedder=Mine()) as mem:
        assert mem.stats()["facts"] == 1


def test_reading_embedder_before_connect_gives_the_stores(hash64: Path) -> None:
    mem = GraphMemory(hash64)
    try:
        assert mem.embedder.dim == 64  # was: a 384-dimension default, then a mismatch
    finally:
        mem.close()


# ------------------------------------------------------------------------------- Settings
def test_a_bad_environment_value_names_the_variable_and_what_it_accepts(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # was: pydantic ValidationError (not a GraphMemError) from GraphMemory()
    monkeypatch.setenv("GRAPHMEM_LLM_RPM", "fast")
    with pytest.raises(ConfigError, match=r"GRAPHMEM_LLM_RPM='fast' is not valid: expected a "
                                          r"number >= 0 \(0 or unset: no limit\)"):
        GraphMemory(tmp_path / "m.db")
    monkeypatch.setenv("GRAPHMEM_LLM_RPM", "30")
    monkeypatch.setenv("GRAPHMEM_LLM_TPM", "-5")
    with pytest.raises(ConfigError, match=r"GRAPHMEM_LLM_TPM='-5'"):
        Settings.from_env()
    monkeypatch.setenv("GRAPHMEM_LLM_TPM", "")  # empty is unset
    assert Settings.from_env().llm_requests_per_minute == 30.0


def test_the_cli_reports_a_bad_environment_value_in_one_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("GRAPHMEM_LLM_TPM", "lots")
    result = CliRunner().invoke(cli, ["--store", str(tmp_path / "m.db"), "stats"])
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: GRAPHMEM_LLM_TPM='lots' is not valid")
    assert "Traceback" not in result.stderr


def test_bad_settings_in_code_are_config_errors() -> None:
    with pytest.raises(ConfigError, match=r"Settings.llm_timeout=0 is not valid: expected a "
                                          r"number of seconds > 0"):
        Settings(llm_timeout=0)
    with pytest.raises(ConfigError, match=r"Settings.bulk_chunk='many'.*integer >= 1"):
        Settings(bulk_chunk="many")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"no setting 'llm_modle' \(known: .*llm_model"):
        Settings(llm_modle="gpt")  # type: ignore[call-arg]
    with pytest.raises(ConfigError, match=r"group name of at most 1,024 characters"):
        Settings(group_id="g" * 1025)
    with pytest.raises(ConfigError) as caught:
        Settings(llm_api_key=["sk-secret"])  # type: ignore[arg-type]
    assert "sk-secret" not in str(caught.value) and "llm_api_key" in str(caught.value)
    # an override names the setting, not the variable it replaced
    with pytest.raises(ConfigError, match=r"Settings.llm_concurrency=0"):
        Settings.from_env(llm_concurrency=0)


def test_settings_must_be_a_settings_object(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="Settings object, got dict"):
        GraphMemory(tmp_path / "m.db", settings={"llm_model": "x"})  # type: ignore[arg-type]
