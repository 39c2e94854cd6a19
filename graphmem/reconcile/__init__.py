"""Reconciliation: each claimed fact placed in the timeline of its (subject, predicate), and
timelines rebuilt from their claims after a forget.

Internal: the public API is what ``graphmem`` re-exports.
"""
