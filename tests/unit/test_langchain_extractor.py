"""The ``langchain`` extractor with langchain-core's fake chat models and a scripted one."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain_core")

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from pydantic import Field

from graphmem import GraphMemory, HashEmbedder
from graphmem._config import Settings
from graphmem.extract.langchain import LangChainExtractor


def when(month: int) -> datetime:
    return datetime(2024, month, 1, tzinfo=UTC)


class ScriptedChat(BaseChatModel):
    """A tool-calling chat model that answers from a list and records what it was sent."""

    replies: list[Any]
    seen: list[list[BaseMessage]] = Field(default_factory=list)
    bound: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.seen.append(list(messages))
        reply = self.replies.pop(0)
        if isinstance(reply, BaseException):
            raise reply
        return ChatResult(generations=[ChatGeneration(message=reply)])

    def bind_tools(
        self, tools: Sequence[Any], *, tool_choice: str | None = None, **kwargs: Any
    ) -> Runnable[Any, AIMessage]:
        self.bound.append({"tools": list(tools), "tool_choice": tool_choice})
        return self.bind(tool_choice=tool_choice)


def fact(obj: str, **extra: Any) -> dict[str, Any]:
    item = {"subject": "Alice", "predicate": "lives_in", "object": obj}
    item.update(extra)
    return item


def tool_reply(*facts: dict[str, Any], tokens: tuple[int, int] = (500, 60)) -> AIMessage:
    return AIMessage(
        content="",
        tool_calls=[
            {
                "name": "Answer",
                "args": {"entities": [{"name": "Alice", "type": "person"}], "facts": list(facts)},
                "id": "call_1",
                "type": "tool_call",
            }
        ],
        usage_metadata={
            "input_tokens": tokens[0],
            "output_tokens": tokens[1],
            "total_tokens": sum(tokens),
        },
    )


@pytest.fixture
def memory_with(tmp_path: Path) -> Iterator[Any]:
    opened: list[GraphMemory] = []

    def make(extractor: LangChainExtractor) -> GraphMemory:
        mem = GraphMemory(
            tmp_path / "m.db",
            embedder=HashEmbedder(32),
            extractor=extractor,
            settings=Settings(),
        )
        mem.connect()
        opened.append(mem)
        return mem

    yield make
    for mem in opened:
        mem.close()


def places(mem: GraphMemory) -> list[tuple[str, bool]]:
    return [(f.target, f.is_current()) for f in mem.history("Alice", predicate="lives_in")]


def test_tool_calling_model_end_to_end(memory_with: Any) -> None:
    model = ScriptedChat(
        replies=[
            tool_reply(fact("Paris")),
            tool_reply(
                fact("Berlin", relation="supersedes", fact_id="F1", reason="moved"),
                tokens=(700, 80),
            ),
        ]
    )
    extractor = LangChainExtractor(model)
    assert (extractor.name, extractor.needs_context) == ("langchain", True)
    mem = memory_with(extractor)
    r1 = mem.add_episode("Alice lives in Paris.", source="chat", reference_time=when(1))
    r2 = mem.add_episode("Alice moved to Berlin.", source="chat", reference_time=when(6))

    assert (r1.llm_calls, r1.prompt_tokens, r1.completion_tokens) == (1, 500, 60)
    assert (r2.llm_calls, r2.prompt_tokens, r2.completion_tokens) == (1, 700, 80)
    assert extractor.usage == {"llm_calls": 2, "prompt_tokens": 1200, "completion_tokens": 140}
    assert places(mem) == [("Paris", False), ("Berlin", True)]
    (link,) = [r for r in mem.export() if r["type"] == "link"]
    assert (link["decided_by"], link["reason"]) == ("llm", "moved")
    assert model.bound[0]["tool_choice"] == "any"
    system, user = model.seen[1]
    assert system.type == "system" and "same_as" in str(system.content)
    assert "[F1] (lives_in) Alice lives in Paris." in str(user.content)
    assert str(user.content).endswith("Episode:\nAlice moved to Berlin.")


def test_model_without_tools_answers_in_text(memory_with: Any) -> None:
    model = GenericFakeChatModel(
        messages=iter(
            [
                AIMessage(
                    content='<think>hm</think>\n```json\n{"entities": [], "facts": '
                    '[{"subject": "Alice", "predicate": "lives_in", "object": "Paris"}]}\n```'
                )
            ]
        )
    )
    mem = memory_with(LangChainExtractor(model))
    result = mem.add_episode("Alice lives in Paris.", reference_time=when(1))
    assert result.status == "extracted"
    assert (result.llm_calls, result.prompt_tokens) == (1, 0)  # no usage_metadata reported
    assert places(mem) == [("Paris", True)]


def test_invalid_tool_arguments_get_one_repair_call(memory_with: Any) -> None:
    bad = AIMessage(
        content="",
        tool_calls=[
            {"name": "Answer", "args": {"entities": "Alice"}, "id": "c0", "type": "tool_call"}
        ],
    )
    model = ScriptedChat(replies=[bad, tool_reply(fact("Paris"))])
    mem = memory_with(LangChainExtractor(model))
    result = mem.add_episode("Alice lives in Paris.", reference_time=when(1))
    assert result.status == "extracted" and result.llm_calls == 2
    repair = str(model.seen[1][-1].content)
    assert "Your previous answer was" in repair and '"entities": "Alice"' in repair
    assert "facts" in repair  # the validation error names the missing field
    assert places(mem) == [("Paris", True)]


def test_truncated_answer_is_repaired(memory_with: Any) -> None:
    cut = tool_reply(fact("Paris"))
    cut.response_metadata = {"finish_reason": "length"}
    model = ScriptedChat(replies=[cut, tool_reply(fact("Paris"))])
    mem = memory_with(LangChainExtractor(model))
    result = mem.add_episode("Alice lives in Paris.", reference_time=when(1))
    assert result.status == "extracted" and result.llm_calls == 2
    assert "cut off" in str(model.seen[1][-1].content)


def test_refusal_and_errors_fail_the_episode_then_reprocess(memory_with: Any) -> None:
    model = ScriptedChat(
        replies=[
            AIMessage(content="", additional_kwargs={"refusal": "I can't help with that."}),
            ConnectionError("endpoint down"),
            tool_reply(fact("Paris")),
        ]
    )
    mem = memory_with(LangChainExtractor(model))
    first = mem.add_episode("Alice lives in Paris.", reference_time=when(1))
    assert first.status == "failed" and "refused" in (first.error or "")
    (second,) = mem.reprocess()
    assert second.status == "failed" and "ConnectionError: endpoint down" in (second.error or "")
    episode = mem.episode(first.episode_id)
    assert episode is not None and episode.status == "failed"
    assert episode.content == "Alice lives in Paris."
    assert mem.stats()["facts"] == 0
    (third,) = mem.reprocess()
    assert third.status == "extracted"
    assert places(mem) == [("Paris", True)]


def test_invalid_twice_fails(memory_with: Any) -> None:
    model = GenericFakeChatModel(messages=iter(["not json", "still not json"]))
    mem = memory_with(LangChainExtractor(model))
    result = mem.add_episode("Alice lives in Paris.", reference_time=when(1))
    assert result.status == "failed" and "after one repair call" in (result.error or "")


def test_budget_stops_before_calling(memory_with: Any) -> None:
    model = ScriptedChat(replies=[tool_reply(fact("Paris"))])
    mem = memory_with(LangChainExtractor(model, max_calls=1))
    assert mem.add_episode("Alice lives in Paris.", reference_time=when(1)).status == "extracted"
    stopped = mem.add_episode("Alice moved to Berlin.", reference_time=when(6))
    assert stopped.status == "failed" and "budget" in (stopped.error or "").lower()
    assert len(model.seen) == 1
