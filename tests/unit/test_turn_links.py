"""Links between turns (UPDATES): a later turn of the same speaker that states a new value of
what an earlier one stated. Decided at ingest from the two turns alone, so the same in every
arrival order; kept on every store (the ``memory`` fixture), exported, imported and forgotten
with their turns."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphmem import GraphMemory, HashEmbedder, RetrievalConfig
from graphmem.reconcile.turn_links import link_between, quantities
from graphmem.store._base import EpisodeRow

_groups = itertools.count()


def t(month: int, day: int = 1) -> datetime:
    return datetime(2024, month, day, tzinfo=UTC)


ZOTERO_OLD = "My Zotero library has 45 sources, tagged by theme and date, for the essay."
ZOTERO_NEW = "I've added more: my Zotero library now holds 52 sources tagged by theme."
BUDGET_OLD = "I set the prototype refinement budget to $7,000 through August for the patent."
BUDGET_NEW = "The prototype refinement budget went up to $8,000 through August, patent included."
UNRELATED = "I ran 5 kilometres this morning before breakfast with my sister."


def _row(eid: str, text: str, when: datetime, speaker: str = "user") -> EpisodeRow:
    ms = int(when.timestamp() * 1000)
    return EpisodeRow(eid, "g", None, "message", text, ms, ms, eid, metadata={"speaker": speaker})


def _link(a: EpisodeRow, b: EpisodeRow) -> Any:
    return link_between(a, quantities(a.content), b, quantities(b.content), decided_at=0)


# ------------------------------------------------------------------ the rule
def test_a_new_value_of_the_same_quantity_updates_the_earlier_turn() -> None:
    old, new = _row("a", ZOTERO_OLD, t(3)), _row("b", ZOTERO_NEW, t(4))
    link = _link(old, new)
    assert link is not None
    assert (link.kind, link.src, link.dst) == ("UPDATES", "b", "a")
    assert link.reason.startswith("45 → 52 (")
    assert {"library", "zotero", "theme"} <= set(link.terms)
    # Symmetric: the later turn is the update whichever is handed first.
    assert _link(new, old) == link


def test_no_link_across_speakers_for_the_same_value_or_for_unrelated_numbers() -> None:
    old = _row("a", ZOTERO_OLD, t(3))
    assert _link(old, _row("b", ZOTERO_NEW, t(4), speaker="assistant")) is None
    assert _link(old, _row("c", ZOTERO_OLD.replace("essay", "paper"), t(4))) is None
    assert _link(old, _row("d", UNRELATED, t(4))) is None
    assert _link(_row("e", BUDGET_OLD, t(3)), _row("f", ZOTERO_NEW, t(4))) is None


def test_turns_without_a_speaker_or_that_are_not_messages_are_not_linked() -> None:
    old, new = _row("a", ZOTERO_OLD, t(3), speaker=""), _row("b", ZOTERO_NEW, t(4), speaker="")
    assert _link(old, new) is None
    text_old = _row("c", ZOTERO_OLD, t(3))
    text_old.kind = "text"  # a document or a log line: a series of its own
    assert _link(text_old, _row("d", ZOTERO_NEW, t(4))) is None


def test_a_turn_stating_many_numbers_is_not_a_statement_of_one_value() -> None:
    table = "My Zotero library sources by theme: " + ", ".join(f"{i} sources" for i in range(9))
    assert len(quantities(table)) == 9
    assert _link(_row("a", ZOTERO_OLD, t(3)), _row("b", table, t(4))) is None


def test_numbers_in_code_blocks_are_not_statements() -> None:
    code = "Here is my config:\n```\nzotero library sources tagged = 52\n```\nDoes it look right?"
    assert quantities(code) == []
    assert _link(_row("a", ZOTERO_OLD, t(3)), _row("b", code, t(4))) is None


def test_the_same_stated_time_breaks_ties_by_id_not_by_arrival() -> None:
    a, b = _row("a", ZOTERO_OLD, t(3)), _row("b", ZOTERO_NEW, t(3))
    assert _link(a, b) == _link(b, a)
    assert _link(a, b).src == "b"


# ------------------------------------------------------------------ on every store
def _say(mem: GraphMemory, group: str, turns: list[tuple[str, datetime]]) -> None:
    for content, when in turns:
        mem.add_episode(content, reference_time=when, metadata={"speaker": "user"},
                        group_id=group)


def _links_by_text(mem: GraphMemory, group: str) -> set[tuple[str, str, str, str]]:
    rows = list(mem.export(group_id=group))
    text = {r["id"]: r["content"] for r in rows if r["type"] == "episode"}
    return {
        (r["kind"], text[r["src"]], text[r["dst"]], r["reason"])
        for r in rows
        if r["type"] == "episode_link"
    }


def _recalled_links(mem: GraphMemory, group: str) -> tuple[set[str], set[tuple[str, str, str]]]:
    wide = GraphMemory(mem.store, retrieval=RetrievalConfig(currentness_pairs=10))
    episodes = wide.recall("How many sources are in my Zotero library and what budget?",
                           group_id=group, k=10).episodes
    text = {e.id: e.content or "" for e in episodes}
    return set(text.values()), {
        (text[lk.src], text[lk.dst], lk.reason) for e in episodes for lk in e.links
    }


TURNS = [
    (ZOTERO_OLD, t(3)),
    (ZOTERO_NEW, t(4)),
    ("Update: my Zotero library reached 60 sources, all tagged by theme now.", t(5)),
    ("My Zotero library has grown to 70 sources, tagged by theme, for the essay.", t(6)),
    (BUDGET_OLD, t(3, 2)),
    (BUDGET_NEW, t(4, 2)),
    (UNRELATED, t(4, 3)),
]


def test_links_are_kept_and_found_on_every_store(memory: GraphMemory) -> None:
    _say(memory, "chat", TURNS)
    links = _links_by_text(memory, "chat")
    pairs = {(new, old) for _, new, old, _ in links}
    assert (ZOTERO_NEW, ZOTERO_OLD) in pairs
    assert (BUDGET_NEW, BUDGET_OLD) in pairs
    assert (TURNS[2][0], ZOTERO_OLD) in pairs and (TURNS[2][0], ZOTERO_NEW) in pairs
    assert not any(UNRELATED in (new, old) for new, old in pairs)
    # Each turn keeps its two nearest earlier updates: the fourth Zotero turn links to the third
    # and the second, not to the first.
    assert (TURNS[3][0], TURNS[2][0]) in pairs and (TURNS[3][0], ZOTERO_NEW) in pairs
    assert (TURNS[3][0], ZOTERO_OLD) not in pairs
    assert len(pairs) == 6


def test_a_late_arriving_turn_links_to_the_later_ones_already_stored(
    memory: GraphMemory,
) -> None:
    _say(memory, "late", [TURNS[1], TURNS[2]])
    _say(memory, "late", [TURNS[0]])  # the oldest, told last
    _say(memory, "ordered", TURNS[:3])
    assert _links_by_text(memory, "late") == _links_by_text(memory, "ordered")


@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(order=st.permutations(list(range(len(TURNS)))), forget=st.integers(0, len(TURNS) - 1))
def test_links_do_not_depend_on_arrival_order_and_forget_removes_only_its_own(
    memory: GraphMemory, order: list[int], forget: int
) -> None:
    reference = f"ref-{next(_groups)}"
    _say(memory, reference, TURNS)
    group = f"perm-{next(_groups)}"
    _say(memory, group, [TURNS[i] for i in order])
    assert _links_by_text(memory, group) == _links_by_text(memory, reference)
    # The links recall finds between the turns it returns (stored, and compared pairwise at
    # recall) are the same too.
    assert _recalled_links(memory, group) == _recalled_links(memory, reference)

    gone = TURNS[forget][0]
    episode = next(
        r["id"] for r in memory.export(group_id=group)
        if r["type"] == "episode" and r["content"] == gone
    )
    memory.forget(episode_id=episode, group_id=group)
    rest = f"rest-{next(_groups)}"
    _say(memory, rest, [turn for i, turn in enumerate(TURNS) if i != forget])
    assert _links_by_text(memory, group) == _links_by_text(memory, rest)


def test_export_and_import_keep_the_links_and_later_turns_still_link(
    memory: GraphMemory, tmp_path: Any
) -> None:
    _say(memory, "src", TURNS[:2])
    rows = list(memory.export(group_id="src"))
    assert [r["type"] for r in rows].count("episode_link") == 1
    copy = GraphMemory(f"{tmp_path}/copy.db", embedder=HashEmbedder(64))
    with copy:
        copy.import_rows(rows)
        assert _links_by_text(copy, "src") == _links_by_text(memory, "src")
        exported = [r for r in copy.export(group_id="src") if r["type"] == "episode_link"]
        assert exported == [r for r in rows if r["type"] == "episode_link"]  # decided_at kept
        _say(copy, "src", [TURNS[2]])  # finds the imported turns by their terms
        assert len(_links_by_text(copy, "src")) == 3


def test_an_export_with_a_bad_episode_link_is_refused_whole(tmp_path: Any) -> None:
    from graphmem import InputError

    mem = GraphMemory(f"{tmp_path}/m.db", embedder=HashEmbedder(64))
    with mem:
        _say(mem, "g", TURNS[:2])
        rows = list(mem.export(group_id="g"))
        bad = [dict(r, dst=r["src"]) if r["type"] == "episode_link" else r for r in rows]
        other = GraphMemory(f"{tmp_path}/o.db", embedder=HashEmbedder(64))
        with other, pytest.raises(InputError, match=r"episode_link.*dst: an episode cannot"):
            other.import_rows(bad)
        with other:
            assert list(other.export()) == []


def test_to_networkx_has_the_updates_edge(memory: GraphMemory) -> None:
    _say(memory, "nx", TURNS[:2])
    graph = memory.to_networkx(group_id="nx")
    edges = [(u, v, d) for u, v, k, d in graph.edges(keys=True, data=True) if k == "UPDATES"]
    assert len(edges) == 1
    src, dst, data = edges[0]
    assert graph.nodes[src]["kind"] == graph.nodes[dst]["kind"] == "Episode"
    assert data["reason"].startswith("45 → 52") and "zotero" in data["terms"]


def test_values_of_different_measures_are_not_an_update() -> None:
    topic = "triangle classification problems this week"
    old = _row("a", f"I solved 15 problems on {topic}, accuracy rising.", t(3))
    pct = _row("b", f"On {topic}: accuracy is 80% now, rising.", t(4))
    cm = _row("c", f"On {topic}: a side of 24 cm, accuracy rising.", t(4))
    assert _link(old, pct) is None  # a count is not a percentage
    assert _link(old, cm) is None  # 15 problems is not 24 cm
    more = _row("d", f"On {topic}: I solved 20 problems, accuracy rising.", t(4))
    assert _link(old, more) is not None


def test_the_reading_at_recall_knows_dates_times_and_values_both_turns_state() -> None:
    from graphmem.reconcile.quantities import RETURNED, STORED

    def units(text: str) -> list[tuple[str, str]]:
        return [(q.value, q.unit) for q in quantities(text, RETURNED)]

    assert units("Zoom with Dana on March 22 at 3 PM, then again at 4:30.") == [
        ("22", "date"), ("3", "time"), ("4:30", "time")
    ]
    assert units("I booked 3 interviews between April 25 and May 1, 2024.") == [
        ("3", "interview"), ("25", "date"), ("1", "date"), ("2024", "year")
    ]
    # The reading at ingest is unchanged: "%", "$" or the word after.
    assert [(q.value, q.unit) for q in quantities("on March 22 at 3 PM", STORED)] == [
        ("22", ""), ("3", "pm")
    ]

    def link(old: str, new: str) -> str | None:
        a, b = _row("a", old, t(3)), _row("b", new, t(4))
        found = link_between(a, quantities(old, RETURNED), b, quantities(new, RETURNED),
                             decided_at=0, reading=RETURNED)
        return found.reason.split(" (")[0] if found else None

    # The same dates in both turns are no change from one day to the other.
    assert link("I secured 3 interviews between April 25 and May 1 for producer roles.",
                "Between April 25 and May 1 I secured 5 interviews for producer roles.") == "3 → 5"
    # A day of a month is not a count of anything.
    assert link("I finished 3 essays for the writing group deadline in May.",
                "The writing group essays deadline moved to May 20.") is None
