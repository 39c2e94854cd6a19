"""The ``Extractor`` protocol: one episode in, one ``Extraction`` out."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from .._models import EpisodeRecord, Extraction, FactRecord
from .._predicates import PredicateRegistry

__all__ = ["ExtractionContext", "Extractor"]


@dataclass
class ExtractionContext:
    """What an extractor may use besides the episode itself.

    ``speaker`` is the entity that first-person statements ("I live in…") are about: the
    episode's ``metadata["speaker"]``, else the default entity of the message's role.
    ``facts`` are the current facts about entities the episode likely mentions (filled only for
    extractors with ``needs_context``), so one LLM call can say which fact a new one replaces.
    """

    speaker: str
    predicates: PredicateRegistry
    previous: list[EpisodeRecord] = field(default_factory=list)
    facts: list[FactRecord] = field(default_factory=list)


@runtime_checkable
class Extractor(Protocol):
    name: str
    needs_context: bool

    def extract(self, episode: EpisodeRecord, context: ExtractionContext) -> Extraction: ...
