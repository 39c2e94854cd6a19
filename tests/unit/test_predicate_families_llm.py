"""The change corpus of issue 13 through the ``llm`` extractor, with an ideal model's answers.

The fake OpenAI server (``tests/fakes/openai_server.py``) answers each episode with what a
perfect extractor would say, claims included (``relation`` + the known fact's ``F<n>`` alias).
Six changes, as measured in the issue: a relocation (``lives_in``), a job change
(``works_at``), a manager change back to an earlier manager (``has_manager``: Rui → Marta →
Rui), a kinship correction across predicates (``sister_of`` → ``cousin_of``), a preference
correction ("actually I prefer tea") and a negation ("I no longer have a car"). Every old fact
must end, with one chat call per episode, and forgetting the changing episode must bring the
old fact back. Runs on every store of the ``store_kind`` fixture.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from graphmem import GraphMemory, HashEmbedder
from graphmem._config import Settings
from tests.conftest import _wipe, bolt_url
from tests.fakes.openai_server import FakeOpenAIServer

pytest_plugins = ["tests.fakes.pytest_plugin"]
pytestmark = pytest.mark.timeout(180)

Answer = dict[str, Any]
SPEAKER = "Maya"


def when(month: int, day: int = 1) -> datetime:
    return datetime(2024, month, day, tzinfo=UTC)


def first_user(body: dict[str, Any]) -> str:
    return next(m["content"] for m in body["messages"] if m["role"] == "user")


def fact(subject: str, predicate: str, obj: str | None, statement: str, **extra: Any) -> Answer:
    item: Answer = {
        "subject": subject, "predicate": predicate, "object": obj, "value": None,
        "statement": statement, "valid_from": None, "valid_to": None, "kind": "assert",
        "replaces": None, "relation": "new", "fact_id": None, "reason": None, "evidence": None,
    }
    item.update(extra)
    return item


class Model:
    """An ideal model: one answer per episode; a claim names the known fact by its alias."""

    def __init__(self) -> None:
        self.answers: dict[str, Callable[[Callable[[str], str | None]], list[Answer]]] = {}
        self.missing: list[str] = []  # claims whose known fact was not in the prompt

    def on(self, text: str, facts: Callable[[Callable[[str], str | None]], list[Answer]]) -> None:
        self.answers[text] = facts

    def __call__(self, body: dict[str, Any]) -> Answer:
        prompt = first_user(body)
        episode = prompt.rpartition("\nEpisode:\n")[2]

        def alias(statement: str) -> str | None:
            for line in prompt.splitlines():
                if line.startswith("[F") and f") {statement} since" in line:
                    return line[1 : line.index("]")]
            self.missing.append(statement)
            return None

        for text, facts in self.answers.items():
            if text in episode:
                return {"entities": [], "facts": facts(alias)}
        return {"entities": [], "facts": []}


@dataclass
class Change:
    name: str
    before: str  # the episode that states the old fact
    after: str  # the episode that changes it
    old: tuple[str, str, str]  # (subject, predicate, target) that must end
    new: tuple[str, str, str] | None  # what holds afterwards (None: nothing)


CHANGES = [
    Change("relocation", "I live in Lisbon.", "I moved to Porto.",
           (SPEAKER, "lives_in", "Lisbon"), (SPEAKER, "lives_in", "Porto")),
    Change("job change", "I work at Acme.", "I joined Globex last week.",
           (SPEAKER, "works_at", "Acme"), (SPEAKER, "works_at", "Globex")),
    Change("manager back", "Marta is my new manager.", "Marta left, Rui is my manager again.",
           (SPEAKER, "has_manager", "Marta"), (SPEAKER, "has_manager", "Rui")),
    Change("kinship correction", "Ana is my sister.", "Ana is my cousin, not my sister.",
           ("Ana", "sister_of", SPEAKER), ("Ana", "cousin_of", SPEAKER)),
    Change("preference correction", "I prefer coffee.", "Actually I prefer tea.",
           (SPEAKER, "prefers", "coffee"), (SPEAKER, "prefers", "tea")),
    Change("negation", "I have a car.", "I no longer have a car.",
           (SPEAKER, "owns", "car"), None),
]
# In time order; "Rui is my manager." comes first so that the manager goes back to him.
EPISODES = [
    "I live in Lisbon.", "I work at Acme.", "Rui is my manager.", "Ana is my sister.",
    "I prefer coffee.", "I have a car.", "Marta is my new manager.", "I moved to Porto.",
    "I joined Globex last week.", "Marta left, Rui is my manager again.",
    "Ana is my cousin, not my sister.", "Actually I prefer tea.", "I no longer have a car.",
]


def ideal_model(*, kinship_by_replaces: bool = False) -> Model:
    m = Model()
    me = SPEAKER
    m.on("I live in Lisbon", lambda a: [fact(me, "lives_in", "Lisbon", "Maya lives in Lisbon.")])
    m.on("I work at Acme", lambda a: [fact(me, "works_at", "Acme", "Maya works at Acme.")])
    m.on("Rui is my manager.", lambda a: [
        fact(me, "has_manager", "Rui", "Maya's manager is Rui.")])
    m.on("Ana is my sister", lambda a: [fact("Ana", "sister_of", me, "Ana is Maya's sister.")])
    m.on("I prefer coffee", lambda a: [fact(me, "prefers", "coffee", "Maya prefers coffee.")])
    m.on("I have a car", lambda a: [fact(me, "owns", "car", "Maya has a car.")])
    m.on("Marta is my new manager", lambda a: [
        fact(me, "has_manager", "Marta", "Maya's manager is Marta.", relation="supersedes",
             fact_id=a("Maya's manager is Rui."), reason="new manager")])
    m.on("I moved to Porto", lambda a: [
        fact(me, "lives_in", "Porto", "Maya lives in Porto.", relation="supersedes",
             fact_id=a("Maya lives in Lisbon."), reason="moved")])
    m.on("I joined Globex", lambda a: [
        fact(me, "works_at", "Globex", "Maya works at Globex.", valid_from="2024-08-25",
             relation="supersedes", fact_id=a("Maya works at Acme."), reason="new job")])
    m.on("Rui is my manager again", lambda a: [
        fact(me, "has_manager", "Rui", "Maya's manager is Rui again.", relation="supersedes",
             fact_id=a("Maya's manager is Marta."), reason="Marta left")])
    if kinship_by_replaces:  # no claim: kind=correct and the relation word as ``replaces``
        m.on("Ana is my cousin", lambda a: [
            fact("Ana", "cousin_of", me, "Ana is Maya's cousin.", kind="correct",
                 replaces="sister")])
    else:
        m.on("Ana is my cousin", lambda a: [
            fact("Ana", "cousin_of", me, "Ana is Maya's cousin.", kind="correct",
                 relation="corrects", fact_id=a("Ana is Maya's sister."),
                 reason="cousin, not sister")])
    m.on("Actually I prefer tea", lambda a: [
        fact(me, "prefers", "tea", "Maya prefers tea.", kind="correct", replaces="coffee",
             relation="corrects", fact_id=a("Maya prefers coffee."), reason="actually tea")])
    m.on("I no longer have a car", lambda a: [
        fact(me, "owns", "car", "Maya no longer has a car.", kind="negate", relation="negates",
             fact_id=a("Maya has a car."), reason="no car any more")])
    return m


@pytest.fixture
def open_memory(
    store_kind: str, tmp_path: Path, fake_openai: FakeOpenAIServer
) -> Iterator[Callable[[], GraphMemory]]:
    settings = Settings(llm_model="test-model", llm_base_url=fake_openai.base_url,
                        llm_api_key="x", llm_timeout=5.0, llm_max_retries=2)
    opened: list[tuple[GraphMemory, Any]] = []

    def make() -> GraphMemory:
        if store_kind == "sqlite":
            mem = GraphMemory(tmp_path / f"m{len(opened)}.db", embedder=HashEmbedder(64),
                              settings=settings, extractor="llm")
            store = None
        else:
            from graphmem.store import open_store

            store = open_store(bolt_url())
            store.connect()
            _wipe(store)
            mem = GraphMemory(store, embedder=HashEmbedder(64), settings=settings,
                              extractor="llm")
        mem.connect()
        opened.append((mem, store))
        return mem

    yield make
    for mem, store in opened:
        if store is not None:
            _wipe(store)
        mem.close()


def ingest(mem: GraphMemory, episodes: list[str] = EPISODES) -> dict[str, Any]:
    results = {}
    for month, text in enumerate(episodes, start=1):
        day = 15 if month > 12 else 1
        result = mem.add_episode(text, metadata={"speaker": SPEAKER},
                                 reference_time=when(min(month, 12), day))
        assert result.status == "extracted", result.error
        results[text] = result
    return results


def find(mem: GraphMemory, triple: tuple[str, str, str]) -> list[Any]:
    return [f for f in mem.facts(include_history=True)
            if (f.subject, f.predicate, f.target) == triple]


def ended(mem: GraphMemory, change: Change) -> bool:
    """The old fact is in memory and no longer current; what replaced it is."""
    old = find(mem, change.old)
    if not old or any(f.is_current() for f in old):
        return False
    if change.new is None:
        return True
    return any(f.is_current() for f in find(mem, change.new))


@pytest.mark.parametrize("kinship_by_replaces", [False, True])
def test_the_change_corpus_ends_every_old_fact(
    open_memory: Callable[[], GraphMemory], fake_openai: FakeOpenAIServer,
    kinship_by_replaces: bool,
) -> None:
    model = ideal_model(kinship_by_replaces=kinship_by_replaces)
    fake_openai.default = model
    mem = open_memory()
    results = ingest(mem)
    assert model.missing == [], "every claim named a fact the prompt listed"

    done = [c.name for c in CHANGES if ended(mem, c)]
    assert done == [c.name for c in CHANGES], f"{len(done)} of {len(CHANGES)} ended: {done}"
    calls = len(fake_openai.calls("chat/completions"))
    assert calls / len(EPISODES) <= 1.0 and all(r.llm_calls == 1 for r in results.values())

    current = sorted((f.subject, f.predicate, f.target) for f in mem.facts())
    assert current == sorted([
        ("Ana", "cousin_of", SPEAKER), (SPEAKER, "has_manager", "Rui"),
        (SPEAKER, "lives_in", "Porto"), (SPEAKER, "prefers", "tea"),
        (SPEAKER, "works_at", "Globex"),
    ])
    sister = find(mem, ("Ana", "sister_of", SPEAKER))[0]
    assert sister.expired_at is not None and sister.reason is not None
    assert sister.reason.startswith("correction")
    if not kinship_by_replaces:
        assert sister.reason == "correction: cousin, not sister"
    rui = [(f.valid_from, f.valid_to) for f in mem.history(SPEAKER, predicate="has_manager")]
    assert rui == [(when(3), when(7)), (when(7), when(10)), (when(10), None)]
    # The job change states its own start, the rest start at their episode's time.
    assert find(mem, (SPEAKER, "works_at", "Acme"))[0].valid_to == datetime(2024, 8, 25,
                                                                            tzinfo=UTC)


@pytest.mark.parametrize("change", CHANGES, ids=[c.name for c in CHANGES])
def test_forgetting_the_change_restores_the_old_fact(
    open_memory: Callable[[], GraphMemory], fake_openai: FakeOpenAIServer, change: Change
) -> None:
    fake_openai.default = ideal_model()
    mem = open_memory()
    results = ingest(mem)
    assert ended(mem, change)
    mem.forget(episode_id=results[change.after].episode_id)
    (old,) = find(mem, change.old)
    assert old.is_current(), f"{change.name}: {old}"
    if change.new is not None and change.name != "manager back":
        assert not find(mem, change.new), "the changing episode's fact is gone"


def test_a_claim_across_entity_pairs_is_not_honoured(
    open_memory: Callable[[], GraphMemory], fake_openai: FakeOpenAIServer
) -> None:
    """A family holds between the same two entities: a cousin of Bea does not correct a
    sister of Maya, whatever the model says."""
    model = ideal_model()
    model.on("Ana is my cousin", lambda a: [
        fact("Ana", "cousin_of", "Bea", "Ana is Bea's cousin.", kind="correct",
             relation="corrects", fact_id=a("Ana is Maya's sister."), reason="wrong pair")])
    fake_openai.default = model
    mem = open_memory()
    ingest(mem, ["Ana is my sister.", "Ana is my cousin, not my sister."])
    assert model.missing == []
    current = sorted((f.subject, f.predicate, f.target) for f in mem.facts())
    assert current == [("Ana", "cousin_of", "Bea"), ("Ana", "sister_of", SPEAKER)]
    assert all(f.decided_by == "rule" for f in mem.facts())


def test_a_supersedes_claim_across_a_family_is_honoured(
    open_memory: Callable[[], GraphMemory], fake_openai: FakeOpenAIServer
) -> None:
    model = ideal_model()
    model.on("married", lambda a: [
        fact(SPEAKER, "married_to", "Bob", "Maya is married to Bob.")])
    model.on("divorced", lambda a: [
        fact(SPEAKER, "ex_of", "Bob", "Bob is Maya's ex.", relation="supersedes",
             fact_id=a("Maya is married to Bob."), reason="divorced")])
    fake_openai.default = model
    mem = open_memory()
    ingest(mem, ["I'm married to Bob.", "Bob and I divorced."])
    assert model.missing == []
    married, ex = mem.history(SPEAKER)
    assert married.predicate == "married_to" and married.expired_at is None
    assert married.valid_to == when(2)
    assert married.superseded_by == ex.id and married.reason == "divorced"
    assert ex.decided_by == "llm" and ex.is_current()
