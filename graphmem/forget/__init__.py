"""Forgetting: provenance-refcounted deletes of an episode, an entity or a group, with the touched
timelines repaired.

Internal: the public API is what ``graphmem`` re-exports.
"""
