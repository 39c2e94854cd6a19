"""Recall: query → seeds (vectors, full text, names) → time-filtered expansion → fusion →
``RecallResult``. No LLM at query time.

Internal: the public API is what ``graphmem`` re-exports.
"""
