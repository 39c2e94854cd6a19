"""Precision of the rules extractor on hand-labelled turns from three corpora.

``tests/fixtures/rules_precision/turns.json`` holds 361 turns sampled with fixed seeds from BEAM
100K (user and assistant turns), LoCoMo and the LongMemEval development half: a random stratum,
a stratum of turns the extractor read at least one fact from, one of turns with an amount, date,
plan or decision fact, and a held-out one of the same kind judged after the patterns were fixed
(its "about" field gives the sizes and how the labels were judged). Every fact the extractor
emitted for a turn carries a human judgement, ``correct``: true when a reader of the turn would
agree that the subject holds that relation to that object or value at the turn's time (a
negation: no longer holds).

The test re-reads every turn. A fact without a label fails it: a change that makes the extractor
say something new must have that new fact judged (``python tests/unit/test_rules_precision.py
--relabel`` adds the unjudged facts with ``correct: null`` for a person to fill in). Facts no longer
emitted simply drop out of the figure.
"""

from __future__ import annotations

import json
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

from graphmem._models import EpisodeRecord, ExtractedFact
from graphmem._predicates import PredicateRegistry
from graphmem.extract._base import ExtractionContext
from graphmem.extract.rules import RulesExtractor

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "rules_precision" / "turns.json"
MIN_TURNS = 200
MIN_PRECISION = 0.85


def _key(fact: ExtractedFact | dict[str, Any]) -> str:
    data = fact.model_dump(mode="json") if isinstance(fact, ExtractedFact) else fact
    target = data["object"] if data.get("object") is not None else data.get("value")
    return f"{data['subject']} | {data['predicate']} | {target} | {data['kind']}"


def _extract(turn: dict[str, Any]) -> list[ExtractedFact]:
    ref = datetime.fromisoformat(turn["reference_time"])
    episode = EpisodeRecord(
        id=turn["id"], group_id="precision", source=turn["corpus"], kind="message",
        content=turn["content"], reference_time=ref, ingested_at=ref, content_hash="0" * 64,
        status="pending",
    )
    context = ExtractionContext(speaker=turn["speaker"], predicates=PredicateRegistry())
    return RulesExtractor().extract(episode, context).facts


def _turns() -> list[dict[str, Any]]:
    data: dict[str, Any] = json.loads(FIXTURE.read_text(encoding="utf-8"))
    turns: list[dict[str, Any]] = data["turns"]
    return turns


def test_the_sample_is_large_and_from_three_corpora() -> None:
    turns = _turns()
    assert len(turns) >= MIN_TURNS
    assert {t["corpus"] for t in turns} == {"beam_100k", "locomo10", "lme_s_dev"}
    assert sum(len(t["labels"]) for t in turns) >= 100  # judged when the sample was drawn


def test_every_emitted_fact_is_labelled_and_precision_holds() -> None:
    judged = correct = 0
    unlabelled: list[str] = []
    for turn in _turns():
        labels: dict[str, bool | None] = turn["labels"]
        for fact in _extract(turn):
            label = labels.get(_key(fact))
            if label is None:
                unlabelled.append(f"{turn['id']}: {_key(fact)}")
                continue
            judged += 1
            correct += bool(label)
    assert not unlabelled, "facts without a judgement:\n" + "\n".join(unlabelled)
    assert judged >= 80
    assert correct / judged >= MIN_PRECISION, f"precision {correct}/{judged}"


def relabel() -> None:  # pragma: no cover - a maintainer's tool
    """Add every emitted fact that has no label yet, with ``correct: null``."""
    data = json.loads(FIXTURE.read_text(encoding="utf-8"))
    missing = 0
    for turn in data["turns"]:
        for fact in _extract(turn):
            if _key(fact) not in turn["labels"]:
                turn["labels"][_key(fact)] = None
                missing += 1
    FIXTURE.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{missing} facts to judge")


if __name__ == "__main__":  # pragma: no cover
    if sys.argv[1:] == ["--relabel"]:
        relabel()
