"""Typed settings, read from the environment once and overridable in code."""

from __future__ import annotations

import os
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    ValidationError,
    ValidationInfo,
    model_validator,
)

from ._args import GROUP_ID_MAX_CHARS
from ._errors import ConfigError

__all__ = ["ENV_VARS", "Settings"]

# The environment variable each setting is read from by ``Settings.from_env``.
ENV_VARS = {
    "store": "GRAPHMEM_STORE",
    "group_id": "GRAPHMEM_GROUP",
    "llm_model": "GRAPHMEM_LLM_MODEL",
    "llm_base_url": "GRAPHMEM_LLM_BASE_URL",
    "llm_api_key": "OPENAI_API_KEY",
    "llm_requests_per_minute": "GRAPHMEM_LLM_RPM",
    "llm_tokens_per_minute": "GRAPHMEM_LLM_TPM",
    "llm_timeout": "GRAPHMEM_LLM_TIMEOUT",
    "llm_concurrency": "GRAPHMEM_LLM_CONCURRENCY",
    "llm_max_concurrency": "GRAPHMEM_LLM_MAX_CONCURRENCY",
    "llm_max_completion_tokens": "GRAPHMEM_LLM_MAX_COMPLETION_TOKENS",
    "llm_temperature": "GRAPHMEM_LLM_TEMPERATURE",
}

# What each setting accepts, for error messages.
_ACCEPTS = {
    "store": "a store URL or path (sqlite:///memory.db, memory.db, neo4j://host:7687)",
    "group_id": f"a non-empty group name of at most {GROUP_ID_MAX_CHARS:,} characters",
    "default_speaker": "a non-empty name",
    "auto_migrate": "true or false",
    "llm_model": "a model name",
    "llm_base_url": "an OpenAI-compatible endpoint URL (http://localhost:11434/v1)",
    "llm_api_key": "a string",
    "llm_timeout": "a number of seconds > 0",
    "llm_max_retries": "an integer >= 0",
    "llm_max_calls": "an integer >= 0, or nothing (no limit)",
    "llm_max_tokens": "an integer >= 0, or nothing (no limit)",
    "llm_requests_per_minute": "a number >= 0 (0 or unset: no limit)",
    "llm_tokens_per_minute": "a number >= 0 (0 or unset: no limit)",
    "llm_max_completion_tokens": "an integer >= 1",
    "llm_temperature": "a number from 0 to 2, or nothing (the server's default)",
    "context_facts": "an integer >= 0",
    "bulk_chunk": "an integer >= 1",
    "llm_concurrency": "an integer >= 1",
    "llm_max_concurrency": "an integer >= 1",
    "context_episodes": "an integer >= 0",
}


class Settings(BaseModel):
    """graphmem settings. ``Settings.from_env()`` reads the ``GRAPHMEM_*`` variables.

    - ``store``: store URL (``GRAPHMEM_STORE``); default ``sqlite:///graphmem.db``.
    - ``group_id``: default group (``GRAPHMEM_GROUP``).
    - ``default_speaker``: entity that first-person text is about when an episode names no
      speaker (the role's name is used when the metadata gives a role).
    - ``llm_model`` / ``llm_base_url`` / ``llm_api_key``: an OpenAI-compatible model for the
      ``llm`` extractor (``GRAPHMEM_LLM_MODEL``, ``GRAPHMEM_LLM_BASE_URL``, ``OPENAI_API_KEY``).
    - ``llm_requests_per_minute`` / ``llm_tokens_per_minute``: a pace for it
      (``GRAPHMEM_LLM_RPM``, ``GRAPHMEM_LLM_TPM``; 0 or unset: no limit).
    - ``llm_timeout`` / ``llm_concurrency``: seconds a call may take and calls at once in bulk
      ingest (``GRAPHMEM_LLM_TIMEOUT``, ``GRAPHMEM_LLM_CONCURRENCY``); a CPU-only local server
      wants minutes and 1.
    - ``llm_max_concurrency``: LLM requests in flight at once across all the concurrent calls
      of one ``AsyncGraphMemory`` (its extraction runs on ``AsyncOpenAI`` in the event loop,
      bounded by a semaphore; ``GRAPHMEM_LLM_MAX_CONCURRENCY``, default 8).
    - ``llm_max_completion_tokens`` / ``llm_temperature``: the extractor's answer cap (the
      repair call after a cut-off answer gets twice it) and sampling temperature
      (``GRAPHMEM_LLM_MAX_COMPLETION_TOKENS``, ``GRAPHMEM_LLM_TEMPERATURE``; unset: the
      server's default).

    A bad value (in code or in the environment) raises ``ConfigError`` naming the setting, or
    the variable it came from, and what it accepts; so does an unknown setting name.
    """

    model_config = ConfigDict(extra="forbid")

    store: str | None = None
    group_id: str = Field(default="default", min_length=1, max_length=GROUP_ID_MAX_CHARS)
    default_speaker: str = Field(default="user", min_length=1)
    auto_migrate: bool = True
    llm_model: str | None = None
    llm_base_url: str | None = None
    llm_api_key: str | None = Field(default=None, repr=False)
    llm_timeout: float = Field(default=60.0, gt=0)
    llm_max_retries: int = Field(default=4, ge=0)
    llm_max_calls: int | None = Field(default=None, ge=0)
    llm_max_tokens: int | None = Field(default=None, ge=0)
    llm_requests_per_minute: float | None = Field(default=None, ge=0)
    llm_tokens_per_minute: float | None = Field(default=None, ge=0)
    llm_max_completion_tokens: int = Field(default=4096, ge=1)
    llm_temperature: float | None = Field(default=None, ge=0, le=2)
    context_facts: int = Field(default=20, ge=0)
    bulk_chunk: int = Field(default=256, ge=1)
    llm_concurrency: int = Field(default=4, ge=1)
    llm_max_concurrency: int = Field(default=8, ge=1)
    context_episodes: int = Field(default=3, ge=0)

    @model_validator(mode="wrap")
    @classmethod
    def _as_config_error(
        cls, data: Any, handler: ModelWrapValidatorHandler[Settings], info: ValidationInfo
    ) -> Settings:
        """Turn pydantic's ``ValidationError`` into a ``ConfigError`` that says where the bad
        value came from (the environment variable when ``from_env`` read it) and the fix."""
        try:
            return handler(data)
        except ValidationError as exc:
            from_env = set((info.context or {}).get("from_env", ()))
            raise ConfigError(_describe(exc, from_env)) from None

    @classmethod
    def from_env(cls, **overrides: object) -> Settings:
        env = os.environ
        values: dict[str, object] = {}
        for name, var in ENV_VARS.items():
            value = env.get(var)
            if value is not None and value.strip():  # set but empty: unset
                values[name] = value
        values.setdefault("group_id", "default")
        from_env = set(values) - {k for k, v in overrides.items() if v is not None}
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls.model_validate(values, context={"from_env": from_env})


def _describe(exc: ValidationError, from_env: set[str]) -> str:
    """One line per bad setting: ``GRAPHMEM_LLM_RPM='abc' is not valid: expected …``."""
    parts: list[str] = []
    for error in exc.errors(include_url=False):
        loc = error.get("loc") or ()
        if not loc:
            parts.append(f"Settings: {error.get('msg', 'invalid')}")
            continue
        name = str(loc[0])
        shown = "<hidden>" if name == "llm_api_key" else _short(error.get("input"))
        if error.get("type") == "extra_forbidden":
            known = ", ".join(sorted(Settings.model_fields))
            parts.append(f"Settings has no setting {name!r} (known: {known})")
            continue
        where = (
            f"{ENV_VARS[name]}={shown}"
            if name in from_env and name in ENV_VARS
            else (f"Settings.{name}={shown}")
        )
        accepts = _ACCEPTS.get(name, "another value")
        parts.append(f"{where} is not valid: expected {accepts}")
    return "; ".join(parts) or str(exc)


def _short(value: object, limit: int = 60) -> str:
    try:
        text = repr(value)
    except Exception:
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 1] + "…"
