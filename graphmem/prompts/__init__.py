"""Prompt files of graphmem (``*.prompt``), loaded with ``graphmem._prompts.load_prompt``."""
