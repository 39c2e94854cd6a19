"""Every cypher/**/*.cypher file (the Browser's saved queries in cypher/browser/ too) must pass
Neo4j's own Cypher parser and semantic analysis (tools/cypher-lint,
@neo4j-cypher/language-support). This is what checks the
Neo4j-only statements (vector / full-text index DDL) that the ArcadeDB test server refuses.

Needs node and `bash tools/cypher-lint/install.sh`; skips otherwise. File convention: one
statement per file; migration files may hold several, separated by a line `// ---`.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
LINT_DIR = REPO / "tools" / "cypher-lint"
LINT = LINT_DIR / "lint.mjs"
CYPHER_DIR = REPO / "cypher"
FIXTURES = sorted((LINT_DIR / "fixtures").glob("*.cypher"))

_NODE = shutil.which("node")
pytestmark = [
    pytest.mark.skipif(_NODE is None, reason="node is not installed (needed for the Cypher lint)"),
    pytest.mark.skipif(
        not (LINT_DIR / "node_modules" / "@neo4j-cypher" / "language-support").is_dir(),
        reason="Cypher linter not installed: run `bash tools/cypher-lint/install.sh`",
    ),
]

Result = dict[str, list[dict[str, Any]]]


def run_lint(paths: list[Path]) -> tuple[int, Result]:
    assert _NODE is not None
    proc = subprocess.run(
        [_NODE, str(LINT), *map(str, paths)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode in (0, 1), f"linter crashed (rc {proc.returncode}):\n{proc.stderr}"
    results: Result = {}
    for line in proc.stdout.splitlines():
        if line.strip():
            obj = json.loads(line)
            results[obj["file"]] = obj["diagnostics"]
    assert set(results) == {str(p) for p in paths}, proc.stdout + proc.stderr
    return proc.returncode, results


def describe(results: Result) -> str:
    return "\n".join(
        f"{Path(f).relative_to(REPO) if Path(f).is_relative_to(REPO) else f}:"
        f"{d['line']}:{d['column']}: {d['severity']}: {d['message']}"
        for f, diags in results.items()
        for d in diags
    )


def test_graphmem_cypher_files_lint_clean() -> None:
    files = sorted(CYPHER_DIR.rglob("*.cypher"))
    if not files:
        pytest.skip(f"no .cypher files under {CYPHER_DIR.relative_to(REPO)} yet")
    rc, results = run_lint(files)
    problems = describe(results)
    assert rc == 0 and not problems, f"Cypher lint found problems:\n{problems}"


def test_fixtures_lint_clean() -> None:
    """The positive case: realistic vector/full-text DDL and a vector search read."""
    assert len(FIXTURES) >= 3, FIXTURES
    rc, results = run_lint(FIXTURES)
    problems = describe(results)
    assert rc == 0 and not problems, f"fixtures should lint clean:\n{problems}"


BROKEN = {
    # name: (statement, substring expected in one error message)
    "syntax": ("MATCH (n RETURN n\n", "Invalid input"),
    "undefined_variable": ("MATCH (f:Fact)\nRETURN g.statement\n", "Variable `g` not defined"),
    "misspelt_procedure": (
        "CALL db.index.vector.queryNode('fact_embedding', 5, $q) YIELD node RETURN node\n",
        "Procedure db.index.vector.queryNode is not present",
    ),
    "wrong_yield_column": (
        "CALL db.index.fulltext.queryNodes('fact_statement', $q) YIELD node, scor RETURN node\n",
        "Unknown procedure output: `scor`",
    ),
    "wrong_argument_type": (
        "CALL db.index.vector.queryNodes('fact_embedding', 'five', $q) YIELD node RETURN node\n",
        "Type mismatch",
    ),
    "plugin_function": ("RETURN apoc.text.join($xs, ',') AS s\n", "apoc.text.join is not present"),
    "two_statements": ("RETURN 1 AS a;\nRETURN 2 AS b\n", "2 statements in one piece"),
    "trailing_semicolon": ("RETURN $x AS a;\n", "trailing ';'"),
}


@pytest.fixture(scope="module")
def broken_results(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, Result, Path]:
    d = tmp_path_factory.mktemp("broken_cypher")
    paths = []
    for name, (text, _) in BROKEN.items():
        p = d / f"{name}.cypher"
        p.write_text(text)
        paths.append(p)
    # a migration file whose second statement is broken: the line must point into the file
    mig = d / "migration.cypher"
    mig.write_text(
        "CREATE INDEX fact_id IF NOT EXISTS FOR (f:Fact) ON (f.id)\n"
        "// ---\n"
        "CREATE CONSTRAINT entity_key IF NOT EXISTS\n"
        "FOR (e:Entity) REQUIRE (e.group_id, e.key) IS UNIQUE\n"
        "// ---\n"
        "MATCH (x RETURN x\n"
    )
    paths.append(mig)
    rc, results = run_lint(paths)
    return rc, results, d


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_linter_catches_mistakes(name: str, broken_results: tuple[int, Result, Path]) -> None:
    rc, results, d = broken_results
    assert rc == 1
    diags = results[str(d / f"{name}.cypher")]
    expected = BROKEN[name][1]
    errors = [x for x in diags if x["severity"] == "error"]
    assert any(expected in x["message"] for x in errors), f"wanted {expected!r}, got {diags}"


def test_migration_statements_linted_separately(broken_results: tuple[int, Result, Path]) -> None:
    _, results, d = broken_results
    diags = results[str(d / "migration.cypher")]
    assert [(x["line"], x["statement"], x["severity"]) for x in diags] == [(6, 3, "error")], diags
