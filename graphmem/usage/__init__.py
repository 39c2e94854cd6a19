"""Usage memory: pinned facts, usefulness feedback and an optional forgetting curve for recall.

Internal: the public API is what ``graphmem`` re-exports.
"""
