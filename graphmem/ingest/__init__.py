"""Ingest: a write call's input checked, raw episodes stored first, extraction, one embedding
call, entity resolution, and one ``WritePlan`` per episode.

Internal: the public API is what ``graphmem`` re-exports.
"""
