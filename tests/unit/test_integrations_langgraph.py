"""The LangGraph store on graphmem: BaseStore's operations, a compiled StateGraph whose nodes
write and read memories, and LangMem's memory tools driven by a scripted chat model."""

from __future__ import annotations

import asyncio
import re
import time
import warnings
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypedDict

import pytest

pytest.importorskip("langgraph")

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore, Item, SearchItem

from graphmem import GraphMemory, InputError
from graphmem.integrations.langgraph import GraphMemStore, item_subject
from graphmem.integrations.langgraph_filters import (
    graphmem_filters,
    leaves,
    matches,
)

NS = ("users", "u1", "memories")


@pytest.fixture
def store(memory: GraphMemory) -> GraphMemStore:
    return GraphMemStore(memory)


def test_put_get_and_supersede_keeps_history_readable_as_of(store: GraphMemStore) -> None:
    assert isinstance(store, BaseStore)
    assert store.get(NS, "theme") is None
    store.put(NS, "theme", {"content": "User prefers dark mode", "tags": ["ui", "display"]})
    first = store.get(NS, "theme")
    assert isinstance(first, Item) and first.value == {
        "content": "User prefers dark mode", "tags": ["ui", "display"]
    }
    assert first.namespace == NS and first.key == "theme"
    between = datetime.now(UTC)
    time.sleep(0.01)
    store.put(NS, "theme", {"content": "User prefers light mode", "tags": ["ui"]})
    now = store.get(NS, "theme")
    assert now is not None and now.value["content"] == "User prefers light mode"
    assert now.created_at == first.created_at and now.updated_at > first.updated_at
    then = store.get(NS, "theme", as_of=between)
    assert then is not None and then.value == first.value
    assert [i.value["content"] for i in store.history(NS, "theme")] == [
        "User prefers dark mode", "User prefers light mode",
    ]
    # graphmem's own view: the old whole value and the dropped tag are no longer current.
    facts = store.memory.history(item_subject("theme"), group_id="users.u1.memories")
    current = sorted(f.statement for f in facts if f.is_current())
    assert "theme: User prefers light mode ui" in current
    assert not [s for s in current if "dark" in s or "display" in s]
    with pytest.raises(InputError, match="timezone"):
        store.get(NS, "theme", as_of=datetime(2024, 1, 1))


def test_keys_that_graphmem_would_merge_stay_apart(store: GraphMemStore) -> None:
    store.put(NS, "Pref", {"v": 1})
    store.put(NS, "pref", {"v": 2})
    store.put(NS, "pref!", {"v": 3})
    assert [store.get(NS, k).value["v"] for k in ("Pref", "pref", "pref!")] == [1, 2, 3]  # type: ignore[union-attr]


def test_delete_forgets_the_item_and_its_history(store: GraphMemStore) -> None:
    store.put(NS, "job", {"content": "Works at Atlas"})
    store.put(NS, "job", {"content": "Works at Borealis"})
    store.put(NS, "home", {"content": "Lives in Porto"})
    store.delete(NS, "job")
    assert store.get(NS, "job") is None and store.history(NS, "job") == []
    store.delete(NS, "never-there")  # deleting what is not there is a no-op
    assert [i.key for i in store.search(NS)] == ["home"]
    exported = list(store.memory.export(group_id="users.u1.memories"))
    assert not [r for r in exported if "Atlas" in str(r) or "Borealis" in str(r)]


def test_search_by_query_filter_and_namespace_prefix(store: GraphMemStore) -> None:
    store.put(NS, "a", {"content": "User likes hiking in the mountains", "score": 3})
    store.put(NS, "b", {"content": "User drinks green tea every morning", "score": 7})
    store.put(NS, "c", {"content": "User plays chess on weekends", "score": 9})
    store.put(("users", "u2"), "d", {"content": "Other user likes tea too", "score": 8})
    hits = store.search(NS, query="what tea does the user drink?")
    assert hits and isinstance(hits[0], SearchItem) and hits[0].key == "b"
    assert hits[0].score is not None and 0 < hits[0].score <= 1
    both = store.search(("users",), query="tea", limit=5)
    assert {h.key for h in both} >= {"b", "d"}
    assert [h.key for h in store.search(("users",), filter={"score": {"$gte": 8}})] == ["d", "c"]
    filtered = store.search(NS, query="tea chess", filter={"score": {"$gt": 8}})
    assert [h.key for h in filtered] == ["c"]
    assert [h.key for h in store.search(NS, filter={"score": 3})] == ["a"]
    listed = store.search(NS, limit=2)
    assert [h.key for h in listed] == ["c", "b"] and listed[0].score is None
    assert [h.key for h in store.search(NS, limit=2, offset=2)] == ["a"]


def test_list_namespaces(store: GraphMemStore) -> None:
    for ns in [NS, ("users", "u2", "memories"), ("users", "u2", "profile"), ("docs",)]:
        store.put(ns, "k", {"x": 1})
    assert store.list_namespaces() == [
        ("docs",), NS, ("users", "u2", "memories"), ("users", "u2", "profile"),
    ]
    assert store.list_namespaces(prefix=("users", "u2")) == [
        ("users", "u2", "memories"), ("users", "u2", "profile"),
    ]
    assert store.list_namespaces(suffix=("memories",)) == [NS, ("users", "u2", "memories")]
    assert store.list_namespaces(prefix=("users", "*", "profile")) == [("users", "u2", "profile")]
    assert store.list_namespaces(max_depth=2) == [("docs",), ("users", "u1"), ("users", "u2")]
    assert store.list_namespaces(limit=1, offset=1) == [NS]


def test_group_prefix_keeps_the_store_apart(memory: GraphMemory) -> None:
    memory.add_episode("I live in Lisbon.", group_id="maya", metadata={"speaker": "Maya"})
    store = GraphMemStore(memory, group_prefix="lg.")
    store.put(("maya",), "k", {"x": 1})
    assert store.list_namespaces() == [("maya",)]
    assert "lg.maya" in memory.stats()["groups"]
    assert [f.statement for f in memory.facts(group_id="maya")] == ["Maya lives in Lisbon."]


def test_a_value_too_big_for_leaf_facts_is_stored_whole(store: GraphMemStore) -> None:
    big = {"content": "User's notes " * 2000, "tags": [f"t{i}" for i in range(600)], "n": 5}
    store.put(NS, "big", big)
    item = store.get(NS, "big")
    assert item is not None and item.value == big
    assert [h.key for h in store.search(NS, filter={"n": 5})] == ["big"]
    store.put(NS, "big", {"content": "short now"})
    assert store.get(NS, "big").value == {"content": "short now"}  # type: ignore[union-attr]


def test_bad_namespaces_and_values_are_input_errors(store: GraphMemStore) -> None:
    with pytest.raises(ValueError):
        store.put(("a.b",), "k", {"x": 1})
    with pytest.raises(InputError, match="namespace"):
        store.group_of(())
    with pytest.raises(InputError, match="dict"):
        store._put(NS, "k", ["not", "a", "dict"])  # type: ignore[arg-type]


def test_async_methods(store: GraphMemStore) -> None:
    async def run() -> tuple[Any, ...]:
        await asyncio.gather(
            store.aput(NS, "x", {"content": "User owns a red bicycle"}),
            store.aput(NS, "y", {"content": "User owns a blue car"}),
        )
        await store.aput(NS, "x", {"content": "User sold the red bicycle"})
        got = await store.aget(NS, "x")
        found = await store.asearch(NS, query="bicycle")
        spaces = await store.alist_namespaces()
        await store.adelete(NS, "y")
        gone = await store.aget(NS, "y")
        history = await store.ahistory(NS, "x")
        batch = await store.abatch([])
        return got, found, spaces, gone, history, batch

    got, found, spaces, gone, history, batch = asyncio.run(run())
    assert got.value == {"content": "User sold the red bicycle"}
    assert found[0].key == "x" and spaces == [NS] and gone is None and batch == []
    assert [h.value["content"] for h in history] == [
        "User owns a red bicycle", "User sold the red bicycle",
    ]


def test_a_cancelled_aput_stores_the_whole_item_or_nothing(
    store: GraphMemStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    started, release = threading.Event(), threading.Event()
    extract = store._extractor.extract

    def held(*args: Any) -> Any:
        started.set()
        assert release.wait(60)
        return extract(*args)

    monkeypatch.setattr(store._extractor, "extract", held)

    async def run() -> None:
        put = asyncio.create_task(store.aput(NS, "k", {"content": "User likes tea", "n": 1}))
        assert await asyncio.to_thread(started.wait, 60)
        put.cancel()
        await asyncio.sleep(0)
        assert not put.done()  # waits for the running write
        release.set()
        with pytest.raises(asyncio.CancelledError):
            await put

    asyncio.run(run())
    item = store.get(NS, "k")
    assert item is not None and item.value == {"content": "User likes tea", "n": 1}
    assert [h.key for h in store.search(NS, filter={"n": 1})] == ["k"]


def test_filters_follow_langgraphs_rules() -> None:
    value = {"a": 1, "b": {"c": "x"}, "tags": ["p", "q"], "n": None}
    assert matches(value, {"a": 1, "b": {"c": "x"}, "tags": ["p", "q"]})
    assert matches(value, {"a": {"$gte": 1, "$lt": 2, "$ne": 3}})
    assert not matches(value, {"a": {"$gt": 1}}) and not matches(value, {"n": {"$gt": 0}})
    assert not matches(value, {"tags": ["p"]}) and not matches(value, {"b": 1})
    assert graphmem_filters({"a": 1, "b": {"c": "x"}, "tags": ["p"], "d": {"$ne": 2}}) == {
        "value.a": 1, "value.b.c": "x",
    }
    assert graphmem_filters({"Score": {"$gt": 2, "$ne": 5}}) == {"value.score": {"$gt": 2}}
    assert graphmem_filters({"tags": ["p"]}) is None
    assert list(leaves({"pos": [1, 2], "tags": ["p", "q"], "s": [{"k": True}]}, "value")) == [
        ("value.pos.0", 1), ("value.pos.1", 2), ("value.tags", "p"), ("value.tags", "q"),
        ("value.s.0.k", True),
    ]


# ----------------------------------------------------------------------------- a real graph


class State(TypedDict, total=False):
    user: str
    message: str
    answer: str


def remember_node(state: State, runtime: Runtime[None]) -> State:
    assert runtime.store is not None
    said = state["message"]
    found = re.search(r"my favourite colour is (\w+)", said, re.IGNORECASE)
    if found:
        runtime.store.put(("users", state["user"]), "favourite_colour",
                          {"content": f"Favourite colour is {found.group(1)}",
                           "colour": found.group(1)})
    return {}


def answer_node(state: State, runtime: Runtime[None]) -> State:
    assert runtime.store is not None
    hits = runtime.store.search(("users", state["user"]), query=state["message"], limit=3)
    known = "; ".join(str(h.value["content"]) for h in hits) or "nothing yet"
    return {"answer": f"I remember: {known}"}


def build_graph(store: BaseStore) -> Any:
    graph = StateGraph(State)
    graph.add_node("remember", remember_node)
    graph.add_node("answer", answer_node)
    graph.add_edge(START, "remember")
    graph.add_edge("remember", "answer")
    graph.add_edge("answer", END)
    return graph.compile(store=store)


def test_a_compiled_state_graph_writes_and_reads_memories(store: GraphMemStore) -> None:
    app = build_graph(store)
    first = app.invoke({"user": "maya", "message": "Hi, my favourite colour is green."})
    assert first["answer"] == "I remember: Favourite colour is green"
    app.invoke({"user": "maya", "message": "Actually my favourite colour is blue."})
    later = app.invoke({"user": "maya", "message": "What is my favourite colour?"})
    assert later["answer"] == "I remember: Favourite colour is blue"
    other = app.invoke({"user": "leo", "message": "What is my favourite colour?"})
    assert other["answer"] == "I remember: nothing yet"
    assert [i.value["colour"] for i in store.history(("users", "maya"), "favourite_colour")] == [
        "green", "blue",
    ]
    # The same graph on the async path (ainvoke runs the nodes; the store's a* methods too).
    result = asyncio.run(app.ainvoke({"user": "maya", "message": "my favourite colour is red"}))
    assert result["answer"] == "I remember: Favourite colour is red"


# ----------------------------------------------------------------------------- LangMem


Step = Callable[[Sequence[BaseMessage]], AIMessage]


class ScriptedChatModel(BaseChatModel):
    """Answers with the next step of a script; each step sees the conversation so far (so a
    step can use an id a tool returned). Tool binding is accepted and ignored."""

    steps: list[Step]

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:  # type: ignore[override]
        return self

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        message = self.steps.pop(0)(messages)
        return ChatResult(generations=[ChatGeneration(message=message)])


def call(name: str, args: dict[str, Any], n: int) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"call{n}"}])


def last_tool_text(messages: Sequence[BaseMessage]) -> str:
    return str(next(m for m in reversed(messages) if isinstance(m, ToolMessage)).content)


def test_langmem_manage_and_search_tools_on_the_graphmem_store(store: GraphMemStore) -> None:
    langmem = pytest.importorskip("langmem")
    prebuilt = pytest.importorskip("langgraph.prebuilt")
    namespace = ("memories", "{langgraph_user_id}")
    tools = [langmem.create_manage_memory_tool(namespace=namespace),
             langmem.create_search_memory_tool(namespace=namespace)]
    ids: list[str] = []

    def created(messages: Sequence[BaseMessage]) -> AIMessage:
        text = last_tool_text(messages)
        ids.extend(re.findall(r"created memory ([0-9a-f-]{36})", text))
        return AIMessage(content="Noted.")

    def update_found(messages: Sequence[BaseMessage]) -> AIMessage:
        found = re.findall(r'"key":\s*"([0-9a-f-]{36})"', last_tool_text(messages))
        assert found == ids, last_tool_text(messages)
        return call("manage_memory", {"action": "update", "id": found[0],
                                      "content": "User prefers light mode"}, 3)

    model = ScriptedChatModel(steps=[
        lambda m: call("manage_memory", {"content": "User prefers dark mode"}, 1),
        created,
        lambda m: call("search_memory", {"query": "display mode preference"}, 2),
        update_found,
        lambda m: AIMessage(content="Updated your preference."),
    ])
    with warnings.catch_warnings():  # create_react_agent's deprecation notice
        warnings.simplefilter("ignore", DeprecationWarning)
        agent = prebuilt.create_react_agent(model, tools=tools, store=store)
    config = {"configurable": {"langgraph_user_id": "maya"}}
    agent.invoke({"messages": [("user", "I like dark mode.")]}, config=config)
    assert len(ids) == 1
    item = store.get(("memories", "maya"), ids[0])
    assert item is not None and item.value == {"content": "User prefers dark mode"}
    agent.invoke({"messages": [("user", "I switched to light mode.")]}, config=config)
    assert model.steps == []
    item = store.get(("memories", "maya"), ids[0])
    assert item is not None and item.value == {"content": "User prefers light mode"}
    assert [i.value["content"] for i in store.history(("memories", "maya"), ids[0])] == [
        "User prefers dark mode", "User prefers light mode",
    ]
    # LangMem's search goes through recall: the memory is found by its words.
    search = langmem.create_search_memory_tool(namespace=("memories", "maya"), store=store)
    found = asyncio.run(search.ainvoke({"query": "light mode"}))
    assert ids[0] in str(found)


def test_the_example_runs_offline(capsys: pytest.CaptureFixture[str]) -> None:
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "examples" / "langgraph_store.py"
    spec = importlib.util.spec_from_file_location("graphmem_example_langgraph", path)
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    example.main([])
    out = capsys.readouterr().out
    assert "5. maya: Which city do I live in?\n   (memory: city: Porto" in out
    assert "6. leo: What city am I in?\n   (memory: city: Braga)" in out
    assert "- city: Lisbon\n- city: Porto\n" in out
    assert "as of before the move: city: Lisbon" in out


def test_namespaces_written_through_another_connection_are_listed(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with GraphMemory(path) as one, GraphMemory(path) as other:
        store = GraphMemStore(one)
        store.put(("a",), "k", {"x": 1})
        assert store.list_namespaces() == [("a",)]
        assert store.list_namespaces() == [("a",)]  # from the cache: nothing was written
        GraphMemStore(other).put(("b", "c"), "k", {"x": 2})
        assert store.list_namespaces() == [("a",), ("b", "c")]
        assert [h.key for h in store.search(("b",))] == ["k"]
