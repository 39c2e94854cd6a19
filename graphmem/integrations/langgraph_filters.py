"""The LangGraph store's filters and values in graphmem's terms (no LangGraph import here).

``matches`` is LangGraph's own filter rule (the one its in-memory and Postgres stores apply):
each top-level key of the filter is compared with the item's value under that key; a dict
holding ``$`` operators applies them (``$eq $ne $gt $gte $lt $lte``), another dict compares
nested keys, a list compares element by element, anything else by equality.

``graphmem_filters`` hands what recall can check itself to ``GraphMemory.recall(filters=)``
(the leaves of an item's value are facts ``value.<path>``); ``leaves`` lists those leaves the
way the structured extractor names them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ..extract.structured import is_payload, is_vector, segment

__all__ = ["graphmem_filters", "leaves", "matches"]

_COMPARE = {"$gt", "$gte", "$lt", "$lte"}


def _number(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _apply(value: Any, operator: str, wanted: Any) -> bool:
    if operator == "$eq":
        return bool(value == wanted)
    if operator == "$ne":
        return bool(value != wanted)
    if operator in _COMPARE:
        a, b = _number(value), _number(wanted)
        if a is None or b is None:
            return False
        return {"$gt": a > b, "$gte": a >= b, "$lt": a < b, "$lte": a <= b}[operator]
    raise ValueError(f"unsupported filter operator {operator!r}")


def _compare(value: Any, wanted: Any) -> bool:
    if isinstance(wanted, Mapping):
        if any(str(k).startswith("$") for k in wanted):
            return all(_apply(value, op, arg) for op, arg in wanted.items())
        if not isinstance(value, Mapping):
            return False
        return all(_compare(value.get(k), v) for k, v in wanted.items())
    if isinstance(wanted, list | tuple):
        return (
            isinstance(value, list | tuple)
            and len(value) == len(wanted)
            and all(_compare(a, b) for a, b in zip(value, wanted, strict=True))
        )
    return bool(value == wanted)


def matches(value: Mapping[str, Any], store_filter: Mapping[str, Any]) -> bool:
    """Whether an item's value passes a LangGraph store filter."""
    return all(_compare(value.get(key), wanted) for key, wanted in store_filter.items())


def _scalar(value: Any) -> bool:
    return isinstance(value, str | int | float | bool)


def graphmem_filters(store_filter: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The part of a store filter that recall's ``filters=`` means the same way: equality with
    a scalar and numeric comparisons, on nested keys too. The rest is left to ``matches``."""
    out: dict[str, Any] = {}

    def add(path: str, wanted: Any) -> None:
        if isinstance(wanted, Mapping):
            if any(str(k).startswith("$") for k in wanted):
                ops = {
                    op: arg for op, arg in wanted.items()
                    if (op == "$eq" and _scalar(arg))
                    or (op in _COMPARE and _scalar(arg) and not isinstance(arg, bool))
                }
                if ops:
                    out[path] = ops
                return
            for key, inner in wanted.items():
                add(f"{path}.{segment(str(key))}", inner)
        elif _scalar(wanted):
            out[path] = wanted

    for key, wanted in (store_filter or {}).items():
        add(f"value.{segment(str(key))}", wanted)
    return out or None


def leaves(value: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """The ``(path, scalar)`` facts the structured extractor makes of ``value``: dict keys as
    path segments, a vector one fact per position, a list of scalars one fact per item (a
    set), a list of objects indexed; long numeric payloads are skipped."""
    if isinstance(value, Mapping):
        for key, child in value.items():
            name = segment(str(key))
            yield from leaves(child, f"{prefix}.{name}" if prefix else name)
    elif isinstance(value, list):
        if is_payload(value):
            return
        if is_vector(value):
            for index, item in enumerate(value):
                yield f"{prefix}.{index}", item
        elif all(not isinstance(x, dict | list) for x in value):
            for item in value:
                if item is not None:
                    yield prefix, item
        else:
            for index, child in enumerate(value):
                yield from leaves(child, f"{prefix}.{index}")
    elif value is not None and not (isinstance(value, float) and value != value):
        yield prefix, value
