"""Embedders: text → unit float32 vectors (hash by default; OpenAI-compatible and
sentence-transformers optional).

Internal: the public API is what ``graphmem`` re-exports.
"""
