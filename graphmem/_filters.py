"""The recall filter language: conditions on a subject's current literal facts.

``{"success": True, "params.force_peak": {"$lt": 13}}`` keeps facts whose subject currently has
``success == True`` and some ``params.force_peak < 13``. Operators: equality, ``$eq $ne $lt $lte
$gt $gte $in``. A multi-valued path matches when any value does (``$ne``: when none does).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ._errors import FilterError, PredicateError
from ._predicates import normalize_predicate

__all__ = [
    "SLACK",
    "Condition",
    "driving",
    "equal_texts",
    "finite_number",
    "matches",
    "parse_filters",
    "plain_text",
    "value_texts",
    "widen",
]

_OPS = ("$eq", "$ne", "$lt", "$lte", "$gt", "$gte", "$in")


@dataclass(frozen=True)
class Condition:
    path: str
    op: str
    operand: Any


def _show(value: object, limit: int = 80) -> str:
    """``repr`` for error messages: short, and safe for values whose repr fails (huge ints)."""
    try:
        text = repr(value)
    except Exception:
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _scalar(value: Any, where: str) -> None:
    if value is None or isinstance(value, dict | list | tuple | set):
        raise FilterError(
            f"filter {where}: expected a string, number or boolean, got {_show(value)}"
        )


def parse_filters(filters: Mapping[str, Any] | None) -> list[Condition]:
    if filters is None:
        return []
    if not isinstance(filters, Mapping):
        raise FilterError(
            f"filters must be a mapping of path to condition, got {type(filters).__name__}"
        )
    out: list[Condition] = []
    for raw_path, spec in filters.items():
        try:
            path = normalize_predicate(raw_path)
        except PredicateError as exc:
            raise FilterError(f"filter path {_show(raw_path)}: {exc}") from None
        if isinstance(spec, Mapping):
            if not spec:
                raise FilterError(f"filter {path!r}: empty condition")
            for op, operand in spec.items():
                if op not in _OPS:
                    raise FilterError(
                        f"filter {path!r}: unknown operator {_show(op)}; "
                        f"use one of {', '.join(_OPS)}"
                    )
                if op == "$in":
                    if not isinstance(operand, list | tuple) or not operand:
                        raise FilterError(f"filter {path!r}: $in needs a non-empty list")
                    for item in operand:
                        _scalar(item, f"{path!r} $in")
                    operand = tuple(operand)
                else:
                    _scalar(operand, f"{path!r} {op}")
                    if op in ("$lt", "$lte", "$gt", "$gte") and isinstance(operand, bool):
                        raise FilterError(f"filter {path!r}: {op} needs a number or string")
                out.append(Condition(path, op, operand))
        else:
            _scalar(spec, repr(path))
            out.append(Condition(path, "$eq", spec))
    return out


def _same(a: Any, b: Any) -> bool:
    # True == 1 in Python; a memory filter must not confuse them.
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, str) != isinstance(b, str):
        return False
    return bool(a == b)


def _compare(value: Any, op: str, operand: Any) -> bool:
    if isinstance(value, bool):
        return False
    numeric = isinstance(value, int | float) and isinstance(operand, int | float)
    textual = isinstance(value, str) and isinstance(operand, str)
    if not (numeric or textual):
        return False
    if op == "$lt":
        return bool(value < operand)
    if op == "$lte":
        return bool(value <= operand)
    if op == "$gt":
        return bool(value > operand)
    return bool(value >= operand)


def matches(values: Mapping[str, list[Any]], conditions: list[Condition]) -> bool:
    for cond in conditions:
        present = values.get(cond.path, [])
        if cond.op == "$eq":
            ok = any(_same(v, cond.operand) for v in present)
        elif cond.op == "$ne":
            ok = not any(_same(v, cond.operand) for v in present)
        elif cond.op == "$in":
            ok = any(_same(v, item) for v in present for item in cond.operand)
        else:
            ok = any(_compare(v, cond.op, cond.operand) for v in present)
        if not ok:
            return False
    return True


# ------------------------------------------------------------- narrowing a filter in a store
# A store narrows a filter down to candidate subjects (GraphStore.filter_candidates) and
# matches() above decides: a store may keep a subject that fails, never drop one that passes.
# Numbers are compared widened by a relative SLACK: the store parses a value's JSON text itself,
# and SQLite's text-to-float conversion is not guaranteed to round as Python's does.
SLACK = 1e-9
_TINY = 1e-300


def finite_number(operand: Any) -> float | None:
    """A numeric operand as a finite float; None for a bool, a string, NaN, an infinity or an
    int too large for a float (a store then only checks that the value is a number)."""
    if isinstance(operand, bool) or not isinstance(operand, int | float):
        return None
    try:
        number = float(operand)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def plain_text(operand: Any) -> str | None:
    """A string operand that a store can take as a parameter (UTF-8: no lone surrogates)."""
    if not isinstance(operand, str):
        return None
    try:
        operand.encode("utf-8")
    except UnicodeEncodeError:
        return None
    return operand


def widen(number: float) -> tuple[float, float]:
    """An interval around ``number`` that holds every float a rounding error could make of it."""
    slack = abs(number) * SLACK + _TINY
    return number - slack, number + slack


def value_texts(operand: Any) -> list[str]:
    """Stored JSON texts (graphmem writes ``json.dumps``; ASCII-escaped too) of a value that
    equals ``operand``: a value stored as one of them is equal for sure. Empty where no text is
    (NaN, whose JSON text does not equal itself, an unencodable string, a 5000-digit int)."""
    if isinstance(operand, float) and not math.isfinite(operand):
        return []
    if isinstance(operand, str) and plain_text(operand) is None:
        return []
    try:
        texts = [json.dumps(operand, ensure_ascii=False), json.dumps(operand)]
    except ValueError:
        return []
    return sorted(set(texts))


def equal_texts(operand: Any) -> list[str]:
    """``value_texts`` and, for a number, its other spelling (13 and 13.0) when that is equal."""
    texts = set(value_texts(operand))
    if isinstance(operand, int) and not isinstance(operand, bool):
        try:
            if float(operand) == operand:
                texts.update(value_texts(float(operand)))
        except OverflowError:
            pass
    elif isinstance(operand, float) and math.isfinite(operand) and operand.is_integer():
        texts.update(value_texts(int(operand)))
    return sorted(texts)


def driving(conditions: Sequence[Condition]) -> Condition | None:
    """The condition a store scans for first: the first positive one (every subject that passes
    has a value that matches it; write the most selective first); None when all are $ne."""
    return next((c for c in conditions if c.op != "$ne"), None)
