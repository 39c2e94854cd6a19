"""Golden output of the rules extractor: a refactor of its patterns must not change one fact.

``tests/fixtures/rules_golden.json`` holds real inputs (the examples corpus, the first 300 turns
of LoCoMo conversation 1, and the sentences of the rules unit tests) with the whole
``Extraction`` the extractor gave for each: facts in order with statement, evidence, types,
times, confidence, and the entities. Each input carries the ids of up to three earlier inputs
as ``context.previous`` so that the look-back paths (bare corrections, "it was never A") run too.

The inputs are stored, not re-read, so the test needs neither the LoCoMo file nor the episode
loader. Regenerate only when a behaviour change is intended, and review the diff:
``python tests/unit/test_rules_golden.py /work/shared/bench/data/locomo10.json``.
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from graphmem._models import EpisodeRecord
from graphmem._predicates import PredicateRegistry
from graphmem.extract._base import ExtractionContext
from graphmem.extract.rules import RulesExtractor

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "rules_golden.json"
ROOT = Path(__file__).resolve().parents[2]
LOCOMO_TURNS = 300
PREVIOUS = 3


def _episode(case: dict[str, Any]) -> EpisodeRecord:
    ref = datetime.fromisoformat(case["reference_time"])
    return EpisodeRecord(
        id=case["id"], group_id="golden", source=case["source"], kind=case["kind"],
        content=case["content"], reference_time=ref, ingested_at=ref, content_hash="0" * 64,
        status="pending",
    )


def _extract(cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The extraction of every case, as JSON-ready dicts, in input order."""
    by_id = {case["id"]: _episode(case) for case in cases}
    extractor = RulesExtractor()
    out: list[dict[str, Any]] = []
    for case in cases:
        context = ExtractionContext(
            speaker=case["speaker"], predicates=PredicateRegistry(),
            previous=[by_id[i] for i in case["previous"]],
        )
        result = extractor.extract(by_id[case["id"]], context)
        out.append({"id": case["id"], **result.model_dump(mode="json")})
    return out


def _golden() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(FIXTURE.read_text(encoding="utf-8"))
    return data


def test_fixture_covers_the_three_corpora() -> None:
    # A fixture that lost its inputs would make the comparison below vacuous.
    cases = _golden()["cases"]
    sources = {case["id"].split(":")[0] for case in cases}
    assert sources == {"examples", "locomo", "phrases"}
    assert sum(case["id"].startswith("locomo:") for case in cases) == LOCOMO_TURNS
    facts = sum(len(row["facts"]) for row in _golden()["expected"])
    assert facts > 250


def test_rules_extractor_matches_the_golden_output() -> None:
    golden = _golden()
    actual = _extract(golden["cases"])
    expected = golden["expected"]
    assert len(actual) == len(expected)
    for got, want in zip(actual, expected, strict=True):
        assert got == want, f"extraction of {got['id']} changed"


# ----------------------------------------------------------------------------- regeneration


def _examples_cases() -> list[dict[str, Any]]:
    from graphmem.sources.files import load_episodes

    paths = sorted(p for p in (ROOT / "examples" / "data").iterdir()
                   if p.suffix in (".json", ".md"))
    cases: list[dict[str, Any]] = []
    for index, item in enumerate(load_episodes(paths)):
        cases.append({
            "id": f"examples:{item['source']}:{index}", "source": item["source"],
            "kind": item["kind"], "content": item["content"],
            "speaker": item.get("metadata", {}).get("speaker") or "user",
            "reference_time": item["reference_time"].isoformat(),
        })
    return cases


def _locomo_cases(path: Path) -> list[dict[str, Any]]:
    conv = json.loads(path.read_text(encoding="utf-8"))[0]["conversation"]
    cases: list[dict[str, Any]] = []
    n = 1
    while f"session_{n}" in conv and len(cases) < LOCOMO_TURNS:
        when = datetime.strptime(conv[f"session_{n}_date_time"].strip(),
                                 "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)
        for turn in conv[f"session_{n}"]:
            text = str(turn.get("text", "")).strip()
            if not text or len(cases) >= LOCOMO_TURNS:
                continue
            cases.append({
                "id": f"locomo:{turn['dia_id']}", "source": f"session_{n}", "kind": "message",
                "content": text, "speaker": turn["speaker"], "reference_time": when.isoformat(),
            })
        n += 1
    return cases


# Phrases for the patterns the unit tests touch lightly (one per line of the module docs).
_EXTRA = (
    "I reside in Ghent.", "I'm based in Leeds these days.", "I have just relocated to Oslo.",
    "I moved from Rome to Turin in early 2020.", "My sister lives in Cork.",
    "I don't live in Paris anymore.", "I moved out of Berlin two weeks ago.",
    "I moved away from Seattle last Monday.", "I started with Initech back in March 2021.",
    "I got a new job at Pied Piper.", "I quit my job at Hooli.", "I work as a designer.",
    "Kim is a pilot for Delta.", "I used to work at Acme.", "I never worked at Acme.",
    "I adore dogs, cats & birds.", "I'm fond of sushi and keen on ramen.",
    "I'd love to visit Japan.", "I might move to Spain.", "I want to work at Google.",
    "I detest traffic.", "I'd much rather walk than drive.", "I prefer to cook over eating out.",
    "Tea is my favorite drink.", "Maya's favourite film is Alien.",
    "My favorite food is no longer pizza.", "My name is Sam.", "Call me Jo.",
    "Hi, I'm Priya.", "My dog Rex loves balls.", "I have a cat named Tom and a dog named Bo.",
    "My dog's name is Rex.", "Rex is a golden retriever.", "Ana is married to Rui.",
    "My wife is Eva.", "Rui is my boss.", "My mom is Lena.", "Ana is my cousin, not my sister.",
    "Ticket ABC-12 is in progress.", "The deploy is blocked by the migration.",
    "The build is broken.", "We use Postgres version 15.", "We're on Django 4.2.",
    "The API is on version 3.", "The server runs version 2.1.", "The app version is v5.0.1.",
    "We use Kafka.", "I use Vim for everything.", "The endpoint is /v2/users.",
    "The billing endpoint is /api/bill.", "The endpoint for search is https://x.io/s.",
    "The endpoint was never /v1, it was always /v2.", "It's not Paris, it's Lyon.",
    "The status is not open but closed.", "I'm 34 years old.", "I just turned 40.",
    "My email is sam@example.com.", "My phone number is 555-1234.",
    "My birthday is May 3.", "My job title is staff engineer.", "My employer is Initech.",
    "I live in Lisbon. Sorry, I meant Porto.", "Correction: Lyon, not Paris.",
    "I never lived in Paris, I've always lived in Lyon.", "Actually, I live in Faro.",
    "Actually I moved to Lyon.", "Scratch that, I work at Globex.", "Wait, I live in Nice.",
    "I'm moving to Rome tomorrow.", "I'll move to Oslo next week.", "If I lived in Paris I'd walk.",
    "Suppose I worked at Acme.", "Do you live in Paris?", "I live in Osaka, what about you?",
    "He lives in Rome.", "You work at Acme.", "She loves jazz.",
    "I have lived in Dublin since 2015-04-02.", "I live in Athens, and my brother lives in Kos.",
    "I love cooking; I hate cleaning; I work at Bell Labs.",
    "I moved to Lima but I work for Andes Corp now.", "I live in Quito and joined Globex.",
    "user: I live in Bern\nassistant: Nice!\nuser: I work at Swisscom",
    "Bob: I live in Leeds\nCarol: I work at Boots",
    '{"role": "user", "content": "I live in Split."}',
    '[{"role": "assistant", "content": "Hi"}, {"role": "user", "content": "I like figs."}]',
    "Dr. Smith lives in St. Louis. I work at Acme Inc. in Ohio.", "I live in Osaka, Japan.",
    "I love mac and cheese and rock and roll.", "I'm a huge fan of the Lord of the Rings.",
    "I no longer like coffee.", "I stopped liking jazz.", "I don't like olives anymore.",
    "I left Porto.", "I live in Porto. I left Porto.", "I'm not into golf anymore.",
    "Btw, I work at Acme - not Initech.", "I live in Lyon, actually Nice.",
)


def _phrase_cases() -> list[dict[str, Any]]:
    """Every sentence-like string literal of the rules extractor's unit tests, as a message."""
    import ast

    here = Path(__file__).resolve().parent
    phrases: set[str] = set()
    for name in ("test_rules_extractor.py", "test_predicate_families.py"):
        tree = ast.parse((here / name).read_text(encoding="utf-8"))
        phrases.update(
            node.value for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and " " in node.value.strip() and len(node.value) < 400
        )
    ref = datetime(2024, 6, 15, 12, 0, tzinfo=UTC).isoformat()
    return [
        {"id": f"phrases:{index}", "source": "unit", "kind": "message", "content": message,
         "speaker": "Alice", "reference_time": ref}
        for index, message in enumerate([*sorted(phrases), *_EXTRA])
    ]


def regenerate(locomo: Path) -> None:
    cases: list[dict[str, Any]] = []
    for group in (_examples_cases(), _locomo_cases(locomo), _phrase_cases()):
        for index, case in enumerate(group):
            case["previous"] = [c["id"] for c in group[max(0, index - PREVIOUS):index]]
            cases.append(case)
    data = {"cases": cases, "expected": _extract(cases)}
    FIXTURE.parent.mkdir(parents=True, exist_ok=True)
    FIXTURE.write_text(json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n",
                       encoding="utf-8")


if __name__ == "__main__":  # pragma: no cover - a maintainer's tool
    if len(sys.argv) != 2:
        pytest.exit("usage: test_rules_golden.py LOCOMO10_JSON", returncode=2)
    regenerate(Path(sys.argv[1]))
