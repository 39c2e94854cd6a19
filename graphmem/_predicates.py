"""The predicate registry: which predicates are functional (one value at a time), and which
belong to a family (one of them at a time between the same two entities).

Supersession acts only on functional (``one``) predicates; multi-valued (``many``) predicates
accumulate values. Unknown predicates default to ``many`` so that nothing is replaced by accident.

A *family* (``Predicate.family``) is a cardinality across predicates: between the same subject
and object at most one predicate of the family holds at a time. "Ana is my sister" then "Ana is
my cousin, not my sister" is a correction although the predicate changed (``sister_of`` →
``cousin_of``, family ``kinship``); a later plain statement of another member ends the earlier
one where it starts, as a new value of a functional predicate would. Built-in families:
``kinship``, ``relationship`` (married, partner, ex…) and ``reporting`` (who manages whom).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel

from ._errors import PredicateError

__all__ = ["Family", "Predicate", "PredicateRegistry", "default_families", "normalize_predicate"]

Cardinality = Literal["one", "many"]
_IDENT = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z0-9_]+)*$")


class Predicate(BaseModel):
    name: str
    cardinality: Cardinality = "many"
    inverse: str | None = None
    description: str = ""
    # Between the same subject and object, at most one predicate of a family holds at a time.
    family: str | None = None


@dataclass(frozen=True)
class Family:
    """A predicate family as the reconciler uses it: its members and which are functional."""

    name: str
    members: Mapping[str, bool] = field(hash=False)  # predicate -> functional (cardinality one)

    def functional(self, predicate: str) -> bool:
        return self.members.get(predicate, False)


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
    # Common one-valued relations (a new value replaces the old one).
    "has_manager": "the subject's current manager (one at a time; family reporting)",
    "reports_to": "whom the subject reports to now (one at a time; family reporting)",
    "has_boss": "the subject's current boss (one at a time; family reporting)",
    "employed_by": "the subject's current employer (like works_at)",
    "works_for": "the subject's current employer (like works_at)",
    "spouse_of": "the subject's spouse (one at a time; family relationship)",
    "born_in": "where the subject was born (a later value replaces an earlier one)",
    "located_at": "where the subject is now (like located_in)",
    "lives_at": "the subject's current address (like lives_in)",
    "timezone": "the subject's current time zone",
    # Amounts and dates a person states and later changes ("I set the budget to $5,000").
    "budget": "the subject's current budget (an amount)",
    "deadline": "the subject's current deadline (a date)",
    "scheduled_for": "when an event is scheduled now (a date or time)",
    "price": "what the subject costs or cost (an amount)",
    "salary": "what the subject earns now (an amount)",
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
    "plans_to": "something the subject plans to do",
    "decided_to": "something the subject decided to do",
    "chose": "something the subject chose or went with",
    "works_on": "something the subject is working on",
    "trying_to": "something the subject is trying to do now",
}

# Families: (description, predicates). Members not listed above are multi-valued: a person has
# several cousins, a manager several reports; the family only limits each pair of entities.
# Left out on purpose: friend_of, knows, colleague_of, works_with (they hold beside a kinship or
# a reporting relation), nationality / citizen_of (dual citizenship).
_FAMILIES: dict[str, tuple[str, tuple[str, ...]]] = {
    "kinship": (
        "how the subject is related to the object by family",
        (
            "parent_of", "child_of", "mother_of", "father_of", "son_of", "daughter_of",
            "sibling_of", "sister_of", "brother_of", "half_sibling_of", "step_sibling_of",
            "cousin_of", "aunt_of", "uncle_of", "niece_of", "nephew_of", "grandparent_of",
            "grandchild_of", "grandmother_of", "grandfather_of", "grandson_of",
            "granddaughter_of", "in_law_of",
        ),
    ),
    "relationship": (
        "the couple relationship between the subject and the object",
        (
            "married_to", "spouse_of", "partner_of", "engaged_to", "dating", "ex_of",
            "ex_partner_of", "ex_spouse_of", "divorced_from", "separated_from",
        ),
    ),
    "reporting": (
        "who manages whom between the subject and the object",
        ("has_manager", "reports_to", "has_boss", "manager_of", "manages", "boss_of"),
    ),
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
        self._families: dict[str, Family] | None = None  # predicate -> family, built on demand
        for name, text in _FUNCTIONAL.items():
            self._by_name[name] = Predicate(name=name, cardinality="one", description=text)
        for name, text in _MULTI.items():
            self._by_name[name] = Predicate(name=name, cardinality="many", description=text)
        for family, (text, members) in _FAMILIES.items():
            for name in members:
                known = self._by_name.get(name)
                if known is None:
                    words = name.replace("_", " ")
                    known = Predicate(name=name, description=f"{text}: {words}")
                self._by_name[name] = known.model_copy(update={"family": family})
        if isinstance(predicates, Mapping):
            for name, card in predicates.items():
                self.register(Predicate(name=name, cardinality=_cardinality(card)))
        elif predicates is not None:
            for predicate in predicates:
                self.register(predicate)

    def register(self, predicate: Predicate | str, cardinality: Cardinality = "many") -> Predicate:
        if isinstance(predicate, str):
            predicate = Predicate(name=predicate, cardinality=cardinality)
        family = predicate.family
        if family is not None:
            family = _family_name(family)
        canon = predicate.model_copy(
            update={"name": normalize_predicate(predicate.name), "family": family}
        )
        self._by_name[canon.name] = canon
        self._families = None
        return canon

    def get(self, name: str) -> Predicate:
        canon = normalize_predicate(name)
        return self._by_name.get(canon) or Predicate(name=canon, cardinality="many")

    def is_functional(self, name: str) -> bool:
        return self.get(name).cardinality == "one"

    def family(self, name: str) -> str | None:
        """The family of a predicate (``None``: it has none)."""
        return self.get(name).family

    def family_of(self, name: str) -> Family | None:
        """The predicate's family with its members, or ``None``."""
        return self.families_by_predicate().get(normalize_predicate(name))

    def families(self) -> dict[str, Family]:
        """Every family, by name."""
        return {f.name: f for f in self.families_by_predicate().values()}

    def families_by_predicate(self) -> dict[str, Family]:
        """Each family member's family (what ingest and forget reconcile by)."""
        if self._families is None:
            members: dict[str, dict[str, bool]] = {}
            for predicate in self._by_name.values():
                if predicate.family is not None:
                    members.setdefault(predicate.family, {})[predicate.name] = (
                        predicate.cardinality == "one"
                    )
            built = {name: Family(name, dict(sorted(m.items()))) for name, m in members.items()}
            self._families = {p: built[name] for name, m in members.items() for p in m}
        return self._families

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self._by_name

    def __iter__(self) -> Iterator[Predicate]:
        return iter(sorted(self._by_name.values(), key=lambda p: p.name))

    def names(self) -> list[str]:
        return sorted(self._by_name)


def default_families(functional: Mapping[str, bool] | None = None) -> dict[str, Family]:
    """The built-in families by predicate, with ``functional`` (predicate -> cardinality one)
    overriding the built-in cardinalities where given."""
    built = PredicateRegistry().families_by_predicate()
    if not functional:
        return built
    out: dict[str, Family] = {}
    remade: dict[str, Family] = {}
    for predicate, family in built.items():
        if family.name not in remade:
            members = {m: functional.get(m, f) for m, f in family.members.items()}
            remade[family.name] = Family(family.name, members)
        out[predicate] = remade[family.name]
    return out


def _family_name(value: str) -> str:
    if not isinstance(value, str) or not re.match(r"^[a-z][a-z0-9_]*$", value.strip()):
        raise PredicateError(
            f"family {value!r} is not a snake_case identifier (letters, digits and _)"
        )
    return value.strip()


def _cardinality(value: str) -> Cardinality:
    if value not in ("one", "many"):
        raise PredicateError(f"cardinality must be 'one' or 'many', got {value!r}")
    return "one" if value == "one" else "many"
