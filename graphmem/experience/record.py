"""An experience record: the JSON an attempt is stored as, checked before anything is written,
and the views recall reads from it (its words, its filterable paths).

``experience_record`` builds the episode content ``{"task", "run_id", "episode", "state",
"params", "outcome"}`` and the metadata that carries ``meta`` and ``payload``; every argument is
checked first and an ``InputError`` names the one at fault.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from .._errors import InputError
from ..extract.structured import count_leaves, is_vector, parse_json_record, segment

__all__ = [
    "SECTIONS",
    "experience_record",
    "flatten",
    "parse_experience",
    "plain_json",
    "terms",
    "text_view",
]

SECTIONS = ("state", "params", "outcome")
_MAX_LEAVES = 500
_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
_STOP = frozenset(
    (
        "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "has", "have", "in", "is",
        "it", "of", "on", "or", "that", "the", "this", "to", "was", "were", "with", "what", "which",
        "when", "where", "how", "did", "do", "does", "i", "my", "me", "we", "our",
    )
)

def plain_json(value: object) -> object:
    # numpy arrays and scalars (positions straight from a simulator) become JSON values.
    tolist = getattr(value, "tolist", None)
    if callable(tolist):
        return tolist()
    raise TypeError(f"{type(value).__name__} is not JSON-serialisable")


def _json_section(value: object, name: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InputError(f"{name} must be a mapping, got {type(value).__name__}")
    try:
        text = json.dumps(dict(value), default=plain_json, allow_nan=False, ensure_ascii=False)
    except ValueError as exc:
        raise InputError(f"{name}: {exc} (NaN and infinities have no JSON form)") from None
    except (TypeError, RecursionError) as exc:
        raise InputError(f"{name} must be JSON-serialisable: {exc}") from None
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def _identity(value: object, name: str) -> str | int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise InputError(f"{name} must be a string or an integer, got {type(value).__name__}")
    if isinstance(value, str) and not value.strip():
        raise InputError(f"{name} must not be empty")
    negative = value < 0 if isinstance(value, int) else value.strip().startswith("-") and (
        value.strip()[1:].isdigit()
    )
    if negative:
        raise InputError(f"{name} is a number within its run, 0 or more; got {value!r}"[:120])
    return value


def experience_record(
    task: object,
    *,
    state: object = None,
    params: object = None,
    outcome: object = None,
    payload: object = None,
    meta: object = None,
    run_id: object = None,
    episode: object = None,
) -> tuple[str, dict[str, Any]]:
    """The episode content (JSON record) and metadata of one attempt; ``InputError`` names the
    argument at fault, before anything is stored."""
    if not isinstance(task, str) or not task.strip():
        raise InputError(f"task must be a non-empty string, got {task!r}"[:120])
    record: dict[str, Any] = {"task": task.strip()}
    run = _identity(run_id, "run_id")
    number = _identity(episode, "episode")
    if run is not None:
        record["run_id"] = run
    if number is not None:
        record["episode"] = number
    for name, value in (("state", state), ("params", params), ("outcome", outcome)):
        section = _json_section(value, name)
        if section:
            record[name] = section
    success = record.get("outcome", {}).get("success")
    if success is not None and not isinstance(success, bool):
        raise InputError(f"outcome['success'] must be true or false, got {success!r}")
    leaves = count_leaves(record.get("params")) + (success is not None)
    if leaves > _MAX_LEAVES:
        raise InputError(
            f"params has {leaves} values that would become facts (at most {_MAX_LEAVES}): "
            "move large arrays or rarely searched fields to payload= or meta= (nothing was "
            "stored)"
        )
    metadata: dict[str, Any] = {}
    for name, value in (("meta", meta), ("payload", payload)):
        section = _json_section(value, name)
        if section:
            metadata[name] = section
    content = json.dumps(record, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return content, metadata


def parse_experience(content: str) -> dict[str, Any]:
    """An experience episode's record; ``InputError`` when it is not one (no ``task``)."""
    try:
        record = parse_json_record(content)
    except InputError as exc:
        raise InputError(str(exc).replace("kind='json'", "kind='experience'")) from None
    task = record.get("task")
    if not isinstance(task, str) or not task.strip():
        raise InputError("kind='experience' content must be a JSON object with a 'task' string")
    for name in SECTIONS:
        if name in record and not isinstance(record[name], dict):
            raise InputError(f"kind='experience' field {name!r} must be a JSON object")
    return record


def _leaves(prefix: str, node: Any, out: dict[str, list[Any]]) -> None:
    if isinstance(node, dict):
        for key, child in node.items():
            _leaves(f"{prefix}.{segment(key)}" if prefix else segment(key), child, out)
    elif isinstance(node, list):
        if is_vector(node):
            out.setdefault(prefix, []).extend(node)
            for index, item in enumerate(node):
                out[f"{prefix}.{index}"] = [item]
        elif all(not isinstance(x, dict | list) for x in node):
            out.setdefault(prefix, []).extend(x for x in node if x is not None)
        else:
            for index, child in enumerate(node):
                _leaves(f"{prefix}.{index}", child, out)
    elif node is not None:
        out.setdefault(prefix, []).append(node)


def flatten(record: Mapping[str, Any], meta: Mapping[str, Any]) -> dict[str, list[Any]]:
    """Every filterable path of an experience and its values."""
    out: dict[str, list[Any]] = {}
    for key in ("task", "run_id", "episode"):
        if record.get(key) is not None:
            out[key] = [record[key]]
    for name in SECTIONS:
        _leaves(name, record.get(name) or {}, out)
    _leaves("meta", dict(meta), out)
    return out


def text_view(record: Mapping[str, Any]) -> str:
    """What text search and the embedding read: the task and the records' words (string and
    boolean values with their field names); numbers are left to the state distance."""
    parts = [str(record.get("task", ""))]
    for name in SECTIONS:
        flat: dict[str, list[Any]] = {}
        _leaves(name, record.get(name) or {}, flat)
        for path, values in flat.items():
            words = [v for v in values if isinstance(v, str | bool)]
            if words:
                field_name = path.rsplit(".", 1)[-1].replace("_", " ")
                parts.append(f"{field_name} {' '.join(str(w).lower() for w in words)}")
    return ". ".join(p for p in parts if p)


def terms(text: str) -> list[str]:
    out = []
    for word in _TOKEN.findall(text.lower()):
        if word in _STOP:
            continue
        if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]  # plural "cubes" finds "cube"
        out.append(word)
    return out
