"""The ``llm`` extractor: one chat-completion call per episode, on any OpenAI-compatible endpoint.

Uses ``openai`` and ``tenacity`` (base dependencies, imported only here). What one ``extract`` does:

1. Build the prompt (``prompts/extract_facts.prompt``): the episode, its time, the speaker, a few
   earlier episodes of the same source, the current facts about the entities it likely mentions
   (as short aliases ``F1``…), and the functional predicates.
2. Ask the client-side ``Budget`` for a call (``BudgetExceededError`` *before* calling when a cap
   would be passed) and the shared ``RateLimiter`` for room (requests/min, tokens/min).
3. Call ``chat.completions.create`` with ``response_format`` = the answer's strict JSON schema.
   A server that rejects ``json_schema`` with a 400 gets ``json_object`` from then on.
   Transport retries are ours (the SDK's are off): 429 (``Retry-After`` honoured, capped), 5xx,
   timeouts and connection errors, with jittered exponential backoff and a cap; other 4xx fail.
4. Strip ``<think>…</think>``, parse, validate. A refusal fails the episode. An unusable
   optional field or an invalid fact is dropped with a warning (``Extraction.warnings``); an
   answer with nothing usable (or truncated) gets one repair call that shows the model its
   errors (a second, counted call).
5. Convert into an ``Extraction`` with its usage: ``llm_calls`` (every request sent, as the
   server counts them), ``llm_retries``, ``llm_repairs``, ``llm_failed_calls`` and tokens. A
   failed episode's ``LLMError`` / ``BudgetExceededError`` carries the same in ``usage``.

Every failure is an ``LLMError`` (or ``BudgetExceededError``): the facade marks the episode
``failed`` with the message, keeps its input, and ``GraphMemory.reprocess()`` retries it.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import time
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

import openai
from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt

from ..._config import Settings
from ..._errors import ConfigError, LLMError
from ..._models import EpisodeRecord, Extraction
from .._base import ExtractionContext
from .answer import Answer, InvalidAnswer, answer_json_schema, parse_answer
from .convert import Usage, charged_to, to_extraction
from .limits import Budget, RateLimiter, shared_rate_limiter
from .messages import ContextLimits, build_messages, estimate_tokens, repair_message
from .prompts import Prompt, load_prompt
from .steps import Acquire, Send, Step, Steps, Wait, adrive, drive, retried
from .transport import describe, rejects_json_schema, retry_after_seconds, retryable

__all__ = ["LLMExtractor", "retry_after_seconds"]

log = logging.getLogger("graphmem")

ResponseMode = Literal["json_schema", "json_object"]
_SCHEMA_NAME = "graphmem_extraction"


@dataclass
class _Reply:
    content: str | None
    finish_reason: str | None


class LLMExtractor:
    """Entities and facts from one chat-completion call per episode.

    ``LLMExtractor("gpt-4o-mini")`` (key from ``OPENAI_API_KEY``) or
    ``LLMExtractor("qwen2.5:7b", base_url="http://localhost:11434/v1")`` (Ollama; vLLM,
    llama.cpp server, Azure's ``/openai/v1/`` alike). ``max_retries`` counts retries after the
    first attempt of each call. ``max_calls``/``max_tokens`` cap what this extractor spends;
    ``requests_per_minute``/``tokens_per_minute`` pace it (or pass a shared ``rate_limiter``).
    ``max_completion_tokens`` caps each answer (the repair after a cut-off answer gets twice
    it); ``temperature`` is sent when set. The repair call is sampled at ``repair_temperature``
    (or ``temperature`` when higher): at temperature 0 a small model that looped until the cap
    repeats the same loop word for word (recorded: ``tests/fixtures/llm_real``).
    """

    name = "llm"
    needs_context = True

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 4,
        requests_per_minute: float | None = None,
        tokens_per_minute: float | None = None,
        max_calls: int | None = None,
        max_tokens: int | None = None,
        max_completion_tokens: int | None = 4096,
        temperature: float | None = None,
        repair_temperature: float | None = 0.7,
        response_format: ResponseMode = "json_schema",
        rate_limiter: RateLimiter | None = None,
        budget: Budget | None = None,
        client: openai.OpenAI | None = None,
        prompt: str | Prompt = "extract_facts",
        context_limits: ContextLimits | None = None,
        backoff_initial: float = 0.5,
        backoff_max: float = 20.0,
        retry_after_max: float = 60.0,
        sleep: Callable[[float], None] = time.sleep,
        async_sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        async_client: openai.AsyncOpenAI | None = None,
    ) -> None:
        if not isinstance(model, str) or not model.strip():
            raise ConfigError(
                "the llm extractor needs a model name (GRAPHMEM_LLM_MODEL or llm_model=)"
            )
        if max_retries < 0:
            raise ConfigError(f"max_retries must be >= 0, got {max_retries}")
        if timeout <= 0:
            raise ConfigError(f"timeout must be positive, got {timeout}")
        self.model = model.strip()
        # The openai client reads OPENAI_BASE_URL itself when no base_url is given; taking it
        # here too makes errors name the endpoint actually called, not api.openai.com.
        base_url = base_url or os.environ.get("OPENAI_BASE_URL", "").strip() or None
        self.base_url = base_url
        self.timeout = float(timeout)
        self.max_retries = int(max_retries)
        self.max_completion_tokens = max_completion_tokens
        self.temperature = temperature
        self.repair_temperature = repair_temperature
        self.response_format: ResponseMode = response_format
        self.backoff_initial = backoff_initial
        self.backoff_max = backoff_max
        self.retry_after_max = retry_after_max
        self._sleep = sleep
        self._async_sleep = async_sleep
        self.prompt = load_prompt(prompt) if isinstance(prompt, str) else prompt
        self.context_limits = context_limits or ContextLimits()
        self.budget = budget or Budget(max_calls, max_tokens)
        self.rate_limiter = rate_limiter or RateLimiter(requests_per_minute, tokens_per_minute)
        if client is None:
            key = api_key or os.environ.get("OPENAI_API_KEY")
            if not key:
                if base_url is None:
                    raise ConfigError(
                        "the llm extractor needs an API key for api.openai.com: set "
                        "OPENAI_API_KEY (or llm_api_key=), or point llm_base_url at a local server"
                    )
                key = "not-needed"  # local servers (Ollama, vLLM, llama.cpp) ignore it
            client = openai.OpenAI(
                api_key=key, base_url=base_url, timeout=self.timeout, max_retries=0
            )
        self.client = client
        # ``aextract``'s client: the one given, else one per event loop (an async client's
        # connections belong to the loop that opened them), made like the sync one.
        self._async_client = async_client
        self._async_clients: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, openai.AsyncOpenAI
        ] = weakref.WeakKeyDictionary()
        # OpenAI's newer models take max_completion_tokens; most compatible servers max_tokens.
        self._limit_param = (
            "max_completion_tokens"
            if base_url is None or "api.openai.com" in base_url
            else "max_tokens"
        )

    @classmethod
    def from_settings(cls, settings: Settings) -> LLMExtractor:
        """The extractor ``Settings`` describe (``llm_*`` fields), with a process-wide limiter."""
        if not settings.llm_model:
            raise ConfigError(
                "the llm extractor needs a model: set GRAPHMEM_LLM_MODEL or Settings(llm_model=...)"
            )
        rpm = _setting_number(settings, "llm_requests_per_minute", "GRAPHMEM_LLM_RPM")
        tpm = _setting_number(settings, "llm_tokens_per_minute", "GRAPHMEM_LLM_TPM")
        endpoint = (settings.llm_base_url or os.environ.get("OPENAI_BASE_URL", "").strip()
                    or "api.openai.com")
        limiter = shared_rate_limiter(endpoint, settings.llm_model, rpm, tpm)
        return cls(
            settings.llm_model,
            base_url=settings.llm_base_url,
            api_key=settings.llm_api_key,
            timeout=settings.llm_timeout,
            max_retries=settings.llm_max_retries,
            max_calls=settings.llm_max_calls,
            max_tokens=settings.llm_max_tokens,
            max_completion_tokens=settings.llm_max_completion_tokens,
            temperature=settings.llm_temperature,
            rate_limiter=limiter,
            context_limits=ContextLimits(max_facts=settings.context_facts),
        )

    def __repr__(self) -> str:
        where = self.base_url or "api.openai.com"
        return f"LLMExtractor(model={self.model!r}, base_url={where!r})"

    # ------------------------------------------------------------------ extraction
    def extract(self, episode: EpisodeRecord, context: ExtractionContext) -> Extraction:
        return drive(self._extraction(episode, context), self._perform)

    async def aextract(self, episode: EpisodeRecord, context: ExtractionContext) -> Extraction:
        """``extract`` on ``openai.AsyncOpenAI``: the same steps (``steps.py``), awaited."""
        return await adrive(self._extraction(episode, context), self._aperform)

    def _perform(self, step: Step) -> Any:
        if isinstance(step, Send):
            return self.client.chat.completions.create(**step.request)
        if isinstance(step, Wait):
            self._sleep(step.seconds)
        else:
            self.rate_limiter.acquire(step.tokens)
        return None

    async def _aperform(self, step: Step) -> Any:
        if isinstance(step, Send):
            return await self._aclient().chat.completions.create(**step.request)
        if isinstance(step, Wait):
            await self._async_sleep(step.seconds)
            return None
        waited = 0.0
        while (delay := self.rate_limiter.take(step.tokens, waited)) > 0.0:
            await self._async_sleep(delay)
            waited += delay
        return None

    def _aclient(self) -> openai.AsyncOpenAI:
        if self._async_client is not None:
            return self._async_client
        loop = asyncio.get_running_loop()
        client = self._async_clients.get(loop)
        if client is None:
            sync = self.client
            client = openai.AsyncOpenAI(
                api_key=sync.api_key,
                base_url=sync.base_url,
                timeout=sync.timeout,
                max_retries=0,
                default_headers=dict(sync._custom_headers),
            )
            self._async_clients[loop] = client
        return client

    async def aclose(self) -> None:
        """Close the async client this event loop's ``aextract`` calls opened (its connections
        belong to the loop: close them before the loop ends)."""
        client = self._async_clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.close()

    def _extraction(self, episode: EpisodeRecord, context: ExtractionContext) -> Steps[Extraction]:
        messages, aliases = build_messages(self.prompt, episode, context, self.context_limits)
        usage = Usage()
        with charged_to(usage):  # failed episodes' calls are paid for too
            answer = yield from self._answer_with_repair(episode, messages, usage)
        return to_extraction(answer, episode, context, aliases, usage)

    def _answer_with_repair(
        self, episode: EpisodeRecord, messages: list[dict[str, str]], usage: Usage
    ) -> Steps[Answer]:
        reply = yield from self._complete(messages, usage, self.max_completion_tokens)
        try:
            return self._answer(reply)
        except InvalidAnswer as first:
            log.info("graphmem: %s: invalid answer (%s); one repair call", episode.id, first)
            repair = [
                *messages,
                {"role": "assistant", "content": (reply.content or "")[:4000]},
                {"role": "user", "content": repair_message(first)},
            ]
            limit = self.max_completion_tokens
            if first.truncated and limit is not None:
                limit *= 2
            usage.repairs += 1
            second = yield from self._complete(repair, usage, limit, self._repair_temperature())
            try:
                return self._answer(second)
            except InvalidAnswer as exc:
                raise LLMError(
                    f"{self.model} gave no valid answer after one repair call "
                    f"({usage.calls} calls): {exc}"
                ) from None

    def _repair_temperature(self) -> float | None:
        chosen = [t for t in (self.temperature, self.repair_temperature) if t is not None]
        return max(chosen) if chosen else None

    def _answer(self, reply: _Reply) -> Answer:
        return parse_answer(reply.content, truncated=reply.finish_reason == "length")

    # ------------------------------------------------------------------ one counted call
    def _complete(
        self,
        messages: list[dict[str, str]],
        usage: Usage,
        max_completion: int | None,
        temperature: float | None = None,
    ) -> Steps[_Reply]:
        """One counted call; ``temperature`` overrides the extractor's (the repair call)."""
        estimate = estimate_tokens(messages)
        self.budget.reserve(estimate)
        sampling = self.temperature if temperature is None else temperature
        try:
            response = yield from self._with_retries(
                messages, estimate, max_completion, usage, sampling
            )
        except openai.OpenAIError as exc:
            self.budget.release()
            usage.failed += 1
            raise self._error(exc) from exc
        except BaseException:
            self.budget.release()
            raise
        prompt_tokens = completion_tokens = 0
        if response.usage is not None:
            prompt_tokens = int(response.usage.prompt_tokens or 0)
            completion_tokens = int(response.usage.completion_tokens or 0)
        else:
            prompt_tokens = estimate
        self.budget.commit(prompt_tokens, completion_tokens)
        self.rate_limiter.settle(
            estimate + (max_completion or 0) // 4, prompt_tokens + completion_tokens
        )
        usage.prompt_tokens += prompt_tokens
        usage.completion_tokens += completion_tokens
        if not response.choices:
            return _Reply(None, None)
        choice = response.choices[0]
        refusal = getattr(choice.message, "refusal", None)
        if refusal:
            raise LLMError(f"{self.model} refused to extract this episode: {refusal}")
        if choice.finish_reason == "content_filter":
            raise LLMError(f"{self.model}'s content filter blocked the answer for this episode")
        return _Reply(choice.message.content, choice.finish_reason)

    def _with_retries(
        self,
        messages: list[dict[str, str]],
        estimate: int,
        max_completion: int | None,
        usage: Usage,
        temperature: float | None,
    ) -> Steps[Any]:
        def before_sleep(state: RetryCallState) -> None:
            usage.retries += 1
            self._log_retry(state)

        retrying = Retrying(
            stop=stop_after_attempt(self.max_retries + 1),
            wait=self._wait,
            retry=retry_if_exception(retryable),
            before_sleep=before_sleep,
            reraise=True,
        )

        def attempt() -> Steps[Any]:
            yield Acquire(estimate + (max_completion or 0) // 4)
            return (yield from self._send(messages, max_completion, usage, temperature))

        return (yield from retried(retrying, attempt))

    def _send(
        self,
        messages: list[dict[str, str]],
        max_completion: int | None,
        usage: Usage,
        temperature: float | None,
    ) -> Steps[Any]:
        mode = self.response_format
        try:
            usage.calls += 1  # every request the server sees, answered or not
            return (yield Send(self._request(messages, max_completion, mode, temperature)))
        except openai.APIStatusError as exc:
            if mode != "json_schema" or not rejects_json_schema(exc):
                raise
            log.warning(
                "graphmem: %s rejects response_format json_schema (%s); using json_object "
                "from now on",
                self.base_url or "the endpoint",
                exc.status_code,
            )
            self.response_format = "json_object"
            usage.retries += 1  # the rejected request, sent again in the other mode
            usage.calls += 1
            return (yield Send(self._request(messages, max_completion, "json_object", temperature)))

    def _request(
        self,
        messages: list[dict[str, str]],
        max_completion: int | None,
        mode: ResponseMode,
        temperature: float | None,
    ) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"model": self.model, "messages": messages}
        if mode == "json_schema":
            kwargs["response_format"] = {
                "type": "json_schema",
                "json_schema": {
                    "name": _SCHEMA_NAME,
                    "schema": answer_json_schema(),
                    "strict": True,
                },
            }
        else:
            kwargs["response_format"] = {"type": "json_object"}
        if max_completion is not None:
            kwargs[self._limit_param] = max_completion
        if temperature is not None:
            kwargs["temperature"] = temperature
        return kwargs

    # ------------------------------------------------------------------ retry policy
    def _wait(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome is not None else None
        if exc is not None:
            after = retry_after_seconds(exc)
            if after is not None:
                delay = min(after, self.retry_after_max)
                self.rate_limiter.hold(delay)
                return delay + random.uniform(0.0, min(0.25, 0.1 * delay))
        ceiling = min(self.backoff_max, self.backoff_initial * 2 ** (state.attempt_number - 1))
        return random.uniform(ceiling / 2, ceiling)

    def _log_retry(self, state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome is not None else None
        wait = state.next_action.sleep if state.next_action is not None else 0.0
        log.info(
            "graphmem: %s attempt %d failed (%s); retrying in %.2fs",
            self.model,
            state.attempt_number,
            describe(exc),
            wait,
        )

    def _error(self, exc: openai.OpenAIError) -> LLMError:
        where = self.base_url or "api.openai.com"
        attempts = f"after {self.max_retries + 1} attempts"
        if isinstance(exc, openai.APITimeoutError):
            return LLMError(f"{where} timed out ({self.timeout:g}s) {attempts}")
        if isinstance(exc, openai.APIConnectionError):
            return LLMError(f"could not reach {where} {attempts}: {exc}")
        if isinstance(exc, openai.RateLimitError):
            return LLMError(f"{where} kept rate-limiting (429) {attempts}")
        if isinstance(exc, openai.AuthenticationError):
            return LLMError(f"{where} rejected the API key (401); check OPENAI_API_KEY")
        if isinstance(exc, openai.NotFoundError):
            return LLMError(f"{where} does not know model {self.model!r} or the path (404)")
        if isinstance(exc, openai.APIStatusError):
            if exc.status_code >= 500:
                return LLMError(f"{where} failed with {exc.status_code} {attempts}: {exc.message}")
            return LLMError(f"{where} rejected the request ({exc.status_code}): {exc.message}")
        return LLMError(f"{where}: {exc}")

    @property
    def usage(self) -> dict[str, int]:
        """Calls and tokens this extractor has spent so far (all threads)."""
        return {
            "llm_calls": self.budget.calls,
            "prompt_tokens": self.budget.prompt_tokens,
            "completion_tokens": self.budget.completion_tokens,
        }


def _setting_number(settings: Settings, field: str, env: str) -> float | None:
    value: Any = getattr(settings, field, None)
    if value is None:
        value = os.environ.get(env) or None
    if value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{env} must be a number, got {value!r}") from None
    return number if number > 0 else None
