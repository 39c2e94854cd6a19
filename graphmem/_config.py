"""Typed settings, read from the environment once and overridable in code."""

from __future__ import annotations

import os

from pydantic import BaseModel, Field

__all__ = ["Settings"]


class Settings(BaseModel):
    """graphmem settings. ``Settings.from_env()`` reads the ``GRAPHMEM_*`` variables.

    - ``store``: store URL (``GRAPHMEM_STORE``); default ``sqlite:///graphmem.db``.
    - ``group_id``: default group (``GRAPHMEM_GROUP``).
    - ``default_speaker``: entity that first-person text is about when an episode names no
      speaker (the role's name is used when the metadata gives a role).
    - ``llm_model`` / ``llm_base_url`` / ``llm_api_key``: an OpenAI-compatible model for the
      ``llm`` extractor (``GRAPHMEM_LLM_MODEL``, ``GRAPHMEM_LLM_BASE_URL``, ``OPENAI_API_KEY``).
    """

    store: str | None = None
    group_id: str = "default"
    default_speaker: str = "user"
    auto_migrate: bool = True
    llm_model: str | None = None
    llm_base_url: str | None = None
    llm_api_key: str | None = Field(default=None, repr=False)
    llm_timeout: float = 60.0
    llm_max_retries: int = 4
    llm_max_calls: int | None = None
    llm_max_tokens: int | None = None
    llm_requests_per_minute: float | None = None
    llm_tokens_per_minute: float | None = None
    context_facts: int = 20
    bulk_chunk: int = 256
    llm_concurrency: int = 4
    context_episodes: int = 3

    @classmethod
    def from_env(cls, **overrides: object) -> Settings:
        env = os.environ
        values: dict[str, object] = {
            "store": env.get("GRAPHMEM_STORE") or None,
            "group_id": env.get("GRAPHMEM_GROUP") or "default",
            "llm_model": env.get("GRAPHMEM_LLM_MODEL") or None,
            "llm_base_url": env.get("GRAPHMEM_LLM_BASE_URL") or None,
            "llm_api_key": env.get("OPENAI_API_KEY") or None,
            "llm_requests_per_minute": env.get("GRAPHMEM_LLM_RPM") or None,
            "llm_tokens_per_minute": env.get("GRAPHMEM_LLM_TPM") or None,
        }
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls.model_validate(values)
