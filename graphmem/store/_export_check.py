"""``validate_export``: export rows checked the way ingest checks its input, before an import
writes any of them (types, fields, times, embeddings, and references within one group)."""

from __future__ import annotations

import base64
import binascii
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._errors import InputError
from .._time import parse_datetime, to_ms
from ._base import (
    PLACEHOLDER,
    EntityRow,
    EpisodeRow,
    FactRow,
    GraphStore,
    LinkRow,
    ProvenanceRow,
)
from ._export_rows import (
    entity_export,
    episode_export,
    episode_link_export,
    fact_export,
    iso,
    link_export,
    provenance_export,
)
from ._links import EPISODE_LINK_KINDS, EpisodeLinkRow

__all__ = ["EPISODE_KINDS", "EPISODE_STATUSES", "EXPORT_TYPES", "LINK_KINDS", "validate_export"]

EXPORT_TYPES = (
    "episode", "entity", "fact", "provenance", "ending", "link", "mention", "episode_link",
)
EPISODE_KINDS = ("message", "text", "json", "event", "fact", "experience", "pin", "feedback")
EPISODE_STATUSES = ("pending", "extracted", "failed")
LINK_KINDS = ("SUPERSEDES", "CONTRADICTS")
_MS_MIN, _MS_MAX = to_ms(parse_datetime("0001-01-02")), to_ms(parse_datetime("9999-12-30"))
_MAX_PROBLEMS = 5  # listed in the error; the count says how many more


class _Bad(Exception):
    """One problem with one field of one row (internal: collected, then raised as one error)."""

    def __init__(self, name: str, message: str | None = None) -> None:
        super().__init__(name if message is None else f"{name}: {message}")


def _show(value: object, limit: int = 60) -> str:
    try:
        text = repr(value)
    except Exception:
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _text(r: dict[str, Any], name: str, *, required: bool = True, empty: bool = False) -> None:
    value = r.get(name)
    if value is None:
        if required:
            raise _Bad(name, "missing (not a graphmem export row?)")
        return
    if not isinstance(value, str):
        raise _Bad(name, f"expected a string, got {type(value).__name__}")
    if not empty and not value.strip():
        raise _Bad(name, "expected a non-empty string")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise _Bad(name, f"not valid Unicode text (lone surrogate at {exc.start})") from None


def _time(r: dict[str, Any], name: str, *, required: bool = True) -> int | None:
    value = r.get(name)
    if value is None:
        if required:
            raise _Bad(name, "missing (not a graphmem export row?)")
        return None
    if not isinstance(value, str):
        raise _Bad(name, f"expected an ISO-8601 time string, got {type(value).__name__}")
    try:
        return to_ms(parse_datetime(value, name))
    except InputError as exc:
        raise _Bad(name, str(exc).removeprefix(f"{name}: ")) from None


def _choice(r: dict[str, Any], name: str, allowed: Sequence[str], *, required: bool = True) -> None:
    value = r.get(name)
    if value is None and not required:
        return
    if value not in allowed:
        raise _Bad(name, f"expected one of {', '.join(allowed)}, got {_show(value)}")


def _mapping(r: dict[str, Any], name: str) -> None:
    value = r.get(name)
    if value is not None and not isinstance(value, dict):
        raise _Bad(name, f"expected an object, got {type(value).__name__}")


def _embedding(r: dict[str, Any], name: str, dim: int | None) -> None:
    value = r.get(name)
    if value is None:
        return
    if not isinstance(value, str):
        raise _Bad(name, f"expected base64 text, got {type(value).__name__}")
    try:
        data = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise _Bad(name, "not base64 (little-endian float32)") from None
    if len(data) % 4:
        raise _Bad(name, f"{len(data)} bytes is not a whole number of float32 values")
    if dim and len(data) // 4 != dim:
        raise _Bad(name, f"{len(data) // 4} dimensions, but the store's embedder has {dim}")
    if not np.isfinite(np.frombuffer(data, dtype="<f4")).all():
        raise _Bad(name, "holds NaN or infinite values")


def _ms_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and _MS_MIN <= value <= _MS_MAX


def _claim(r: dict[str, Any]) -> None:
    from ..reconcile.claims import StatedClaim  # the claims module imports the store's rows

    raw = r.get("claim")
    if raw is None:
        if r.get("type") == "ending":
            raise _Bad("claim", "missing (a negation needs its time)")
        return
    try:
        claim = StatedClaim.from_dict(raw)
    except InputError as exc:
        text = str(exc)
        name, _, message = text.partition(": ")
        raise _Bad(name, message or text) from None
    for key in ("valid_from", "valid_to", "at"):
        value = getattr(claim, key)
        if value is not None and (key != "at" or value) and not _ms_int(value):
            raise _Bad(f"claim.{key}", f"{_show(value)} is not a time in epoch milliseconds")
    if claim.valid_to is not None and claim.valid_to <= claim.valid_from:
        raise _Bad(
            f"claim.valid_to {iso(claim.valid_to)} is {_order(claim.valid_to, claim.valid_from)}"
            f" claim.valid_from {iso(claim.valid_from)}"
        )
    if not 0.0 <= claim.confidence <= 1.0:
        raise _Bad("claim.confidence", f"expected a number from 0 to 1, got {claim.confidence}")


def _order(end: int, start: int) -> str:
    return "before" if end < start else "the same time as"


def _check_episode(r: dict[str, Any], dim: int | None) -> None:
    for name in ("id", "group_id", "content_hash"):
        _text(r, name)
    _text(r, "content", empty=True)  # a fact's statement may be blank (add_fact statement=" ")
    _choice(r, "kind", EPISODE_KINDS)
    _time(r, "reference_time")
    _time(r, "ingested_at")
    _choice(r, "status", EPISODE_STATUSES, required=False)
    for name in ("source", "extractor", "error"):
        _text(r, name, required=False, empty=True)
    _mapping(r, "metadata")
    _embedding(r, "embedding", dim)


def _check_entity(r: dict[str, Any], dim: int | None) -> None:
    for name in ("id", "group_id", "name", "key", "entity_type"):
        _text(r, name)
    aliases = r.get("aliases")
    if aliases is not None and (
        not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases)
    ):
        raise _Bad("aliases", "expected a list of strings")
    _text(r, "summary", required=False, empty=True)
    _time(r, "created_at", required=False)
    _mapping(r, "attributes")
    _embedding(r, "embedding", dim)


def _check_fact(r: dict[str, Any], dim: int | None) -> None:
    from .._errors import PredicateError
    from .._predicates import normalize_predicate

    for name in ("id", "group_id", "subject_id", "predicate"):
        _text(r, name)
    _text(r, "statement", empty=True)
    try:
        if normalize_predicate(r["predicate"]) != r["predicate"]:
            raise PredicateError("not in canonical form")
    except PredicateError as exc:
        raise _Bad("predicate", str(exc)) from None
    _text(r, "object_id", required=False)
    value = r.get("value")
    if value is not None and not isinstance(value, str | int | float | bool):
        raise _Bad("value", f"expected a string, number or boolean, got {type(value).__name__}")
    if isinstance(value, float) and math.isnan(value):
        raise _Bad("value", "is NaN")
    if isinstance(value, str):
        _text(r, "value", empty=True)
    # A negation's placeholder (PLACEHOLDER) holds at no time and may name no value.
    placeholder = r.get("end_reason") == PLACEHOLDER and r.get("valid_to") == r.get("valid_from")
    if (r.get("object_id") is None) == (value is None) and not (placeholder and value is None):
        raise _Bad("object_id", "a fact has either an object_id (an entity) or a value")
    start = _time(r, "valid_from")
    end = _time(r, "valid_to", required=False)
    if start is not None and end is not None and end <= start and not placeholder:
        raise _Bad(f"valid_to {r['valid_to']} is {_order(end, start)} valid_from {r['valid_from']}")
    for name in ("recorded_at", "expired_at", "ended_at"):
        _time(r, name, required=name == "recorded_at")
    _text(r, "end_reason", required=False, empty=True)
    _text(r, "decided_by", required=False)
    confidence = r.get("confidence", 1.0)
    if (
        isinstance(confidence, bool)
        or not isinstance(confidence, int | float)
        or not 0.0 <= confidence <= 1.0
    ):
        raise _Bad("confidence", f"expected a number from 0 to 1, got {_show(confidence)}")
    _embedding(r, "embedding", dim)


def _check_claimed(r: dict[str, Any], dim: int | None) -> None:
    _text(r, "fact_id")
    _text(r, "episode_id")
    _text(r, "span", required=False, empty=True)
    _claim(r)


def _check_link(r: dict[str, Any], dim: int | None) -> None:
    _choice(r, "kind", LINK_KINDS)
    for name in ("src", "dst", "reason", "decided_by"):
        _text(r, name, empty=name == "reason")
    if r["src"] == r["dst"]:
        raise _Bad("dst", "a fact cannot be linked to itself")
    _time(r, "decided_at")


def _check_episode_link(r: dict[str, Any], dim: int | None) -> None:
    _choice(r, "kind", EPISODE_LINK_KINDS)
    for name in ("src", "dst", "group_id", "reason"):
        _text(r, name, empty=name == "reason")
    if r["src"] == r["dst"]:
        raise _Bad("dst", "an episode cannot be linked to itself")
    terms = r.get("terms", [])
    if not isinstance(terms, list) or not all(isinstance(t, str) for t in terms):
        raise _Bad("terms", f"expected a list of words, got {_show(terms)}")
    _time(r, "decided_at")


def _check_mention(r: dict[str, Any], dim: int | None) -> None:
    _text(r, "episode_id")
    _text(r, "entity_id")


_CHECKS: dict[str, Callable[[dict[str, Any], int | None], None]] = {
    "episode": _check_episode,
    "entity": _check_entity,
    "fact": _check_fact,
    "provenance": _check_claimed,
    "ending": _check_claimed,
    "link": _check_link,
    "mention": _check_mention,
    "episode_link": _check_episode_link,
}
# The fields each row type may have: what the exporters write.
_FIELDS = {
    "episode": set(episode_export(EpisodeRow("", "", None, "", "", 0, 0, ""))),
    "entity": set(entity_export(EntityRow("", "", "", "", ""))),
    "fact": set(fact_export(FactRow("", "", "", "", None, None, "", 0, None, 0))),
    "provenance": set(provenance_export("provenance", ProvenanceRow("", ""))),
    "ending": set(provenance_export("ending", ProvenanceRow("", ""))),
    "link": set(link_export(LinkRow("", "", "", "", "", 0))),
    "mention": {"type", "episode_id", "entity_id"},  # written by each store
    "episode_link": set(episode_link_export(EpisodeLinkRow("", "", "", "", "", (), 0))),
}
# The references of each row type: (field, the type it names). A row and what it names must
# be in one group.
_REFS = {
    "fact": (("subject_id", "entity"), ("object_id", "entity")),
    "provenance": (("fact_id", "fact"), ("episode_id", "episode")),
    "ending": (("fact_id", "fact"), ("episode_id", "episode")),
    "link": (("src", "fact"), ("dst", "fact")),
    "mention": (("episode_id", "episode"), ("entity_id", "entity")),
    "episode_link": (("src", "episode"), ("dst", "episode")),
}


@dataclass
class _Problems:
    """What is wrong, per row, in file order."""

    lines: Sequence[int] | None
    rows: Sequence[Any]
    found: list[tuple[int, str]] = field(default_factory=list)

    def number(self, index: int) -> int:
        return self.lines[index] if self.lines is not None else index + 1

    def add(self, index: int, problem: str) -> None:
        self.found.append(
            (index, f"row {self.number(index)} {_describe(self.rows[index])}: {problem}")
        )


def _describe(r: Any) -> str:
    if not isinstance(r, dict):
        return f"({type(r).__name__})"
    kind = r.get("type")
    if kind in ("episode", "entity", "fact"):
        ident = r.get("id")
        return f"(type {kind}, id {ident if isinstance(ident, str) else _show(ident)})"
    if kind in ("provenance", "ending"):
        return f"(type {kind}, fact {r.get('fact_id')}, episode {r.get('episode_id')})"
    if kind == "link":
        return f"(type link, {r.get('kind')} {r.get('src')} -> {r.get('dst')})"
    if kind == "mention":
        return f"(type mention, episode {r.get('episode_id')}, entity {r.get('entity_id')})"
    return f"(type {_show(kind)})"


def validate_export(
    rows: Sequence[Any],
    store: GraphStore | None = None,
    *,
    dim: int | None = None,
    lines: Sequence[int] | None = None,
    source: str | None = None,
) -> None:
    """Check export rows the way ingest checks its input, before anything is written.

    Types and required fields, known kinds, statuses and link kinds, ISO-8601 times with a
    timezone, ``valid_to`` after ``valid_from`` (on facts and claims), embeddings of the
    store's dimension ``dim``, and references: a fact's subject and object entities, the fact
    and episode of provenance and endings, both facts of a link and both ends of a mention
    must be in the rows or in ``store``, in the same group. ``meta`` rows are skipped. Raises
    one ``InputError`` listing the first problems, each as ``row N (type fact, id ...): field:
    what is wrong``, where N is ``lines[i]`` (the file's line numbers) or the 1-based position.
    """
    problems = _Problems(lines, rows)
    if lines is not None and len(lines) != len(rows):
        raise InputError(f"lines: {len(lines)} line numbers for {len(rows)} rows")
    # id -> (group, index) of the episodes, entities and facts the rows hold (the first of
    # duplicates; bad rows too, so that what refers to them is not reported as well)
    held: dict[str, dict[str, tuple[str, int]]] = {"episode": {}, "entity": {}, "fact": {}}
    for index, r in enumerate(rows):
        if isinstance(r, dict) and r.get("type") in held:
            ident, group = r.get("id"), r.get("group_id")
            if isinstance(ident, str) and isinstance(group, str):
                held[r["type"]].setdefault(ident, (group, index))
    entity_keys: dict[tuple[str, str, str], int] = {}
    valid: list[int] = []
    for index, r in enumerate(rows):
        if not isinstance(r, dict):
            problems.add(index, f"expected an export row (an object), got {type(r).__name__}")
            continue
        kind = r.get("type")
        if kind == "meta":
            continue
        if not isinstance(kind, str) or kind not in _CHECKS:
            problems.add(index, f"type: expected one of {', '.join(EXPORT_TYPES)}")
            continue
        check = _CHECKS[kind]
        unknown = set(r) - _FIELDS[kind]
        try:
            if unknown:
                raise _Bad("fields", f"unknown field(s) {sorted(unknown)}")
            check(r, dim)
        except _Bad as exc:
            problems.add(index, str(exc))
            continue
        if kind in held:
            first = held[kind][r["id"]][1]
            if first != index:
                problems.add(index, f"id: also on row {problems.number(first)}")
                continue
            if kind == "entity":
                key = (r["group_id"], r["key"], r["entity_type"])
                other = entity_keys.setdefault(key, index)
                if other != index:
                    problems.add(
                        index,
                        f"key: {r['key']!r} ({r['entity_type']}) is also the key of row "
                        f"{problems.number(other)} in group {r['group_id']}",
                    )
                    continue
        valid.append(index)
    stored = _stored_groups(rows, valid, held, store)
    for index in valid:
        r = rows[index]
        kind = r["type"]
        group = r.get("group_id")
        for name, target in _REFS.get(kind, ()):
            ref = r.get(name)
            if ref is None:
                continue
            where = held[target].get(ref)
            ref_group = where[0] if where is not None else stored[target].get(ref)
            if ref_group is None:
                problems.add(
                    index,
                    f"{name}: {target} {ref} is neither in the {'file' if lines else 'rows'} "
                    "nor in the store" + (f" (group {group})" if target == "entity" else ""),
                )
                break
            if group is None:
                group = ref_group  # provenance, links, mentions: the group of their first end
            elif ref_group != group:
                problems.add(
                    index,
                    f"{name}: {target} {ref} is in group {ref_group}, not {group}",
                )
                break
    if problems.found:
        found = sorted(problems.found)
        listed = "; ".join(text for _, text in found[:_MAX_PROBLEMS])
        more = len(found) - _MAX_PROBLEMS
        prefix = f"{source}: " if source else ""
        rest = f"; and {more} more invalid row(s)" if more > 0 else ""
        raise InputError(f"{prefix}{listed}{rest}; nothing was imported")


def _stored_groups(
    rows: Sequence[Any],
    valid: list[int],
    held: dict[str, dict[str, tuple[str, int]]],
    store: GraphStore | None,
) -> dict[str, dict[str, str]]:
    """The group of each referenced episode, entity and fact that the rows do not hold but the
    store does."""
    out: dict[str, dict[str, str]] = {"episode": {}, "entity": {}, "fact": {}}
    if store is None:
        return out
    wanted: dict[str, set[str]] = {"episode": set(), "fact": set()}
    for index in valid:
        r = rows[index]
        for name, target in _REFS.get(r["type"], ()):
            ref = r.get(name)
            if target != "entity" and ref is not None and ref not in held[target]:
                wanted[target].add(ref)
    if wanted["episode"]:
        for ep in store.episodes(sorted(wanted["episode"])):
            out["episode"][ep.id] = ep.group_id
    if wanted["fact"]:
        for fact in store.fact_records(sorted(wanted["fact"])):
            out["fact"][fact.id] = fact.group_id
    entities: dict[str, set[str]] = {}  # group -> entity ids (entity reads are per group)
    for index in valid:
        r = rows[index]
        group = r.get("group_id")
        if r["type"] == "mention":  # a mention is in its episode's group
            episode = held["episode"].get(r["episode_id"])
            group = episode[0] if episode is not None else out["episode"].get(r["episode_id"])
        for name, target in _REFS.get(r["type"], ()):
            ref = r.get(name)
            if target == "entity" and ref is not None and ref not in held["entity"] and group:
                entities.setdefault(group, set()).add(ref)
    for group, ids in entities.items():
        for entity in store.find_entities_by_ids(group, sorted(ids)):
            out["entity"][entity.id] = group
    return out
