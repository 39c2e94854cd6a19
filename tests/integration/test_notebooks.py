"""The notebooks in ``notebooks/``.

- The committed files (hermetic): the four notebooks, no outputs or execution counts, and only
  the public API imported.
- Executing each one offline on the embedded default, failing on any cell error (``integration``:
  it starts a Jupyter kernel). The kernel runs the tests' own Python (the venv's), whatever kernel
  specs the machine has installed.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
PATHS = sorted(NOTEBOOKS.glob("*.ipynb"))
EXPECTED = ["01_quickstart", "02_temporal", "03_graph_exploration", "04_robot_episodes"]
PUBLIC = ("graphmem", "graphmem.integrations", "graphmem.integrations.langchain",
          "graphmem.integrations.mcp")
FIGURES = ("02_temporal", "03_graph_exploration", "04_robot_episodes")
INTERACTIVE = ("03_graph_exploration",)  # neo4j-viz: self-contained HTML
CELL_TIMEOUT_S = 120
NOTEBOOK_BUDGET_S = 60  # each runs in a few seconds; this only catches a runaway


def _book(path: Path) -> dict[str, Any]:
    return dict(json.loads(path.read_text(encoding="utf-8")))


# ----------------------------------------------------------------------------- committed files


def test_the_four_notebooks_exist() -> None:
    assert [p.stem for p in PATHS] == EXPECTED


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_committed_without_outputs(path: Path) -> None:
    book = _book(path)
    assert book["nbformat"] == 4
    for number, cell in enumerate(book["cells"]):
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [], f"cell {number} has outputs: clear them"
            assert cell["execution_count"] is None, f"cell {number} has an execution count"
        assert "attachments" not in cell


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_only_the_public_api_is_imported(path: Path) -> None:
    for cell in _book(path)["cells"]:
        if cell["cell_type"] != "code":
            continue
        for node in ast.walk(ast.parse("".join(cell["source"]))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
                if node.module.startswith("graphmem"):
                    private = [a.name for a in node.names if a.name.startswith("_")]
                    assert not private, f"{path.name} imports {private} from {node.module}"
            for name in names:
                if name.split(".")[0] == "graphmem":
                    assert name in PUBLIC, f"{path.name} imports {name}"


# ----------------------------------------------------------------------------- execution


def _kernel_manager() -> Any:
    from jupyter_client.kernelspec import KernelSpec, KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager

    class ThisPython(KernelSpecManager):
        """Every kernel name resolves to ``sys.executable -m ipykernel_launcher``."""

        def get_kernel_spec(self, kernel_name: str) -> KernelSpec:
            return KernelSpec(
                argv=[sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                display_name=f"Python ({sys.prefix})",
                language="python",
                resource_dir=str(NOTEBOOKS),
            )

    return AsyncKernelManager(kernel_name="python3", kernel_spec_manager=ThisPython())


def _offline_env(tmp_path: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("GRAPHMEM_", "OPENAI_", "NEO4J_"))
    }
    env.update(
        MPLBACKEND="module://matplotlib_inline.backend_inline",
        MPLCONFIGDIR=str(tmp_path / "mpl"),
        JUPYTER_PLATFORM_DIRS="1",
        PYDEVD_DISABLE_FILE_VALIDATION="1",
    )
    return env


@pytest.mark.integration
@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_notebook_runs(path: Path, tmp_path: Path) -> None:
    for name in ("nbformat", "nbclient", "ipykernel", "pandas", "matplotlib", "networkx",
                 "scipy", "neo4j_viz"):
        if importlib.util.find_spec(name) is None:
            pytest.skip(f"{name} is not installed (pip install -e '.[notebooks]')")
    import nbclient
    import nbformat

    book = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        book,
        km=_kernel_manager(),
        timeout=CELL_TIMEOUT_S,
        kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOKS)}},
        allow_errors=False,
    )
    started = time.monotonic()
    try:
        client.execute(env=_offline_env(tmp_path))
    except nbclient.exceptions.CellExecutionError as exc:
        pytest.fail(f"{path.name}: a cell failed:\n{exc}")
    elapsed = time.monotonic() - started
    assert elapsed < NOTEBOOK_BUDGET_S, f"{path.name} took {elapsed:.1f}s"
    code = [cell for cell in book.cells if cell.cell_type == "code"]
    assert all(cell.execution_count for cell in code), "a code cell did not run"
    errors = [o for cell in code for o in cell.outputs if o.output_type == "error"]
    assert not errors
    images = [o for cell in code for o in cell.outputs if "image/png" in o.get("data", {})]
    if path.stem in FIGURES:
        assert images, f"{path.name} drew no figure"
    pages = [o["data"]["text/html"] for cell in code for o in cell.outputs
             if "text/html" in o.get("data", {})]
    if path.stem in INTERACTIVE:
        # the visualiser's page carries its own script: nothing to fetch from the network
        assert any("<script" in page for page in pages), f"{path.name} rendered no graph"
        assert not [p for p in pages if "<script src=\"http" in p or "<link href=\"http" in p]
