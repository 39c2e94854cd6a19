"""The recall filter (``filter_candidates``) in SQL: conditions on a subject's facts' values,
pushed down so that only subjects that may match come back; ``matches()`` has the last word."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..._filters import Condition, driving, equal_texts, finite_number, plain_text, widen
from .._base import TimeView
from .rows import VIEW_SQL

if TYPE_CHECKING:
    from .db import SQLiteDB

__all__ = ["filter_candidates"]

# The recall filter in SQL (filter_candidates): the same view for a second alias, and a value
# test that is true for every value matches() would accept and may be true for a few more.
_VIEW_SQL_X = VIEW_SQL.replace("f.", "x.")
_NUMBER_SQL = "json_type({j}) IN ('integer', 'real')"
_TEXT_SQL = "json_type({j}) = 'text'"
_CMP_SQL = {"$lt": "<", "$lte": "<=", "$gt": ">", "$gte": ">="}


def _bind(params: dict[str, Any], key: str, values: Sequence[Any]) -> str:
    """Parameters ``:key_0, :key_1, ...`` for values: values never go into the SQL text."""
    for i, value in enumerate(values):
        params[f"{key}_{i}"] = value
    return ", ".join(f":{key}_{i}" for i in range(len(values)))


def _maybe_sql(alias: str, cond: Condition, key: str, params: dict[str, Any]) -> str:
    """True when ``alias.value_json`` (not null) may match ``cond``: false only where matches()
    is. JSON that SQLite 3.40 rejects (NaN, Infinity) may match; so may a string with a
    backslash escape (json_extract stops at \\u0000), and a number within SLACK of a bound."""
    j = f"{alias}.value_json"
    value = f"json_extract({j}, '$')"
    number, text = _NUMBER_SQL.format(j=j), _TEXT_SQL.format(j=j)
    escaped = f"instr({j}, '\\') > 0"
    terms: list[str] = []
    if cond.op in ("$eq", "$in"):
        operands = cond.operand if cond.op == "$in" else (cond.operand,)
        bools = sorted({"true" if o else "false" for o in operands if isinstance(o, bool)})
        if bools:
            terms.append(f"json_type({j}) IN ({_bind(params, key + 'b', bools)})")
        strings = [o for o in operands if isinstance(o, str)]
        plain = [t for t in (plain_text(o) for o in strings) if t is not None]
        if len(plain) < len(strings):
            terms.append(text)  # a string SQLite cannot take: any string may match
        elif plain:
            terms.append(
                f"({text} AND ({value} IN ({_bind(params, key + 's', plain)}) OR {escaped}))"
            )
        numbers = [o for o in operands if not isinstance(o, bool | str)]
        finite = [n for n in (finite_number(o) for o in numbers) if n is not None]
        if len(finite) < len(numbers):
            terms.append(number)  # NaN, an infinity, a huge int: any number may match
        elif finite:
            spans = []
            for i, n in enumerate(finite):
                lo, hi = widen(n)
                params[f"{key}lo{i}"], params[f"{key}hi{i}"] = lo, hi
                spans.append(f"{value} BETWEEN :{key}lo{i} AND :{key}hi{i}")
            terms.append(f"({number} AND ({' OR '.join(spans)}))")
    else:
        cmp = _CMP_SQL[cond.op]
        if isinstance(cond.operand, str):
            plain_operand = plain_text(cond.operand)
            if plain_operand is None:
                terms.append(text)
            else:
                params[key] = plain_operand
                terms.append(f"({text} AND ({value} {cmp} :{key} OR {escaped}))")
        else:
            bound = finite_number(cond.operand)
            if bound is None:
                terms.append(number)
            else:
                lo, hi = widen(bound)
                params[key] = hi if cmp[0] == "<" else lo
                test = f"{number} AND {value} {cmp[0]}= :{key}"
                if cmp in ("<", ">"):  # a value stored as the bound itself fails for sure
                    equal = _bind(params, key + "eq", equal_texts(cond.operand))
                    test += f" AND {j} NOT IN ({equal})"
                terms.append(f"({test})")
    return f"(CASE WHEN json_valid({j}) THEN {' OR '.join(terms) or '0'} ELSE 1 END)"


def filter_candidates(
    db: SQLiteDB, group_id: str, conditions: Sequence[Condition], view: TimeView, limit: int
) -> list[str]:
    """All conditions in one query: a scan of the driving condition's predicate, newest
    first, that stops at ``limit`` subjects; the others as EXISTS on the subject's timeline
    index. ``$ne`` drops a subject only when an equal value is stored as its exact text."""
    if limit <= 0 or not conditions:
        return []
    params: dict[str, Any] = {"g": group_id, "at": view.at, "known": view.known, "lim": limit}
    drive = driving(conditions)
    where: list[str] = []
    for i, cond in enumerate(conditions):
        if cond is drive:
            continue
        params[f"p{i}"] = cond.path
        inner = (
            "SELECT 1 FROM facts x WHERE x.group_id = :g AND x.subject_id = f.subject_id "
            f"AND x.predicate = :p{i} AND {_VIEW_SQL_X} AND "
        )
        if cond.op != "$ne":
            test = _maybe_sql("x", cond, f"c{i}", params)
            where.append(f"EXISTS ({inner}x.value_json IS NOT NULL AND {test})")
        elif texts := equal_texts(cond.operand):
            equal = _bind(params, f"c{i}", texts)
            where.append(f"NOT EXISTS ({inner}x.value_json IN ({equal}))")
    if drive is None:  # only $ne: subjects with any value of the paths
        paths = _bind(params, "d", sorted({c.path for c in conditions}))
        head = f"SELECT f.subject_id FROM facts f WHERE f.predicate IN ({paths})"
        tail = "GROUP BY f.subject_id ORDER BY max(f.rowid) DESC LIMIT :lim"
    else:
        params["d"] = drive.path
        head = "SELECT DISTINCT f.subject_id FROM facts f WHERE f.predicate = :d"
        where.append(_maybe_sql("f", drive, "dv", params))
        tail = "ORDER BY f.rowid DESC LIMIT :lim"
    sql = " AND ".join([head, "f.group_id = :g", "f.value_json IS NOT NULL", VIEW_SQL, *where])
    return [str(row[0]) for row in db.fetch_all(f"{sql} {tail}", params)]
