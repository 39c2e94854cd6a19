"""The rules extractor's pattern table: every row names a reader that exists, and rows drive it."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from graphmem._models import EpisodeRecord
from graphmem._predicates import PredicateRegistry
from graphmem.extract._base import ExtractionContext
from graphmem.extract.rules import RulesExtractor
from graphmem.extract.rules import engine as _rule_engine
from graphmem.extract.rules.clauses import READERS, probe
from graphmem.extract.rules.drafts import _State
from graphmem.extract.rules.engine import FORMS
from graphmem.extract.rules.table import _P, CLAUSE_PATTERNS, TRIGGERS, _t

REF = datetime(2024, 6, 15, 12, 0, tzinfo=UTC)
SUBJECT_KINDS = {"fp", "name", "kin", "pet", "np"}


def facts(text: str) -> list[tuple[str, str, object, str]]:
    ep = EpisodeRecord(id="ep_1", group_id="t", source=None, kind="message", content=text,
                       reference_time=REF, ingested_at=REF, content_hash="0" * 64,
                       status="pending")
    ctx = ExtractionContext(speaker="Alice", predicates=PredicateRegistry())
    out = RulesExtractor().extract(ep, ctx)
    return [(f.subject, f.predicate, f.object if f.object is not None else f.value, f.kind)
            for f in out.facts]


def test_every_trigger_names_a_form_and_known_subject_kinds() -> None:
    for trig in TRIGGERS:
        assert trig.form in FORMS, trig
        assert trig.subjects <= SUBJECT_KINDS, trig
        assert trig.predicate


@pytest.mark.parametrize(("form", "group"), [("status", "status"), ("version", "ver")])
def test_value_forms_have_the_group_they_read(form: str, group: str) -> None:
    rows = [trig for trig in TRIGGERS if trig.form == form]
    assert rows
    for trig in rows:
        assert group in trig.rx.groupindex, trig


def test_every_clause_pattern_names_a_reader_and_a_guard() -> None:
    ctx = ExtractionContext(speaker="Alice", predicates=PredicateRegistry())
    st = _State(speaker="Alice", ref=REF, context=ctx, reread=lambda e, c: [])
    guards = set(probe("my name is Sam", st))
    for pattern in CLAUSE_PATTERNS:
        assert pattern.reader in READERS, pattern
        assert pattern.when in guards, pattern
        assert pattern.rxs


def test_readers_and_forms_are_all_used() -> None:
    # A reader no row names is dead code that the golden test cannot see.
    assert {p.reader for p in CLAUSE_PATTERNS} == set(READERS)
    assert {t.form for t in TRIGGERS} == set(FORMS)


def test_a_new_trigger_row_is_all_a_new_verb_needs(monkeypatch: pytest.MonkeyPatch) -> None:
    assert facts("I cherish jazz") == []
    row = _t(r"cherish|cherishes", "list", "likes", _P)
    monkeypatch.setattr(_rule_engine, "TRIGGERS", (row, *TRIGGERS))
    assert facts("I cherish jazz and blues") == [
        ("Alice", "likes", "jazz", "assert"), ("Alice", "likes", "blues", "assert"),
    ]
    assert facts("I no longer cherish jazz") == [("Alice", "likes", "jazz", "negate")]


def test_table_order_decides_between_overlapping_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # "is a pilot for Delta" matches both the role row and the later, general is_a row.
    assert facts("Kim is a pilot for Delta") == [
        ("Kim", "has_role", "pilot", "assert"), ("Kim", "works_at", "Delta", "assert"),
    ]
    is_a = [t for t in TRIGGERS if t.predicate == "is_a"]
    others = [t for t in TRIGGERS if t.predicate != "is_a"]
    monkeypatch.setattr(_rule_engine, "TRIGGERS", (*is_a, *others))
    assert facts("Kim is a pilot for Delta") == [("Kim", "is_a", "pilot for Delta", "assert")]
