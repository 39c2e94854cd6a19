"""Currentness in recall: the UPDATES links between returned turns order them — the newer value
first for a question about the present, both sides for one about change — and ``to_context``
shows the change, dated."""

from __future__ import annotations

from datetime import UTC, datetime

from graphmem import GraphMemory, RetrievalConfig
from graphmem.retrieve.currentness import (
    asks_about_change,
    asks_about_the_past,
    order_by_currentness,
)
from graphmem.store._links import EpisodeLinkRow


def t(month: int, day: int = 1) -> datetime:
    return datetime(2024, month, day, tzinfo=UTC)


def _lk(src: str, dst: str, *terms: str) -> EpisodeLinkRow:
    return EpisodeLinkRow("UPDATES", src, dst, "g", "1 → 2", tuple(terms), 0)


# ------------------------------------------------------------------ the ordering rule
def test_the_newer_turn_moves_just_above_the_one_it_updates() -> None:
    ranked = ["old", "x", "y", "new", "z"]
    links = [_lk("new", "old", "budget", "prototype")]
    out = order_by_currentness(ranked, links, "What is my prototype budget?", top=10)
    assert out == ["new", "old", "x", "y", "z"]
    # The query must name two of the link's words.
    assert order_by_currentness(ranked, links, "What is my budget?", top=10) == ranked


def test_an_update_the_search_missed_is_not_brought_in() -> None:
    links = [_lk("new", "old", "budget", "prototype")]
    assert order_by_currentness(["x", "old", "y"], links, "my prototype budget?", top=10) == [
        "x", "old", "y"
    ]


def test_a_link_about_something_else_or_below_the_top_changes_nothing() -> None:
    ranked = ["old", "x", "new"]
    about = ("budget", "prototype")
    assert order_by_currentness(ranked, [_lk("new", "old", "zotero", "librari")],
                                "my prototype budget?", top=10) == ranked
    assert order_by_currentness(ranked, [_lk("new", "old", *about)], "my prototype budget?",
                                top=2) == ranked


def test_a_question_about_change_gets_both_sides_older_first() -> None:
    assert asks_about_change("How has my budget changed?")
    assert asks_about_change("What was the budget originally?")
    assert not asks_about_change("What is my budget?")
    ranked = ["new", "x", "y", "z"]
    link = [_lk("new", "old", "budget", "prototype")]
    out = order_by_currentness(ranked, link, "How has my prototype budget changed?", top=3)
    assert out == ["old", "new", "x", "y", "z"]
    # Both found already: the order is the ranking's.
    assert order_by_currentness(["new", "old"], link, "How has my prototype budget changed?",
                                top=3) == ["new", "old"]


# ------------------------------------------------------------------ through recall
OLD = ("My Zotero library has 45 sources, tagged by theme and date. Sources in a Zotero library "
       "are easy to find, and these sources cover the essay on media.")
NEW = "Quick note: the Zotero library now holds 52 sources."
CHAT = [
    (OLD, t(3), "user"),
    ("Great! A Zotero library with sources tagged by theme and date is easy to search: "
     "use saved searches and collections for each theme of the essay.", t(3, 2), "assistant"),
    (NEW, t(4), "user"),
    ("I'm also writing 3 drafts of the essay on Caribbean media this month.", t(4, 2), "user"),
]


def _memory(tmp_path: object, **config: object) -> GraphMemory:
    mem = GraphMemory(f"{tmp_path}/m.db", retrieval=RetrievalConfig(**config))  # type: ignore[arg-type]
    for content, when, who in CHAT:
        mem.add_episode(content, reference_time=when, metadata={"speaker": who}, group_id="g")
    return mem


def test_recall_ranks_the_newer_value_first_and_says_what_changed(memory: GraphMemory) -> None:
    for content, when, who in CHAT:
        memory.add_episode(content, reference_time=when, metadata={"speaker": who}, group_id="g")
    result = memory.recall("How many sources are in my Zotero library?", group_id="g")
    texts = [e.content for e in result.episodes]
    assert texts.index(NEW) < texts.index(OLD)
    new = result.episodes[texts.index(NEW)]
    assert [(lk.kind, lk.dst) for lk in new.links] == [
        ("UPDATES", result.episodes[texts.index(OLD)].id)
    ]
    context = result.to_context()
    assert "Changed between turns" in context
    assert "45 → 52" in context and "[2024-03-01]" in context and "[2024-04-01]" in context


def test_without_currentness_the_older_longer_turn_ranks_first(tmp_path: object) -> None:
    # The control: the same store with the links left out of the order.
    with _memory(tmp_path, currentness_top=0) as mem:
        texts = [e.content for e in mem.recall("How many sources are in my Zotero library?",
                                               group_id="g").episodes]
        assert texts.index(OLD) < texts.index(NEW)


def test_a_question_about_change_returns_both_sides(tmp_path: object) -> None:
    with _memory(tmp_path) as mem:
        result = mem.recall("How has the number of sources in my Zotero library changed?",
                            group_id="g", k=2)
        texts = [e.content for e in result.episodes]
        assert OLD in texts[:3] and NEW in texts[:3]


def test_a_fact_stated_only_by_an_updated_turn_is_the_old_value() -> None:
    from graphmem.retrieve.currentness import outdated_turns, stated_only_by

    links = [_lk("new", "old", "budget", "prototype", "august")]
    query = "What is my prototype budget for August?"
    outdated = outdated_turns(links, query, shown={"new", "x"})
    assert outdated == {"old": {"budget", "prototype", "august"}}
    assert stated_only_by("User's prototype budget is $7,000", ["old"], outdated)
    # Also stated by a turn nobody updated, or about something else: kept.
    assert not stated_only_by("User's prototype budget is $7,000", ["old", "x"], outdated)
    assert not stated_only_by("User lives in Lisbon", ["old"], outdated)
    # The update not returned, or a question about change: nothing is outdated.
    assert outdated_turns(links, query, shown={"x"}) == {}
    assert outdated_turns(links, "How has my prototype budget changed?", shown={"new"}) == {}


def test_the_newest_goes_above_a_value_two_updates_back() -> None:
    # Each turn keeps links to its nearest earlier updates: "new" reaches "old" through "mid".
    links = [_lk("new", "mid", "budget", "prototype"), _lk("mid", "old", "budget", "prototype")]
    out = order_by_currentness(["old", "x", "new"], links, "my prototype budget?", top=10)
    assert out == ["new", "old", "x"]


# ------------------------------------------------------------------ links drawn from facts
def test_a_link_known_to_concern_the_query_orders_whatever_its_words() -> None:
    ranked = ["old", "x", "new"]
    link = EpisodeLinkRow("UPDATES", "new", "old", "g", "a → b", (), 0)
    # No words in common with the query: left alone, unless it is known to concern it.
    assert order_by_currentness(ranked, [link], "Where do I live?", top=10) == ranked
    assert order_by_currentness(
        ranked, [link], "Where do I live?", top=10, concerning=[link]
    ) == ["new", "old", "x"]


def test_a_superseding_fact_links_its_turn_to_the_replaced_facts_turn() -> None:
    """A fact that replaced an earlier one says the same between their source turns: the
    returned episodes carry the link and ``to_context`` shows the change."""
    with GraphMemory(":memory:", extractor="rules") as mem:
        mem.add_episodes([
            {"content": "I live in Boston, by the harbour.", "kind": "message",
             "reference_time": t(1), "metadata": {"speaker": "user"}, "group_id": "g"},
            {"content": "I live in Denver now.", "kind": "message",
             "reference_time": t(3), "metadata": {"speaker": "user"}, "group_id": "g"},
        ])
        result = mem.recall("Where do I live?", group_id="g", k=5)
        assert [f.statement for f in result.facts] == ["User lives in Denver."]
        by_text = {e.content: e for e in result.episodes}
        new, old = by_text["I live in Denver now."], by_text["I live in Boston, by the harbour."]
        assert [e.content for e in result.episodes][:2] == [new.content, old.content]
        assert [(lk.src, lk.dst) for lk in new.links] == [(new.id, old.id)]
        assert new.links[0].reason == "User lives in Boston. → User lives in Denver."
        assert "User lives in Boston. → User lives in Denver." in result.to_context()
        off = GraphMemory(":memory:", extractor="rules",
                          retrieval=RetrievalConfig(currentness_top=0))
        with off:
            off.add_episodes([
                {"content": "I live in Boston, by the harbour.", "kind": "message",
                 "reference_time": t(1), "metadata": {"speaker": "user"}, "group_id": "g"},
                {"content": "I live in Denver now.", "kind": "message",
                 "reference_time": t(3), "metadata": {"speaker": "user"}, "group_id": "g"},
            ])
            assert all(not e.links for e in off.recall("Where do I live?", group_id="g").episodes)


# ------------------------------------------------------------------ pairs compared at recall
BUDGET_OLD = ("The prototype refinement budget, which we discussed with the investors and both "
              "engineers on the team last week in the office, is $7,000.")
BUDGET_NEW = "We raised the prototype refinement budget to $8,000."
ASKED = ("What is the prototype refinement budget the investors, engineers and team discussed "
         "in the office?")


def _budget_memory(**config: object) -> GraphMemory:
    mem = GraphMemory(":memory:", retrieval=RetrievalConfig(**config))  # type: ignore[arg-type]
    mem.add_episode(BUDGET_OLD, reference_time=t(3), metadata={"speaker": "user"}, group_id="g")
    mem.add_episode(BUDGET_NEW, reference_time=t(4), metadata={"speaker": "user"}, group_id="g")
    return mem


def test_the_first_returned_turns_are_compared_pairwise_at_recall() -> None:
    """The words the two turns share are 20 tokens from the old amount: too far for the link
    stored at ingest (none is), near enough in its sentence for the reading at recall."""
    with _budget_memory(currentness_pairs=0) as mem:
        episodes = mem.recall(ASKED, group_id="g").episodes
        assert [e.content for e in episodes] == [BUDGET_OLD, BUDGET_NEW]
        assert all(not e.links for e in episodes)
    with _budget_memory() as mem:
        episodes = mem.recall(ASKED, group_id="g").episodes
        assert [e.content for e in episodes] == [BUDGET_NEW, BUDGET_OLD]
        assert [lk.reason.split(" (")[0] for lk in episodes[0].links] == ["7000 → 8000"]


def test_a_question_in_the_past_tense_keeps_the_older_turn_where_it_ranks() -> None:
    assert asks_about_the_past("What did I say the budget was?")
    assert not asks_about_the_past("What is my budget now?")
    with _budget_memory() as mem:
        asked = ("What did I say the prototype refinement budget the investors, engineers and "
                 "team discussed in the office was?")
        episodes = mem.recall(asked, group_id="g").episodes
        assert [e.content for e in episodes] == [BUDGET_OLD, BUDGET_NEW]
    ranked = ["old", "new"]
    links = [_lk("new", "old", "budget", "prototype")]
    past = "What was my prototype budget?"
    assert order_by_currentness(ranked, links, past, top=10) == ranked


def test_a_negative_or_fractional_count_in_the_config_is_an_input_error() -> None:
    # A negative count would slice a ranking from its end ("pool[:-1]"), not mean "none".
    from graphmem import InputError

    for bad in ({"currentness_pairs": -1}, {"currentness_top": 2.5}, {"seed_n": True}):
        config = RetrievalConfig(**bad)  # type: ignore[arg-type]
        with GraphMemory(":memory:", retrieval=config) as mem:
            mem.add_episode("I have 3 cats.", reference_time=t(1), group_id="g")
            try:
                mem.recall("cats", group_id="g")
            except InputError as err:
                assert next(iter(bad)) in str(err)
            else:
                raise AssertionError(f"accepted {bad}")
            assert sum(r["type"] == "episode" for r in mem.export(group_id="g")) == 1
