"""Helpers shared by the reliability suite (worker scripts, corpora, store checks)."""
