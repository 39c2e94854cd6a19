"""The Python snippets of the integration docs run as written (each page in order, in one
namespace, in a scratch directory). A fence preceded by ``<!-- not run -->`` is skipped (it needs
a model, a server or a host)."""

from __future__ import annotations

import contextlib
import io
import os
import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
FENCE = re.compile(r"(<!-- not run -->\s*\n)?```python\n(.*?)```", re.S)
PAGES = {
    "python.md": [],
    "robots.md": [],
    "langchain.md": ["langchain_core"],
    "langgraph.md": ["langgraph", "langmem"],
    "mcp.md": ["mcp"],
}


def snippets(page: str) -> list[str]:
    text = (DOCS / page).read_text(encoding="utf-8")
    return [m.group(2) for m in FENCE.finditer(text) if not m.group(1)]


@pytest.mark.parametrize("page", sorted(PAGES))
def test_doc_snippets_run(page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for module in PAGES[page]:
        pytest.importorskip(module)
    for name in list(os.environ):
        if name.startswith(("GRAPHMEM_", "OPENAI_")):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    blocks = snippets(page)
    assert blocks, f"{page} has no runnable snippet"
    namespace: dict[str, object] = {"__name__": f"docs_{page.replace('.', '_')}"}
    out = io.StringIO()
    for number, block in enumerate(blocks, 1):
        try:
            with contextlib.redirect_stdout(out):
                exec(compile(block, f"{page}#snippet-{number}", "exec"), namespace)
        except Exception as exc:  # pragma: no cover - the failure message is the point
            pytest.fail(f"{page} snippet {number} failed: {exc!r}\n{block}")
