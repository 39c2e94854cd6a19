"""The ``langchain`` extractor: any LangChain ``BaseChatModel``, same prompt and answer as ``llm``.

Uses ``langchain-core`` (a base dependency, imported only here). The model is asked through
``with_structured_output(Answer, include_raw=True)`` (tool calling); a model without tool support
(``with_structured_output`` raises ``NotImplementedError``) is asked for the JSON object in
plain text instead. Retries, timeouts and rate limits are the chat model's own (for example
``ChatOpenAI(max_retries=...)``); this extractor adds the call/token budget, ``<think>``
stripping, refusal handling and the one validate-and-repair call. Tokens come from the
messages' ``usage_metadata`` when the model reports it.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import Runnable
from pydantic import ValidationError

from .._errors import GraphMemError, LLMError
from .._models import EpisodeRecord, Extraction
from ._base import ExtractionContext
from .llm.answer import Answer, InvalidAnswer, parse_answer, validation_text
from .llm.convert import Usage, charged_to, to_extraction
from .llm.limits import Budget
from .llm.messages import ContextLimits, build_messages, estimate_tokens, repair_message
from .llm.prompts import Prompt, load_prompt

__all__ = ["LangChainExtractor"]

log = logging.getLogger("graphmem")


@dataclass
class _Result:
    raw: AIMessage
    parsed: Answer | None
    error: BaseException | None


def _text(message: BaseMessage) -> str:
    return message.text if isinstance(message.text, str) else str(message.content)


def _raw_answer(message: AIMessage) -> str:
    """What the model said, for the repair turn: tool-call arguments, else the text."""
    for call in message.tool_calls:
        return json.dumps(call.get("args", {}), ensure_ascii=False)
    for bad in message.invalid_tool_calls:
        return str(bad.get("args") or "")
    return _text(message)


def _to_langchain(messages: list[dict[str, str]]) -> list[BaseMessage]:
    out: list[BaseMessage] = []
    for message in messages:
        role, content = message["role"], message["content"]
        if role == "system":
            out.append(SystemMessage(content=content))
        elif role == "assistant":
            out.append(AIMessage(content=content))
        else:
            out.append(HumanMessage(content=content))
    return out


class LangChainExtractor:
    """Entities and facts from one call of a LangChain chat model per episode."""

    name = "langchain"
    needs_context = True

    def __init__(
        self,
        chat_model: BaseChatModel,
        *,
        max_calls: int | None = None,
        max_tokens: int | None = None,
        budget: Budget | None = None,
        prompt: str | Prompt = "extract_facts",
        context_limits: ContextLimits | None = None,
        structured_output: bool = True,
    ) -> None:
        self.chat_model = chat_model
        self.budget = budget or Budget(max_calls, max_tokens)
        self.prompt = load_prompt(prompt) if isinstance(prompt, str) else prompt
        self.context_limits = context_limits or ContextLimits()
        self._structured: Runnable[Any, Any] | None = None
        if structured_output:
            try:
                self._structured = chat_model.with_structured_output(Answer, include_raw=True)
            except NotImplementedError:
                log.info(
                    "graphmem: %s has no tool calling; asking for JSON in plain text",
                    type(chat_model).__name__,
                )

    def __repr__(self) -> str:
        return f"LangChainExtractor({type(self.chat_model).__name__})"

    @property
    def usage(self) -> dict[str, int]:
        return {
            "llm_calls": self.budget.calls,
            "prompt_tokens": self.budget.prompt_tokens,
            "completion_tokens": self.budget.completion_tokens,
        }

    def extract(self, episode: EpisodeRecord, context: ExtractionContext) -> Extraction:
        messages, aliases = build_messages(self.prompt, episode, context, self.context_limits)
        usage = Usage()
        with charged_to(usage):  # failed episodes' calls are paid for too
            answer = self._answer_with_repair(episode, messages, usage)
        return to_extraction(answer, episode, context, aliases, usage)

    def _answer_with_repair(
        self, episode: EpisodeRecord, messages: list[dict[str, str]], usage: Usage
    ) -> Answer:
        result = self._call(messages, usage)
        try:
            return self._answer(result)
        except InvalidAnswer as first:
            log.info("graphmem: %s: invalid answer (%s); one repair call", episode.id, first)
            repair = [
                *messages,
                {
                    "role": "user",
                    "content": "Your previous answer was:\n"
                    + _raw_answer(result.raw)[:4000]
                    + "\n\n"
                    + repair_message(first),
                },
            ]
            usage.repairs += 1
            second = self._call(repair, usage)
            try:
                return self._answer(second)
            except InvalidAnswer as exc:
                raise LLMError(
                    f"{type(self.chat_model).__name__} gave no valid answer after one repair "
                    f"call ({usage.calls} calls): {exc}"
                ) from None

    def _call(self, messages: list[dict[str, str]], usage: Usage) -> _Result:
        estimate = estimate_tokens(messages)
        self.budget.reserve(estimate)
        lc_messages = _to_langchain(messages)
        usage.calls += 1  # counted when sent: a call that fails is paid for too
        try:
            if self._structured is not None:
                out = self._structured.invoke(lc_messages)
                raw, parsed, error = out["raw"], out.get("parsed"), out.get("parsing_error")
            else:
                raw, parsed, error = self.chat_model.invoke(lc_messages), None, None
        except GraphMemError:
            self.budget.release()
            usage.failed += 1
            raise
        except Exception as exc:  # the chat model's own errors, after its own retries
            self.budget.release()
            usage.failed += 1
            raise LLMError(
                f"{type(self.chat_model).__name__} failed: {type(exc).__name__}: {exc}"
            ) from exc
        if not isinstance(raw, AIMessage):
            raw = AIMessage(content=_text(raw) if isinstance(raw, BaseMessage) else str(raw))
        counted = raw.usage_metadata
        prompt_tokens = int(counted["input_tokens"]) if counted else 0
        completion_tokens = int(counted["output_tokens"]) if counted else 0
        self.budget.commit(prompt_tokens, completion_tokens)
        usage.prompt_tokens += prompt_tokens
        usage.completion_tokens += completion_tokens
        refusal = raw.additional_kwargs.get("refusal")
        if refusal:
            raise LLMError(f"{type(self.chat_model).__name__} refused this episode: {refusal}")
        return _Result(raw, parsed if isinstance(parsed, Answer) else None, error)

    def _answer(self, result: _Result) -> Answer:
        meta = result.raw.response_metadata
        finish = meta.get("finish_reason") or meta.get("stop_reason")
        if finish in ("length", "max_tokens"):
            raise InvalidAnswer("the answer was cut off at the length limit", truncated=True)
        if result.parsed is not None:
            return result.parsed
        if result.error is not None and (result.raw.tool_calls or result.raw.invalid_tool_calls):
            error = result.error
            detail = validation_text(error) if isinstance(error, ValidationError) else str(error)
            raise InvalidAnswer(f"the tool call arguments do not match the schema:\n{detail}")
        return parse_answer(_text(result.raw))
