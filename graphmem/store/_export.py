"""The JSONL export format, shared by every store so that their exports are identical.

One record per line, with a ``type``: episode, entity, fact, provenance, ending (a negation's
ENDED_BY), link, mention. Times are ISO-8601 UTC with milliseconds; embeddings are base64 of
little-endian float32. Provenance and ending records carry the episode's ``claim`` (see
``graphmem.reconcile.claims``; times in it are epoch milliseconds, as stored).

``validate_export`` checks rows before an import writes any of them (``GraphMemory.import_rows``
calls it; the stores' ``import_rows`` trust their input).

The converters live in ``_export_rows``, the import checks in ``_export_check``; this module is
the format's one name for both.
"""

from __future__ import annotations

from ._export_check import (
    EPISODE_KINDS,
    EPISODE_STATUSES,
    EXPORT_TYPES,
    LINK_KINDS,
    validate_export,
)
from ._export_rows import (
    entity_export,
    episode_export,
    episode_from_export,
    episode_link_export,
    fact_export,
    iso,
    link_export,
    plan_from_export,
    provenance_export,
)

__all__ = [
    "EPISODE_KINDS",
    "EPISODE_STATUSES",
    "EXPORT_TYPES",
    "LINK_KINDS",
    "entity_export",
    "episode_export",
    "episode_from_export",
    "episode_link_export",
    "fact_export",
    "iso",
    "link_export",
    "plan_from_export",
    "provenance_export",
    "validate_export",
]
