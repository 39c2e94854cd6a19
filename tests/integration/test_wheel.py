"""The wheel ships the top-level cypher/ and prompts/ inside the package.

Builds the sdist from this checkout, the wheel from that sdist (so the sdist is checked too),
installs the wheel into a fresh venv and, from a temporary folder with no PYTHONPATH, loads every
Cypher query and every prompt from the installed copy: the repository's own graphmem and its
top-level folders must not be what answers.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]

# Run inside the venv: everything it prints comes from the installed wheel.
PROBE = """
import json, sys
import graphmem
from graphmem.extract.llm.prompts import load_prompt
from graphmem._resources import data_dir
from graphmem.store.neo4j import cypher as _cypher
from graphmem.store.neo4j.browser import browser_instructions, grass_path

queries = {name: _cypher.statements(name) for name in _cypher.available()}
prompts = sorted(
    p.name[: -len(".prompt")] for p in data_dir("prompts").iterdir() if p.name.endswith(".prompt")
)
idents = [load_prompt(name).ident for name in prompts]
print(json.dumps({
    "package": graphmem.__file__,
    "cypher": str(data_dir("cypher")),
    "prompts_dir": str(data_dir("prompts")),
    "queries": sorted(queries),
    "empty": [name for name, pieces in queries.items() if not pieces],
    "prompts": prompts,
    "idents": idents,
    "grass": grass_path(),
    "browser": "supersession_chain" in browser_instructions("neo4j://localhost:7687"),
    "path": sys.path,
}))
"""


def _run(
    args: list[str], cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=240, check=False
    )
    assert proc.returncode == 0, f"{args}\n{proc.stdout}\n{proc.stderr}"
    return proc


def _build(out: Path) -> Path:
    """sdist from the checkout, then the wheel from the unpacked sdist (offline: no isolation)."""
    pytest.importorskip("hatchling", reason="hatchling builds the wheel (pip install hatchling)")
    sdist_dir = out / "sdist"
    sdist_dir.mkdir()
    code = "import sys\nfrom hatchling.build import build_sdist\nprint(build_sdist(sys.argv[1]))"
    name = _run([sys.executable, "-c", code, str(sdist_dir)], cwd=REPO).stdout.strip()
    with tarfile.open(sdist_dir / name) as tar:
        members = tar.getnames()
        tar.extractall(out / "src", filter="data")
    top = name[: -len(".tar.gz")]
    assert f"{top}/cypher/facts/records.cypher" in members
    assert f"{top}/prompts/extract_facts.prompt" in members
    wheels = out / "wheels"
    _run([
        sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
        "-q", "-w", str(wheels), str(out / "src" / top),
    ])
    (wheel,) = wheels.glob("graphmem-*.whl")
    return wheel


def test_wheel_ships_every_query_and_prompt(tmp_path: Path) -> None:
    wheel = _build(tmp_path)
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
    shipped = sorted(n for n in names if n.startswith("graphmem/cypher/") and n.endswith(".cypher"))
    on_disk = sorted(
        "graphmem/" + p.relative_to(REPO).as_posix() for p in (REPO / "cypher").rglob("*.cypher")
    )
    assert shipped == on_disk and len(shipped) > 40
    assert "graphmem/cypher/browser/graphmem.grass" in names
    assert "graphmem/prompts/extract_facts.prompt" in names

    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    python = venv / "bin" / "python"
    purelib = Path(
        _run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"])
        .stdout.strip()
    )
    # pydantic, numpy, click from the test's own environment: a plain path entry, so that
    # environment's .pth files (an editable graphmem among them) are not processed.
    deps = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (purelib / "graphmem_test_deps.pth").write_text("\n".join(sorted(deps)) + "\n")
    _run([
        sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
        "--no-index", "-q", str(wheel),
    ])

    run_dir = tmp_path / "elsewhere"
    run_dir.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "PYTHONHOME"}}
    probe = _run([str(python), "-c", PROBE], cwd=run_dir, env=env)
    seen = json.loads(probe.stdout)

    installed = purelib / "graphmem"
    assert Path(seen["package"]).parent == installed, seen["path"]
    assert not any(Path(p).resolve() == REPO for p in seen["path"] if p)
    assert Path(seen["cypher"]) == installed / "cypher"
    assert Path(seen["prompts_dir"]) == installed / "prompts"
    assert Path(seen["grass"]) == installed / "cypher" / "browser" / "graphmem.grass"
    repo_queries = sorted(
        p.relative_to(REPO / "cypher").with_suffix("").as_posix()
        for p in (REPO / "cypher").rglob("*.cypher")
    )
    assert seen["queries"] == repo_queries and not seen["empty"]
    assert seen["prompts"] == sorted(p.stem for p in (REPO / "prompts").glob("*.prompt"))
    assert seen["prompts"] and all("@v" in ident for ident in seen["idents"])
    assert seen["browser"]
