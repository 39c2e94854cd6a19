"""Input parsing: files and records (JSONL, JSON, chat exports, transcripts, text) into episodes,
with every problem named by file, line and field. Stage 1 of ingest.

Internal: the public API is what ``graphmem`` re-exports.
"""
