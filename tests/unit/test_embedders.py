"""Embedders: the no-model default, the OpenAI-compatible endpoint over real HTTP."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

from graphmem import ConfigError, GraphMemory, HashEmbedder, LLMError, OpenAIEmbedder
from graphmem.embeddings.factory import default_embedder
from tests.fakes.openai_server import FakeOpenAIServer, server_error

pytest_plugins = ["tests.fakes.pytest_plugin"]


def test_hash_embedder_is_deterministic_unit_and_lexical() -> None:
    emb = HashEmbedder(128)
    a, b, c = emb.embed(["Alice lives in Osaka", "Alice lives in Osaka", "robot gripper force"])
    assert np.allclose(a, b)
    assert abs(float(np.linalg.norm(a)) - 1.0) < 1e-5
    near = float(emb.embed(["Alice moved to Osaka"])[0] @ a)
    far = float(c @ a)
    assert near > far


def test_hash_embedder_rejects_tiny_dims() -> None:
    with pytest.raises(ConfigError):
        HashEmbedder(4)


def test_default_embedder_logs_a_one_line_notice(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.delenv("GRAPHMEM_EMBEDDER", raising=False)
    with caplog.at_level(logging.INFO, logger="graphmem"):
        emb = default_embedder()
    assert isinstance(emb, HashEmbedder)
    assert any("hashed n-gram embedder" in r.message for r in caplog.records)
    monkeypatch.setenv("GRAPHMEM_EMBEDDER", "word2vec")
    with pytest.raises(ConfigError, match="word2vec"):
        default_embedder()


def test_openai_embedder_over_http(fake_openai: FakeOpenAIServer, tmp_path: Path) -> None:
    emb = OpenAIEmbedder("text-embedding-3-small", base_url=fake_openai.base_url, api_key="t",
                         dim=64, batch_size=2)
    vectors = emb.embed(["a", "b", "c"])
    assert vectors.shape == (3, 64)
    assert len(fake_openai.calls("embeddings")) == 2  # batched by 2
    with GraphMemory(tmp_path / "m.db", embedder=emb) as mem:
        mem.add_fact("Alice", "lives_in", "Osaka")
        assert [h.target for h in mem.recall("Where does Alice live?").facts] == ["Osaka"]
    assert '"openai:text-embedding-3-small"' in (
        GraphMemory(tmp_path / "m.db", embedder=emb).connect().store.get_meta("embedder") or ""
    )


def test_openai_embedder_errors_are_graphmem_errors(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.inject(server_error(500), path=None)
    emb = OpenAIEmbedder("m", base_url=fake_openai.base_url, api_key="t", max_retries=0)
    with pytest.raises(LLMError, match="embedding endpoint failed"):
        emb.embed(["x"])


def test_hash_embedder_equals_its_feature_definition() -> None:
    """The per-word cache and the bincount sum give the vectors of summing every feature."""
    import zlib

    texts = ["I moved to Porto last month!", "", "Porto porto PORTO, ünïcode café", "a b a b"]
    embedder = HashEmbedder(64)
    for text, got in zip(texts, embedder.embed(texts), strict=True):
        want = np.zeros(64, dtype=np.float64)
        for feature, weight in embedder._features(text):
            h = zlib.crc32(feature.encode("utf-8"))
            want[h % 64] += (1.0 if (h >> 31) & 1 else -1.0) * weight
        norm = np.linalg.norm(want) or 1.0
        assert np.allclose(got, want / norm, atol=1e-6)


def test_onnx_is_a_name_for_the_torch_free_minilm(monkeypatch: pytest.MonkeyPatch) -> None:
    from graphmem.embeddings.factory import build_embedder, embedder_name, resolve_embedder
    from graphmem.embeddings.onnx import OnnxMiniLMEmbedder

    assert embedder_name("onnx") == embedder_name("onnx-minilm") == "onnx"
    assert isinstance(build_embedder("onnx"), OnnxMiniLMEmbedder)  # nothing loaded yet
    monkeypatch.setenv("GRAPHMEM_EMBEDDER", "onnx")
    assert default_embedder().name == "onnx:all-MiniLM-L6-v2-int8dq"
    monkeypatch.delenv("GRAPHMEM_EMBEDDER")
    # A store recorded with another token budget opens with that budget, and one made before
    # the int8 products with the float products its vectors came from.
    record = ("onnx:all-MiniLM-L6-v2-int8@256", 384)
    again = resolve_embedder(None, record, store="s")
    assert isinstance(again, OnnxMiniLMEmbedder) and again.max_tokens == 256
    assert not again.int8_products and again.name == record[0]
    again = resolve_embedder("onnx", ("onnx:all-MiniLM-L6-v2-int8", 384), store="s")
    assert isinstance(again, OnnxMiniLMEmbedder) and not again.int8_products
    again = resolve_embedder(None, ("onnx:all-MiniLM-L6-v2-int8dq@64", 384), store="s")
    assert isinstance(again, OnnxMiniLMEmbedder) and again.int8_products
    assert again.max_tokens == 64
    with pytest.raises(ConfigError, match="max_tokens"):
        OnnxMiniLMEmbedder(max_tokens=4)
