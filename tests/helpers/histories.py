"""Generated histories for the order-independence tests: what people say, when they say it.

A history is a list of episodes with stated times (``reference_time``) drawn from a few days,
so that ties happen. ``chat_turns`` are text turns for the ``rules`` extractor (statements,
negations, corrections, re-affirmations, kinship corrections, manager changes and returns);
``fact_steps`` are ``add_fact`` calls (statements, negations, corrections, family changes).
``believed`` is what memory believes once everything has arrived, without record time.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

__all__ = ["believed", "chat_turns", "fact_steps", "timeline_at"]

BASE = datetime(2024, 1, 1, tzinfo=UTC)
CITIES = ["Lisbon", "Ghent", "Porto", "Braga"]
DRINKS = ["coffee", "tea", "juice"]
EMPLOYERS = ["Kelmor", "Ostavel"]
MANAGERS = ["Rui", "Marta"]


def _turn(rng: random.Random) -> str:
    city, other = rng.sample(CITIES, 2)
    drink, other_drink = rng.sample(DRINKS, 2)
    org = rng.choice(EMPLOYERS)
    manager = rng.choice(MANAGERS)
    return rng.choice(
        [
            f"I live in {city}.",
            f"I moved to {city}.",
            f"I no longer live in {city}.",
            f"I live in {city} again.",
            f"I live in {city}, not {other}.",
            f"I prefer {drink}.",
            f"Actually, I prefer {drink}.",
            f"I prefer {drink}, not {other_drink}.",
            f"I work at {org}.",
            f"I don't work at {org} anymore.",
            "Maya is my sister.",
            "Maya is my cousin.",
            "Maya is my cousin, not my sister.",
            "Maya is my sister, not my cousin.",
            f"{manager} is my manager.",
            f"{manager} is my manager again.",
        ]
    )


def chat_turns(seed: int, n: int, *, days: int = 6, speaker: str = "Ana") -> list[dict[str, Any]]:
    """``n`` chat turns of one speaker, each at one of ``days`` days (ties on purpose)."""
    rng = random.Random(seed)
    turns = []
    for _ in range(n):
        when = BASE + timedelta(days=rng.randrange(days), hours=rng.choice([0, 0, 9]))
        turns.append(
            {
                "content": _turn(rng),
                "reference_time": when,
                "metadata": {"speaker": speaker},
            }
        )
    return turns


def fact_steps(rng: random.Random, n: int, *, days: int = 5) -> list[dict[str, Any]]:
    """``n`` ``add_fact`` calls: statements, negations and corrections of a functional
    predicate and of a kinship family, at one of ``days`` days."""
    steps = []
    for index in range(n):
        when = BASE + timedelta(days=rng.randrange(days))
        kind = rng.choice(["assert", "assert", "negate", "correct"])
        if rng.random() < 0.5:
            step: dict[str, Any] = {
                "subject": "Ana",
                "predicate": rng.choice(["lives_in", "lives_in", "has_manager"]),
                "object": rng.choice(CITIES[:3]),
            }
            if step["predicate"] == "has_manager":
                step["object"] = rng.choice(MANAGERS)
        else:
            step = {
                "subject": "Maya",
                "predicate": rng.choice(["sister_of", "cousin_of"]),
                "object": rng.choice(["Ana", "Bea"]),
            }
        step.update(
            valid_from=when,
            negated=kind == "negate",
            correction=kind == "correct",
            source=f"s{index}",
        )
        steps.append(step)
    return steps


def _day(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def believed(mem: Any, group_id: str) -> tuple[tuple[Any, ...], ...]:
    """Every believed fact (unexpired) with its valid time, subject, predicate and value:
    what the order-independence contract compares (statements' wording, ids and record
    time legitimately follow arrival)."""
    rows = [
        (
            f.subject,
            f.predicate,
            f.target,
            _day(f.valid_from),
            _day(f.valid_to),
            round(f.confidence, 4),
        )
        for f in mem.facts(group_id=group_id, include_history=True)
        if f.expired_at is None
    ]
    return tuple(sorted(rows, key=repr))


def timeline_at(mem: Any, group_id: str, when: datetime) -> tuple[tuple[str, str, str], ...]:
    """The facts valid at ``when`` as memory believes them now."""
    return tuple(
        sorted((f.subject, f.predicate, f.target) for f in mem.facts(group_id=group_id, as_of=when))
    )
