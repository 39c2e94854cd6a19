"""``GraphMemory``'s usage calls (``pin``, ``unpin``, ``pins``, ``feedback``), a base
class of the facade. Pins and feedback (``_usage``) write episodes of kind pin / feedback only,
never a fact."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from .._args import check_group
from .._errors import InputError
from .._models import PinnedFact

if TYPE_CHECKING:
    from .._models import ExtractedFact, IngestResult
    from ..store import GraphStore

__all__ = ["UsageCalls"]


class UsageCalls:
    """Pinned facts and usage feedback (``GraphMemory``)."""

    if TYPE_CHECKING:  # what GraphMemory provides
        store: GraphStore

        def _ready(self) -> GraphStore: ...

    def pin(
        self, fact_id: str, *, group_id: str | None = None, source: str | None = None
    ) -> PinnedFact:
        """Pin a fact: it appears in every ``recall(...).to_context()`` of its group, first,
        whatever the query; when it is superseded or corrected, recall shows what replaced it
        and says it changed. ``group_id``: None (the fact's own group) or the group it must be
        in. Pinning a pinned fact changes nothing. An unknown fact id is an ``InputError``."""
        from .memory import usage_for

        group = None if group_id is None else check_group(group_id)
        usage_for(self._ready()).pin(fact_id, group_id=group, source=source)
        fact = self.store.fact_records([fact_id], None)[0]
        return next(p for p in self.pins(group_id=fact.group_id) if p.fact_id == fact.id)

    def unpin(
        self, fact_id: str, *, group_id: str | None = None, source: str | None = None
    ) -> bool:
        """Unpin a fact; False when it was not pinned. The fact itself is unchanged."""
        from .memory import usage_for

        group = None if group_id is None else check_group(group_id)
        return usage_for(self._ready()).pin(fact_id, group_id=group, source=source, pinned=False)

    def pins(self, group_id: str | None = None) -> list[PinnedFact]:
        """The group's pinned facts (default: ``default``), in pin order, as they stand now."""
        from .memory import usage_for

        group = check_group("default" if group_id is None else group_id)
        return usage_for(self._ready()).pinned_facts(group, None)[0]

    def feedback(
        self,
        item_id: str,
        useful: bool,
        *,
        group_id: str | None = None,
        source: str | None = None,
        note: str | None = None,
        at: datetime | None = None,
    ) -> str:
        """Say whether a recalled fact or episode (by id) was useful. Later recalls rank it
        up or down (``RetrievalConfig.feedback_weight``) and a useful one counts as used for
        the forgetting curve (``decay_half_life``); nothing about what is true changes. ``at``:
        when it was used (default now). Returns the id of the feedback episode (forget it to
        take the feedback back)."""
        from .memory import usage_for

        group = None if group_id is None else check_group(group_id)
        return usage_for(self._ready()).feedback(
            item_id, useful, group_id=group, source=source, note=note, at=at
        )

    def _pin_stated(
        self, result: IngestResult, group_id: str, fact: ExtractedFact, source: str | None
    ) -> None:
        """Pin the fact that ``add_fact(..., pinned=True)``'s episode states (new or known)."""
        from ..retrieve.reads import entity_ids

        ids = entity_ids(self._ready, group_id, fact.subject)
        stated = [
            f
            for f in self.store.list_facts(
                group_id, entity_ids=ids, predicate=fact.predicate, view=None, subject_only=True
            )
            if result.episode_id in f.episode_ids
        ]
        if not stated:
            raise InputError(f"add_fact stored no fact to pin ({result.status})")
        self.pin(max(stated, key=lambda f: f.recorded_at).id, group_id=group_id, source=source)
