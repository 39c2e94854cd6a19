"""The LangChain retriever and tools: the langchain-tests standard suites, and graphmem's own
contract (Document content and metadata, time travel, per-call options, async, tool texts)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

import pytest

pytest.importorskip("langchain_core")
lc_retrievers = pytest.importorskip("langchain_tests.integration_tests")

from langchain_core.documents import Document  # noqa: E402
from langchain_core.messages import ToolMessage  # noqa: E402
from langchain_core.retrievers import BaseRetriever  # noqa: E402
from langchain_core.tools import BaseTool  # noqa: E402
from pydantic import ValidationError  # noqa: E402

from graphmem import GraphMemory, HashEmbedder  # noqa: E402
from graphmem.integrations.langchain import (  # noqa: E402
    GraphMemRetriever,
    fact_to_document,
    make_experience_tools,
    make_memory_tools,
    make_usage_tools,
)

# The standard suites have async tests; langchain's own packages run them with pytest-asyncio
# (a dependency of langchain-tests) in auto mode. Marking the classes works in either mode; the
# mark on their sync tests is harmless, so its warning is silenced.
ASYNC_MARKS = [
    pytest.mark.asyncio,
    pytest.mark.filterwarnings("ignore:The test .* is marked with '@pytest.mark.asyncio'"),
]


def t(year: int, month: int = 1, day: int = 1) -> datetime:
    return datetime(year, month, day, 9, tzinfo=UTC)


MAYA = [
    (t(2024, 1, 8), "Hi! I live in Lisbon."),
    (t(2024, 1, 8), "I work at Atlas Robotics."),
    (t(2024, 1, 9), "I prefer coffee."),
    (t(2024, 1, 10), "I like hiking, cooking and jazz."),
    (t(2024, 3, 14), "I moved to Porto last month."),
    (t(2024, 3, 15), "Actually, I prefer tea, not coffee."),
]


def _maya_memory(path: Path) -> GraphMemory:
    memory = GraphMemory(path, embedder=HashEmbedder(64))
    for when, text in MAYA:
        memory.add_episode(
            text, group_id="maya", source="chat.json", reference_time=when,
            metadata={"speaker": "Maya"},
        )
    return memory


@pytest.fixture
def maya(tmp_path: Path) -> Iterator[GraphMemory]:
    with _maya_memory(tmp_path / "maya.db") as memory:
        yield memory


# ----------------------------------------------------------------------------- standard suites


@pytest.fixture(scope="module")
def shared_memory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GraphMemory]:
    with _maya_memory(tmp_path_factory.mktemp("lc") / "shared.db") as memory:
        yield memory


class TestGraphMemRetrieverStandard(lc_retrievers.RetrieversIntegrationTests):
    pytestmark = ASYNC_MARKS
    memory: GraphMemory

    @pytest.fixture(autouse=True)
    def _memory_on_class(self, shared_memory: GraphMemory) -> None:
        type(self).memory = shared_memory

    @property
    def retriever_constructor(self) -> type[BaseRetriever]:
        return GraphMemRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"memory": self.memory, "group_id": "maya", "k": 5}

    @property
    def retriever_query_example(self) -> str:
        return "Where does Maya live and what does she like?"


class _ToolSuite(lc_retrievers.ToolsIntegrationTests):
    tool_name: ClassVar[str] = ""
    example: ClassVar[dict[str, Any]] = {}
    memory: GraphMemory

    @pytest.fixture(autouse=True)
    def _memory_on_class(self, shared_memory: GraphMemory) -> None:
        type(self).memory = shared_memory

    @property
    def tool_constructor(self) -> BaseTool:
        tools = {t.name: t for t in make_memory_tools(self.memory, group_id="maya")}
        return tools[self.tool_name]

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return dict(self.example)


class TestRememberToolStandard(_ToolSuite):
    pytestmark = ASYNC_MARKS
    tool_name = "remember"
    example: ClassVar[dict[str, Any]] = {
        "text": "I like jazz.", "speaker": "Maya", "reference_time": "2024-01-10"
    }


class TestRecallToolStandard(_ToolSuite):
    pytestmark = ASYNC_MARKS
    tool_name = "recall"
    example: ClassVar[dict[str, Any]] = {"query": "Where does Maya live?", "k": 3}


class TestHistoryToolStandard(_ToolSuite):
    pytestmark = ASYNC_MARKS
    tool_name = "history"
    example: ClassVar[dict[str, Any]] = {"entity": "Maya", "predicate": "lives_in"}


# ----------------------------------------------------------------------------- documents


def test_documents_carry_statement_ids_times_and_provenance(maya: GraphMemory) -> None:
    docs = GraphMemRetriever(memory=maya, group_id="maya", k=10).invoke("Where does Maya live?")
    assert docs and all(isinstance(d, Document) for d in docs)
    home = next(d for d in docs if d.metadata["predicate"] == "lives_in")
    assert home.page_content == "Maya lives in Porto."
    meta = home.metadata
    assert home.id == meta["fact_id"] and meta["fact_id"].startswith("fact_")
    assert meta["subject"] == "Maya" and meta["object"] == "Porto" and meta["value"] is None
    assert meta["subject_id"] and meta["object_id"]
    assert meta["valid_from"] == "2024-02-13T09:00:00+00:00"  # "last month" = 30 days back
    assert meta["valid_to"] is None and meta["expired_at"] is None and meta["current"] is True
    datetime.fromisoformat(meta["recorded_at"])
    assert meta["group_id"] == "maya"
    assert meta["episode_ids"] and meta["sources"] == ["chat.json"]
    assert meta["superseded"] == ["Maya lives in Lisbon."] and len(meta["superseded_ids"]) == 1
    assert meta["conflicts"] == [] and meta["conflict_ids"] == []
    assert isinstance(meta["score"], float) and meta["score"] > 0
    drinks = GraphMemRetriever(memory=maya, group_id="maya", k=10).invoke("What does Maya prefer?")
    tea = next(d for d in drinks if d.metadata["predicate"] == "prefers")
    assert tea.page_content == "Maya prefers tea."
    assert tea.metadata["superseded"] == ["Maya prefers coffee."]


def test_conflicts_and_literal_values_in_metadata(tmp_path: Path) -> None:
    with GraphMemory(tmp_path / "m.db", embedder=HashEmbedder(64)) as memory:
        memory.add_fact("Leo", "lives_in", "Braga", valid_from=t(2024, 4, 2))
        memory.add_fact("Leo", "lives_in", "Porto", valid_from=t(2024, 4, 2))
        memory.add_fact("gripper", "grip_force_for", value=12.5, valid_from=t(2024, 4, 2))
        docs = GraphMemRetriever(memory=memory).invoke("Leo lives in")
        leo = [d for d in docs if d.metadata["subject"] == "Leo"]
        assert {d.metadata["object"] for d in leo} == {"Braga", "Porto"}
        for doc in leo:
            assert len(doc.metadata["conflicts"]) == 1
            assert doc.metadata["conflicts"][0] != doc.page_content
        grip = GraphMemRetriever(memory=memory, k=1).invoke("gripper grip force")[0]
        assert grip.metadata["value"] == 12.5 and grip.metadata["object"] is None


def test_fact_to_document_is_public(maya: GraphMemory) -> None:
    hit = maya.recall("Maya", group_id="maya", k=1).facts[0]
    assert fact_to_document(hit).page_content == hit.statement


# ----------------------------------------------------------------------------- options


def test_as_of_and_known_at_at_construction_and_per_call(maya: GraphMemory) -> None:
    before_move = t(2024, 2, 1)
    then = GraphMemRetriever(memory=maya, group_id="maya", as_of=before_move)
    assert "Maya lives in Lisbon." in [d.page_content for d in then.invoke("Where does Maya live?")]
    now = GraphMemRetriever(memory=maya, group_id="maya")
    statements = [d.page_content for d in now.invoke("Where does Maya live?")]
    assert "Maya lives in Porto." in statements and "Maya lives in Lisbon." not in statements
    per_call = [d.page_content for d in now.invoke("Where does Maya live?", as_of=before_move)]
    assert "Maya lives in Lisbon." in per_call
    # known_at before the correction was recorded: memory still believed "coffee".
    past_belief = now.invoke("What does Maya prefer?", known_at=datetime(2000, 1, 1, tzinfo=UTC))
    assert past_belief == []


def test_k_hops_filters_and_group_per_call(maya: GraphMemory) -> None:
    retriever = GraphMemRetriever(memory=maya, group_id="maya", k=4, hops=0)
    assert len(retriever.invoke("Maya")) == 4
    assert len(retriever.invoke("Maya", k=2)) == 2
    assert retriever.invoke("Maya", group_id="nobody") == []
    assert retriever.recall("Maya", k=1).to_context().startswith("Memory for: Maya")


def test_filters_on_numeric_parameters(tmp_path: Path) -> None:
    import json

    with GraphMemory(tmp_path / "robot.db", embedder=HashEmbedder(64)) as memory:
        for n, force, ok in [(1, 8.0, True), (2, 15.0, True), (3, 9.5, False)]:
            memory.add_episode(
                json.dumps({"episode": n, "object": "red mug", "success": ok,
                            "params": {"force_peak": force}}),
                kind="json", reference_time=t(2024, 5, n),
            )
        retriever = GraphMemRetriever(
            memory=memory, k=20,
            filters={"success": True, "params.force_peak": {"$lt": 13}},
        )
        subjects = {d.metadata["subject"] for d in retriever.invoke("red mug grasp")}
        assert subjects == {"episode 1"}


def test_bad_options_fail_clearly(maya: GraphMemory) -> None:
    with pytest.raises(ValidationError, match="naive"):
        GraphMemRetriever(memory=maya, as_of=datetime(2024, 1, 1))
    with pytest.raises(ValidationError):
        GraphMemRetriever(memory=maya, k=0)
    with pytest.raises(TypeError, match="top_k"):
        GraphMemRetriever(memory=maya).invoke("x", top_k=3)


def test_ainvoke_runs_recall_in_a_worker_thread(maya: GraphMemory) -> None:
    retriever = GraphMemRetriever(memory=maya, group_id="maya", k=3)
    threads: list[int] = []
    original = maya.recall

    def spy(*args: Any, **kwargs: Any) -> Any:
        threads.append(threading.get_ident())
        return original(*args, **kwargs)

    maya.recall = spy  # type: ignore[method-assign]
    try:
        docs = asyncio.run(retriever.ainvoke("Maya", k=2))  # names only: all of Maya's facts
    finally:
        del maya.recall
    assert len(docs) == 2
    assert threads and threads[0] != threading.get_ident()
    sync = retriever.invoke("Maya", k=2)
    assert [d.page_content for d in docs] == [d.page_content for d in sync]


# ----------------------------------------------------------------------------- tools


def test_tools_have_typed_schemas(maya: GraphMemory) -> None:
    tools = {tool.name: tool for tool in make_memory_tools(maya, group_id="maya")}
    assert set(tools) == {"remember", "recall", "history"}
    remember = tools["remember"].tool_call_schema.model_json_schema()
    assert remember["required"] == ["text"]
    assert set(remember["properties"]) == {"text", "speaker", "reference_time"}
    recall = tools["recall"].tool_call_schema.model_json_schema()
    assert recall["required"] == ["query"]
    assert recall["properties"]["k"]["anyOf"][0]["type"] == "integer"
    assert tools["history"].args["entity"]["type"] == "string"
    assert all(tool.description for tool in tools.values())


def test_tools_remember_recall_history_round_trip(tmp_path: Path) -> None:
    with GraphMemory(tmp_path / "m.db", embedder=HashEmbedder(64)) as memory:
        tools = {x.name: x for x in make_memory_tools(memory, group_id="g", speaker="Maya")}
        first = tools["remember"].invoke(
            {"text": "I live in Lisbon.", "reference_time": "2024-01-08T09:00:00Z"}
        )
        assert first.startswith("Remembered episode ep_") and "1 new fact" in first
        moved = tools["remember"].invoke(
            {"text": "I moved to Porto last month.", "reference_time": "2024-03-14"}
        )
        assert "replaced (update): Maya lives in Lisbon. -> Maya lives in Porto." in moved
        again = tools["remember"].invoke(
            {"text": "I moved to Porto last month.", "reference_time": "2024-03-14"}
        )
        assert again.startswith("Already remembered")
        leo = tools["remember"].invoke({"text": "I live in Braga.", "speaker": "Leo"})
        assert "1 new fact" in leo
        context = tools["recall"].invoke({"query": "Where does Maya live?"})
        assert "- Maya lives in Porto. [2024-02-13 → now]" in context
        assert "replaced: Maya lives in Lisbon." in context
        then = tools["recall"].invoke({"query": "Where does Maya live?", "as_of": "2024-02-01"})
        assert "Maya lives in Lisbon. [2024-01-08 → 2024-02-13]" in then
        history = tools["history"].invoke({"entity": "Maya", "predicate": "lives_in"})
        assert history.splitlines() == [
            "History of Maya (lives_in), oldest first:",
            "- [2024-01-08 → 2024-02-13] Maya lives in Lisbon. (replaced: update)",
            "- [2024-02-13 → now] Maya lives in Porto. (current)",
        ]
        assert tools["history"].invoke({"entity": "Nobody"}) == "Nothing remembered about Nobody."


def test_tool_errors_come_back_as_text(maya: GraphMemory) -> None:
    tools = {x.name: x for x in make_memory_tools(maya, group_id="maya")}
    answer = tools["remember"].invoke({"text": "I like tea.", "reference_time": "2024-01-01T10:00"})
    assert "no timezone" in answer
    answer = tools["recall"].invoke({"query": "tea", "as_of": "last tuesday"})
    assert "is not a date" in answer
    message = tools["recall"].invoke(
        {"name": "recall", "args": {"query": "tea", "as_of": "nope"}, "id": "1",
         "type": "tool_call"}
    )
    assert isinstance(message, ToolMessage) and message.status == "error"


BAD_ARGUMENTS = [
    ("remember", {"text": ""}, "text: String should have at least 1 character"),
    ("remember", {}, "text: Field required"),
    ("recall", {"query": "tea", "k": 0}, "k: Input should be greater than or equal to 1"),
    ("recall", {"query": "tea", "k": "many"}, "k: Input should be a valid integer"),
    ("record_experience", {"task": "grasp", "state": "not json"}, "state: Input should be"),
    ("recall_experiences", {"outcome": "best"}, "outcome: Input should be 'any'"),
    ("feedback", {"item": "Maya prefers tea."}, "useful: Field required"),
    ("unpin", {"fact": ""}, "fact: String should have at least 1 character"),
]


@pytest.mark.parametrize(("name", "args", "expected"), BAD_ARGUMENTS)
def test_arguments_that_fail_the_schema_come_back_as_text(
    maya: GraphMemory, name: str, args: dict[str, object], expected: str
) -> None:
    tools = {
        x.name: x
        for x in [*make_memory_tools(maya, group_id="maya"),
                  *make_experience_tools(maya, group_id="maya"),
                  *make_usage_tools(maya, group_id="maya")]
    }
    answer = tools[name].invoke(args)
    assert isinstance(answer, str) and answer.startswith("Invalid arguments (")
    assert expected in answer and "errors.pydantic.dev" not in answer
    message = tools[name].invoke({"name": name, "args": args, "id": "7", "type": "tool_call"})
    assert isinstance(message, ToolMessage) and message.status == "error"
    assert expected in str(message.content)
    again = asyncio.run(tools[name].ainvoke(args))
    assert again == answer


def test_tools_async(maya: GraphMemory) -> None:
    tools = {x.name: x for x in make_memory_tools(maya, group_id="maya")}

    async def run() -> list[str]:
        return list(
            await asyncio.gather(
                tools["recall"].ainvoke({"query": "What does Maya prefer?", "k": 2}),
                tools["history"].ainvoke({"entity": "Maya", "predicate": "prefers"}),
            )
        )

    recall, history = asyncio.run(run())
    assert "Maya prefers tea." in recall and "replaced: Maya prefers coffee." in recall
    assert "Maya prefers coffee. (withdrawn on" in history and "correction" in history


def test_make_memory_tools_checks_group(maya: GraphMemory) -> None:
    with pytest.raises(ValueError, match="group_id"):
        make_memory_tools(maya, group_id=" ")
