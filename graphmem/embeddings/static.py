"""Static word embeddings, no model to run: WordLlama (``pip install wordllama``).

WordLlama's ``l2_supercat`` token embeddings (256 dimensions, from large language models'
input embeddings, trained for retrieval) ship inside its PyPI wheel; a text's vector is the
weighted average of its tokens' vectors. Measured in ``bench/embedders.py`` beside the hashed
n-grams and MiniLM; it is not one of the names ``GRAPHMEM_EMBEDDER`` accepts (see
``bench/README.md`` for why).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from .._errors import ConfigError

__all__ = ["WordLlamaEmbedder"]


class WordLlamaEmbedder:
    def __init__(self, config: str = "l2_supercat", dim: int = 256) -> None:
        self.config = config
        self.dim = dim
        self.name = f"wordllama:{config}-{dim}"
        self.recall_weight = 0.5  # as all-MiniLM-L6-v2's (bench/README.md, "Embedders")
        self._model: Any = None

    def _load(self) -> Any:
        if self._model is None:
            try:
                from wordllama import WordLlama  # type: ignore[import-not-found,import-untyped,unused-ignore]
            except ImportError as exc:
                raise ConfigError("WordLlamaEmbedder needs: pip install wordllama") from exc
            import wordllama

            # Its own package folder as the "cache": the wheel holds weights/ and tokenizers/
            # there (its project-root lookup misses the tokenizer), and nothing is downloaded.
            here = Path(wordllama.__file__).parent
            self._model = WordLlama.load(
                config=self.config, dim=self.dim, cache_dir=here, disable_download=True
            )
        return self._model

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = np.asarray(self._load().embed(list(texts), norm=True), dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        out: npt.NDArray[np.float32] = (vectors / norms).astype(np.float32)
        return out
