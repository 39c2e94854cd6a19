"""The MiniLM ONNX model with int8 matrix products (dynamic quantization), built once and cached.

The packaged model stores its weights as int8 but computes in float32 (ONNX Runtime turns the
weights back into floats when it loads them): its matrix products cost as much as the float
model's, about 70 % of its time on one core. Quantizing those products' inputs too (each
activation row range-scaled to uint8 at run time, each weight matrix per output channel to
7-bit int8, ``reduce_range`` so that CPUs without VNNI do not saturate) lets ONNX Runtime use
integer kernels: about 1.9x faster on one core, vectors at cosine ~0.993 to the float ones
(``bench/embedders.py --agreement``). Only the products with a weight matrix are quantized;
attention's two activation products stay float.

Building needs the ``onnx`` package (ONNX Runtime's quantizer is written on it) and takes about
1.5 CPU seconds; the result is kept in graphmem's cache folder (``GRAPHMEM_CACHE_DIR``, else
``$XDG_CACHE_HOME/graphmem``, else ``~/.cache/graphmem``) under a name that holds the source
model's digest and ONNX Runtime's version, written atomically. Where that folder cannot be
written, each load builds it anew in a temporary folder.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from .._errors import ConfigError

__all__ = ["cache_dir", "int8_model"]

# Changes whenever the recipe below does (the cached file's name carries it).
_RECIPE = "dq-pc-rr-v1"


def cache_dir() -> Path:
    """graphmem's cache folder (not created here)."""
    explicit = os.environ.get("GRAPHMEM_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "graphmem"


def int8_model(source: str) -> bytes:
    """The serialized int8-product model derived from the ONNX model at ``source``."""
    try:
        import onnxruntime as ort  # type: ignore[import-not-found,import-untyped,unused-ignore]
    except ImportError as exc:  # pragma: no cover - the caller imported it already
        raise ConfigError("needs: pip install 'graphmem[onnx-embeddings]'") from exc
    digest = hashlib.sha256(Path(source).read_bytes()).hexdigest()[:16]
    name = f"minilm-{digest}-{_RECIPE}-ort{ort.__version__}.onnx"
    cached = cache_dir() / name
    with contextlib.suppress(OSError):  # absent, or not readable: built again
        return cached.read_bytes()
    with tempfile.TemporaryDirectory(prefix="graphmem-onnx-") as tmp:
        built = Path(tmp) / name
        _quantize(source, built, Path(tmp))
        data = built.read_bytes()
    with contextlib.suppress(OSError):  # a read-only home: built again next time
        cached.parent.mkdir(parents=True, exist_ok=True)
        fd, partial = tempfile.mkstemp(dir=cached.parent, prefix=".partial-", suffix=".onnx")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            os.chmod(partial, 0o644)  # a shared cache folder serves every user
            os.replace(partial, cached)
        finally:
            with contextlib.suppress(OSError):
                os.unlink(partial)
    return data


def _quantize(source: str, target: Path, tmp: Path) -> None:
    try:
        import onnx  # type: ignore[import-not-found,import-untyped,unused-ignore]
        import onnxruntime as ort  # type: ignore[import-not-found,import-untyped,unused-ignore]
        from onnxruntime.quantization import (  # type: ignore[import-not-found,import-untyped,unused-ignore]
            QuantType,
            quantize_dynamic,
        )
    except ImportError as exc:
        raise ConfigError(
            "the int8 MiniLM is built with the onnx package: pip install "
            "'graphmem[onnx-embeddings]' (or OnnxMiniLMEmbedder(int8_products=False))"
        ) from exc
    # ONNX Runtime's basic optimizations fold the stored int8 weights back into float
    # matrices, the form its quantizer reads.
    folded = tmp / "folded.onnx"
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.optimized_model_filepath = str(folded)
    options.intra_op_num_threads = 1
    ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])
    model = onnx.load(str(folded))
    weights = {init.name for init in model.graph.initializer}
    products = [
        node.name for node in model.graph.node
        if node.op_type == "MatMul" and len(node.input) > 1 and node.input[1] in weights
    ]
    with _quiet_quantizer():
        quantize_dynamic(
            str(folded), str(target), weight_type=QuantType.QInt8, per_channel=True,
            reduce_range=True, nodes_to_quantize=products,
        )


class _DropQuantizerAdvice(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return "pre-processing before quantization" not in record.getMessage()


@contextlib.contextmanager
def _quiet_quantizer() -> Iterator[None]:
    """The quantizer logs advice on the root logger (run its pre-processing first) that does
    not apply to a model ONNX Runtime has just optimized."""
    advice = _DropQuantizerAdvice()
    root = logging.getLogger()
    root.addFilter(advice)
    try:
        yield
    finally:
        root.removeFilter(advice)
