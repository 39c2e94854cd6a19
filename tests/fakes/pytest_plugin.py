"""pytest plugin exposing the ``fake_openai`` fixture.

Enable it with ``pytest_plugins = ["tests.fakes.pytest_plugin"]`` in a test module or
in the top-level ``tests/conftest.py``; see :mod:`tests.fakes.openai_server`.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.openai_server import FakeOpenAIServer, serve


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAIServer]:
    """A started :class:`FakeOpenAIServer` (fresh per test, stopped afterwards).

    Tests that need another embedding size can set ``fake_openai.embedding_dim``.
    """
    yield from serve()
