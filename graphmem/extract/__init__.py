"""Extractors: episode → entities and facts. ``get_extractor`` picks one by name."""

from __future__ import annotations

from .._config import Settings
from .._errors import ConfigError
from ._base import ExtractionContext, Extractor
from .structured import ExperienceExtractor, StructuredExtractor

__all__ = [
    "ExperienceExtractor",
    "ExtractionContext",
    "Extractor",
    "StructuredExtractor",
    "get_extractor",
]

NAMES = ("auto", "rules", "structured", "llm")


def get_extractor(name: str, settings: Settings, *, kind: str = "message") -> Extractor:
    """The extractor called ``name``; ``auto`` picks structured for JSON, else llm or rules.

    An experience record (``kind="experience"``) is always read by ``ExperienceExtractor``: its
    shape is graphmem's own, so no other extractor applies.
    """
    if kind == "experience":
        return ExperienceExtractor()
    choice = name.strip().lower()
    if choice == "auto":
        choice = "structured" if kind == "json" else "llm" if settings.llm_model else "rules"
    if choice == "rules":
        from .rules.extractor import RulesExtractor

        return RulesExtractor()
    if choice == "structured":
        return StructuredExtractor()
    if choice == "llm":
        try:
            from .llm.extractor import LLMExtractor
        except ImportError as exc:
            raise ConfigError(
                "the llm extractor needs the openai and tenacity packages, which every install "
                "of graphmem includes; this environment lacks one (pip install --force-reinstall "
                f"graphmem): {exc}"
            ) from exc
        return LLMExtractor.from_settings(settings)
    raise ConfigError(f"unknown extractor {name!r}; choose one of {', '.join(NAMES)}")
