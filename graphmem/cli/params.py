"""Click parameter types: dates (ISO-8601 with an offset, or a date) and recall filters."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Any

import click

from .._errors import InputError
from ..sources.times import parse_time

__all__ = ["DATETIME", "FILTER", "DateTimeType", "FilterType", "build_filters"]

if TYPE_CHECKING:  # click >= 8.2 types ParamType as a generic; older ones are not subscriptable
    _DateBase = click.ParamType[datetime, Any]
    _FilterBase = click.ParamType[tuple[str, str, Any], Any]
else:
    _DateBase = _FilterBase = click.ParamType

_OPS = {"=": "$eq", "!=": "$ne", "<": "$lt", "<=": "$lte", ">": "$gt", ">=": "$gte"}
_DATE_LIKE = re.compile(r"^\d{4}-\d{2}-\d{2}(?:[T ][0-9:.]+(?:Z|[+-]\d{2}:?\d{2})?)?$")
_FILTER = re.compile(
    r"^\s*(?P<path>[^<>=!\s][^<>=!]*?)\s*(?P<op><=|>=|!=|==|=|<|>)\s*(?P<value>.*)$"
)


class DateTimeType(_DateBase):
    """ISO-8601 with ``Z`` or an offset (``2024-05-01T10:00:00Z``), or a date (``2024-05-01``)."""

    name = "datetime"

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        return "T"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> datetime:
        if isinstance(value, datetime):
            return value
        try:
            return parse_time(str(value), "time")
        except InputError as exc:
            self.fail(str(exc).removeprefix("time: "), param, ctx)


def _scalar(text: str) -> Any:
    """A filter value: a JSON scalar when it parses as one (true, 12.5, "x"), else the text."""
    try:
        value = json.loads(text)
    except ValueError:
        return text
    if isinstance(value, bool | int | float | str):
        return value
    return text


class FilterType(_FilterBase):
    """``PATH=VALUE``, ``PATH!=VALUE``, ``PATH<VALUE``, ``PATH<=VALUE``, ``PATH>VALUE``,
    ``PATH>=VALUE``; the value is read as a JSON scalar when it is one."""

    name = "filter"

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        return "PATH<OP>VALUE"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> tuple[str, str, Any]:
        if isinstance(value, tuple):
            return value
        match = _FILTER.match(str(value))
        if match is None or not match.group("value").strip():
            self.fail(
                f"{value!r} is not a filter; expected PATH=VALUE, PATH!=VALUE, PATH<VALUE, "
                "PATH<=VALUE, PATH>VALUE or PATH>=VALUE (e.g. success=true, params.force<13)",
                param,
                ctx,
            )
        op = "=" if match.group("op") == "==" else match.group("op")
        text = match.group("value").strip()
        if text[0] in "<>=!":
            self.fail(f"{value!r}: the value {text!r} starts with an operator (a doubled "
                      "<, >, = or !?)", param, ctx)
        operand = _scalar(text)
        if op in ("<", "<=", ">", ">=") and isinstance(operand, str | bool):
            # Unquoted text after < or > is most likely a mistyped number; text order is
            # asked for by quoting it.
            quoted = text.startswith('"') and isinstance(operand, str)
            if not quoted and not _DATE_LIKE.match(text):
                self.fail(f"{value!r}: {op} compares with a number, a date (2024-05-01) or "
                          f'quoted text (PATH{op}"{text}"); {text!r} is none of them',
                          param, ctx)
        return match.group("path").strip(), _OPS[op], operand


def build_filters(items: Iterable[tuple[str, str, Any]]) -> dict[str, Any] | None:
    """Parsed filters -> the recall filter mapping; repeated ``PATH=`` values become ``$in``."""
    out: dict[str, dict[str, Any]] = {}
    for path, op, value in items:
        spec = out.setdefault(path, {})
        if op == "$eq" and ("$eq" in spec or "$in" in spec):
            previous = spec.pop("$eq", None)
            values = list(spec.get("$in", ()))
            if previous is not None:
                values.append(previous)
            values.append(value)
            spec["$in"] = values
        else:
            spec[op] = value
    if not out:
        return None
    return {path: (spec["$eq"] if list(spec) == ["$eq"] else spec) for path, spec in out.items()}


DATETIME = DateTimeType()
FILTER = FilterType()
