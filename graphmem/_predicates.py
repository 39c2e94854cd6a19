"""The predicate registry: which predicates are functional (one value at a time).

Supersession acts only on functional (``one``) predicates; multi-valued (``many``) predicates
accumulate values. Unknown predicates default to ``many`` so that nothing is replaced by accident.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Literal

from pydantic import BaseModel

from ._errors import PredicateError

__all__ = ["Predicate", "PredicateRegistry", "normalize_predicate"]

Cardinality = Literal["one", "many"]
_IDENT = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z0-9_]+)*$")


class Predicate(BaseModel):
    name: str
    cardinality: Cardinality = "many"
    inverse: str | None = None
    description: str = ""


_FUNCTIONAL = {
    "lives_in": "where the subject lives now",
    "works_at": "the subject's current employer",
    "located_in": "where the subject is located",
    "has_status": "the subject's current status",
    "has_role": "the subject's current role or job title",
    "prefers": "the subject's current preference",
    "is_a": "what kind of thing the subject is",
    "name": "the subject's name",
    "age": "the subject's age",
    "married_to": "the subject's spouse",
    "grip_force_for": "the grip force that applies to an object",
    "uses_version": "the version the subject uses",
    "has_endpoint": "the endpoint the subject uses",
    "birthday": "the subject's birthday",
    "email": "the subject's email address",
    "phone": "the subject's phone number",
}
_MULTI = {
    "likes": "something the subject likes",
    "dislikes": "something the subject dislikes",
    "knows": "someone the subject knows",
    "owns": "something the subject owns",
    "uses": "something the subject uses",
    "has_pet": "a pet of the subject",
    "friend_of": "a friend of the subject",
    "visited": "a place the subject visited",
    "member_of": "a group the subject belongs to",
    "related_to": "any relation",
}


def normalize_predicate(name: str, *, lenient: bool = False) -> str:
    """Canonical snake_case form; raises ``PredicateError`` for anything else.

    Dotted paths (``params.force_peak``) are allowed for structured-log fields. ``lenient``
    (for extractor output) also folds case and turns spaces and dashes into ``_``.
    """
    if not isinstance(name, str):
        raise PredicateError(f"predicate must be a string, got {type(name).__name__}")
    canon = name.strip()
    if lenient:
        canon = re.sub(r"[\s\-]+", "_", canon).lower()
    if not _IDENT.match(canon):
        raise PredicateError(
            f"predicate {name!r} is not a snake_case identifier "
            "(letters, digits and _ , starting with a letter; dots separate path segments)"
        )
    return canon


class PredicateRegistry:
    """Known predicates and their cardinality; extend with ``register``."""

    def __init__(self, predicates: Iterable[Predicate] | Mapping[str, str] | None = None) -> None:
        self._by_name: dict[str, Predicate] = {}
        for name, text in _FUNCTIONAL.items():
            self._by_name[name] = Predicate(name=name, cardinality="one", description=text)
        for name, text in _MULTI.items():
            self._by_name[name] = Predicate(name=name, cardinality="many", description=text)
        if isinstance(predicates, Mapping):
            for name, card in predicates.items():
                self.register(Predicate(name=name, cardinality=_cardinality(card)))
        elif predicates is not None:
            for predicate in predicates:
                self.register(predicate)

    def register(self, predicate: Predicate | str, cardinality: Cardinality = "many") -> Predicate:
        if isinstance(predicate, str):
            predicate = Predicate(name=predicate, cardinality=cardinality)
        canon = predicate.model_copy(update={"name": normalize_predicate(predicate.name)})
        self._by_name[canon.name] = canon
        return canon

    def get(self, name: str) -> Predicate:
        canon = normalize_predicate(name)
        return self._by_name.get(canon) or Predicate(name=canon, cardinality="many")

    def is_functional(self, name: str) -> bool:
        return self.get(name).cardinality == "one"

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self._by_name

    def __iter__(self) -> Iterator[Predicate]:
        return iter(sorted(self._by_name.values(), key=lambda p: p.name))

    def names(self) -> list[str]:
        return sorted(self._by_name)


def _cardinality(value: str) -> Cardinality:
    if value not in ("one", "many"):
        raise PredicateError(f"cardinality must be 'one' or 'many', got {value!r}")
    return "one" if value == "one" else "many"
