"""Entity resolution: names an extractor saw → existing entity ids, or new entities.

Matching is by normalised key and aliases within the group; a generic type ("entity") matches
any specific one, so "Osaka" (Place) and "Osaka" (entity) are one node. Optional vector matching
(``similarity_threshold``) merges near-identical names when a semantic embedder is in use.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from .._ids import entity_key, make_id
from ..store._base import EntityRow, StoreReader

__all__ = ["EntityRequest", "Resolution", "resolve_entities"]

GENERIC_TYPES = frozenset({"entity", "", "thing", "unknown"})


@dataclass
class EntityRequest:
    name: str
    type: str = "entity"
    aliases: list[str] = field(default_factory=list)
    embedding: npt.NDArray[np.float32] | None = None


@dataclass
class Resolution:
    by_name: dict[str, str] = field(default_factory=dict)  # request name -> entity id
    new: list[EntityRow] = field(default_factory=list)
    aliases: dict[str, list[str]] = field(default_factory=dict)  # entity id -> full alias list
    names: dict[str, str] = field(default_factory=dict)  # entity id -> display name


def _compatible(stored: str, wanted: str) -> bool:
    return stored == wanted or stored.lower() in GENERIC_TYPES or wanted.lower() in GENERIC_TYPES


def resolve_entities(
    reader: StoreReader,
    group_id: str,
    requests: Sequence[EntityRequest],
    now: int,
) -> Resolution:
    result = Resolution()
    keys = {entity_key(r.name) for r in requests}
    for r in requests:
        keys.update(entity_key(a) for a in r.aliases)
    existing = reader.entities_by_keys(group_id, sorted(keys))
    by_key: dict[str, list[EntityRow]] = {}
    for row in existing:
        by_key.setdefault(row.key, []).append(row)
        for alias in row.aliases:
            by_key.setdefault(entity_key(alias), []).append(row)
    for req in requests:
        if req.name in result.by_name:
            continue
        key = entity_key(req.name)
        candidates = [
            e for k in [key, *(entity_key(a) for a in req.aliases)] for e in by_key.get(k, [])
        ]
        exact = [e for e in candidates if e.type == req.type]
        compatible = [e for e in candidates if _compatible(e.type, req.type)]
        chosen: EntityRow | None = (exact or compatible or [None])[0]  # type: ignore[list-item]
        if chosen is None:
            chosen = EntityRow(
                id=make_id("ent", group_id, key, req.type),
                group_id=group_id,
                name=req.name.strip(),
                key=key,
                type=req.type or "entity",
                aliases=[a for a in dict.fromkeys(req.aliases) if entity_key(a) != key],
                embedding=req.embedding,
                created_at=now,
            )
            result.new.append(chosen)
            by_key.setdefault(key, []).append(chosen)
            for alias in chosen.aliases:
                by_key.setdefault(entity_key(alias), []).append(chosen)
        else:
            extra = [
                a
                for a in [req.name, *req.aliases]
                if entity_key(a) != chosen.key
                and entity_key(a) not in {entity_key(x) for x in chosen.aliases}
            ]
            if extra:
                chosen.aliases = [*chosen.aliases, *dict.fromkeys(extra)]
                if chosen not in result.new:
                    result.aliases[chosen.id] = chosen.aliases
        result.by_name[req.name] = chosen.id
        result.names[chosen.id] = chosen.name
    return result
