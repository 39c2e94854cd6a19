"""A LangGraph graph whose long-term memory is graphmem: namespaces are memory groups, a new
value for a key supersedes the old one (kept, readable as of any time), search is graphmem's
recall.

Runs offline and deterministically: a StateGraph with two nodes, ``remember`` (a rule reads
"my X is Y" and puts it in the store under the user's namespace) and ``answer`` (searches the
store with the user's message). Swap the rule for a model call, or give LangMem's memory tools
the same store, and nothing else changes.

    pip install -e '.[langgraph]'
    python examples/langgraph_store.py        # or: python examples/langgraph_store.py --store m.db
"""

from __future__ import annotations

import argparse
import re
import tempfile
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from graphmem import GraphMemory
from graphmem.integrations.langgraph import GraphMemStore


class State(TypedDict, total=False):
    user: str
    message: str
    answer: str


SAYS = re.compile(r"\bmy (\w+(?: \w+)?) is (?:now )?([\w ]+?)[.!]?$", re.IGNORECASE)


def remember(state: State, runtime: Runtime[None]) -> State:
    """Store "my <topic> is <value>" under the key <topic>; a later one replaces it."""
    found = SAYS.search(state["message"])
    if found and runtime.store is not None:
        topic, value = found.group(1).lower(), found.group(2)
        runtime.store.put(("users", state["user"], "profile"), topic.replace(" ", "_"),
                          {"content": f"{topic}: {value}"})
    return {}


def answer(state: State, runtime: Runtime[None]) -> State:
    assert runtime.store is not None
    hits = runtime.store.search(("users", state["user"]), query=state["message"], limit=2)
    known = "; ".join(str(hit.value["content"]) for hit in hits)
    return {"answer": f"(memory: {known or 'nothing yet'})"}


def build(store: GraphMemStore) -> Any:
    graph = StateGraph(State)
    graph.add_node("remember", remember)
    graph.add_node("answer", answer)
    graph.add_edge(START, "remember")
    graph.add_edge("remember", "answer")
    graph.add_edge("answer", END)
    return graph.compile(store=store)


TURNS = [
    ("maya", "Hi! My city is Lisbon."),
    ("maya", "My favourite drink is coffee."),
    ("leo", "My city is Braga."),
    ("maya", "Big news: my city is now Porto."),
    ("maya", "Which city do I live in?"),
    ("leo", "What city am I in?"),
]


def run(store: GraphMemStore) -> None:
    app = build(store)
    profile = ("users", "maya", "profile")
    before_move: datetime | None = None
    for number, (user, message) in enumerate(TURNS, 1):
        if "Porto" in message:  # when the value read then was written
            before_move = store.get(profile, "city").updated_at  # type: ignore[union-attr]
        result = app.invoke({"user": user, "message": message})
        print(f"{number}. {user}: {message}\n   {result['answer']}")
    print("\nmaya's city, every value it had:")
    for item in store.history(profile, "city"):
        print(f"- {item.value['content']}")
    then = store.get(profile, "city", as_of=before_move)
    print(f"as of before the move: {then.value['content'] if then else None}")
    print("namespaces:", store.list_namespaces())
    print("graphmem's own view of the group:", [
        f.statement for f in store.memory.facts(group_id="users.maya.profile")
        if f.predicate == "item"
    ])


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", help="SQLite file to use (default: a temporary one)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(args.store) if args.store else Path(scratch) / "langgraph.db"
        with GraphMemory(path) as memory:
            run(GraphMemStore(memory))


if __name__ == "__main__":
    main()
