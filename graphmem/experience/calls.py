"""``GraphMemory``'s experience calls (``add_experience``, ``recall_experiences``), a base class
of the facade; the record and its recall index are ``_experience``."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from .._args import check_group
from .._errors import InputError
from .._models import Experience, IngestResult, Outcome
from .._time import utcnow

if TYPE_CHECKING:
    from ..embeddings.factory import Embedder
    from ..extract import Extractor
    from ..store import GraphStore
    from ..store._base import EpisodeRow
    from .index import ExperienceRecall, ExperienceWeights

__all__ = ["ExperienceCalls"]


class ExperienceCalls:
    """Store one attempt, and recall the attempts most like a new one (``GraphMemory``)."""

    if TYPE_CHECKING:  # what GraphMemory provides
        _experiences: ExperienceRecall | None

        @property
        def embedder(self) -> Embedder: ...

        def _ready(self) -> GraphStore: ...

        def _ingest(
            self, row: EpisodeRow, extractor: str | Extractor | None, *, existing: bool = False
        ) -> IngestResult: ...

    def add_experience(
        self,
        task: str,
        *,
        state: Mapping[str, Any] | None = None,
        params: Mapping[str, Any] | None = None,
        outcome: Mapping[str, Any] | None = None,
        payload: Mapping[str, Any] | None = None,
        meta: Mapping[str, Any] | None = None,
        run_id: str | int | None = None,
        episode: str | int | None = None,
        group_id: str = "default",
        occurred_at: datetime | None = None,
        source: str | None = None,
    ) -> IngestResult:
        """Store one attempt: what was tried (``params``), in what ``state``, and what came of
        it (``outcome``; ``outcome["success"]`` is its success flag).

        Arrays stay ordered. ``payload`` (trajectories, observations) and ``meta`` (fields only
        to filter on) are stored and returned but not indexed or turned into facts. The
        attempt is the subject ``run <run_id> episode <episode>`` (its own id when either is
        missing), so runs never supersede each other; recording the same run and episode again
        supersedes the changed values, with history. ``occurred_at`` defaults to now; the same
        record sent again with the same ``occurred_at`` is stored once. Bad input raises
        ``InputError`` naming the argument, before anything is stored.
        """
        from ..ingest.episode_input import episode_row
        from .index import experience_record

        content, metadata = experience_record(
            task,
            state=state,
            params=params,
            outcome=outcome,
            payload=payload,
            meta=meta,
            run_id=run_id,
            episode=episode,
        )
        # Without a time, now: the same attempt made twice is two attempts (an explicit time
        # makes a resend of one record idempotent instead).
        when = occurred_at if occurred_at is not None else utcnow()
        row = episode_row(content, group_id, source, "experience", when, metadata)
        return self._ingest(row, None)

    def recall_experiences(
        self,
        query: str = "",
        *,
        state: Mapping[str, Any] | None = None,
        k: int = 5,
        outcome: Outcome = "any",
        filters: Mapping[str, Any] | None = None,
        weights: ExperienceWeights | None = None,
        group_id: str = "default",
        as_of: datetime | None = None,
        include_payload: bool = False,
    ) -> list[Experience]:
        """The ``k`` past attempts most like this one, whole, best first.

        Ranked by text relevance to ``query``, nearness to ``state`` (named numeric fields and
        vectors, e.g. ``{"object_pos": [x, y, z]}``) and recency, mixed by ``weights``;
        ``outcome`` keeps successes (``"success_only"``) or failures (``"failure_only"``) or
        puts the successes among the ``k`` best matches first (``"success_first"``).
        ``filters`` (the recall filter language, over paths like ``state.object``,
        ``params.force``, ``outcome.success``, ``meta.seed``) hold for every returned attempt.
        ``as_of``: only attempts that had happened by then. No model is called unless the
        weights give embedding similarity a share.
        """
        from .index import ExperienceRecall, ExperienceWeights

        if weights is not None and not isinstance(weights, ExperienceWeights):
            raise InputError(f"weights must be ExperienceWeights, got {type(weights).__name__}")
        if self._experiences is None:
            self._experiences = ExperienceRecall(self._ready(), self.embedder)
        return self._experiences.search(
            check_group(group_id),
            query,
            state=state,
            k=k,
            outcome=outcome,
            filters=filters,
            weights=weights if weights is not None else ExperienceWeights(),
            as_of=as_of,
            include_payload=include_payload,
        )
