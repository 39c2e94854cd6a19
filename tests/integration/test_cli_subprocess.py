"""The installed ``graphmem`` console script, in a subprocess, on the bundled ``examples/``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "data"


def _script() -> str:
    beside = Path(sys.executable).parent / "graphmem"
    if beside.exists():
        return str(beside)
    found = shutil.which("graphmem")
    if found is None:
        pytest.skip("the graphmem console script is not installed (pip install -e .)")
    return found


def _run(store: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHMEM_")}
    env["GRAPHMEM_STORE"] = f"sqlite:///{store}"
    return subprocess.run(
        [_script(), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120,
    )


def test_console_script_on_the_examples(tmp_path: Path) -> None:
    store = tmp_path / "memory.db"
    init = _run(store, "init", cwd=tmp_path)
    assert init.returncode == 0, init.stderr
    assert str(store) in init.stdout

    ingest = _run(store, "ingest", str(EXAMPLES), cwd=tmp_path)
    assert ingest.returncode == 0, ingest.stderr
    assert "episodes from 5 file(s)" in ingest.stdout
    assert "LLM: 0 calls" in ingest.stdout
    again = _run(store, "ingest", "--json", str(EXAMPLES), cwd=tmp_path)
    summary = json.loads(again.stdout)
    assert summary["episodes_new"] == 0 and summary["facts_added"] == 0

    facts = _run(store, "facts", cwd=tmp_path)
    assert facts.returncode == 0, facts.stderr
    current = facts.stdout
    for statement in ("Maya lives in Porto.", "Maya works at Tidewater Labs.",
                      "Maya prefers tea.", "Leo lives in Porto.", "Ticket GR-12 is done.",
                      "The gripper firmware is on version 2.2."):
        assert statement in current, statement
    for stale in ("Maya lives in Lisbon.", "Maya works at Atlas Robotics.",
                  "Maya prefers coffee.", "Leo lives in Braga.", "version 2.3"):
        assert stale not in current, stale

    history = _run(store, "history", "Maya", "--predicate", "lives_in", cwd=tmp_path)
    assert history.returncode == 0, history.stderr
    text = history.stdout
    assert text.index("Maya lives in Lisbon.") < text.index("Maya lives in Porto.")
    assert "superseded" in text and "01-maya-lisbon.json" in text

    prefs = json.loads(_run(store, "history", "Maya", "--predicate", "prefers", "--json",
                            cwd=tmp_path).stdout)
    coffee = next(f for f in prefs if f["object"] == "coffee")
    assert coffee["expired_at"] is not None  # corrected, not just ended

    recall = _run(store, "recall", "where does Maya live?", "--context", cwd=tmp_path)
    assert "Maya lives in Porto." in recall.stdout and "replaced: Maya lives in Lisbon." in (
        recall.stdout
    )
    past = json.loads(_run(store, "recall", "where does Maya live?", "--as-of", "2024-02-01",
                           "--json", cwd=tmp_path).stdout)
    assert "Maya lives in Lisbon." in [f["statement"] for f in past["facts"]]

    mugs = json.loads(_run(store, "recall", "red mug blue mug grasp", "-k", "50",
                           "--filter", "success=true", "--filter", "params.force_peak<13",
                           "--json", cwd=tmp_path).stdout)
    assert mugs["facts"] and all(f["subject"].startswith("episode ") for f in mugs["facts"])

    bad_date = _run(store, "recall", "x", "--as-of", "last week", cwd=tmp_path)
    assert bad_date.returncode == 2 and "expected ISO-8601" in bad_date.stderr
    assert "Traceback" not in bad_date.stderr

    graphml = _run(store, "export", "--format", "graphml", "-o", "m.graphml", cwd=tmp_path)
    assert graphml.returncode == 0 and (tmp_path / "m.graphml").stat().st_size > 0
    stats = json.loads(_run(store, "stats", "--json", cwd=tmp_path).stdout)
    assert stats["supersedes_links"] >= 4 and stats["episodes_failed"] == 0


def test_demo_script_runs_the_main_job(tmp_path: Path) -> None:
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("no bash")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHMEM_")}
    env["PATH"] = os.pathsep.join([str(Path(_script()).parent), env.get("PATH", "")])
    done = subprocess.run([bash, str(ROOT / "examples" / "demo.sh")], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "Maya lives in Porto." in done.stdout
    assert "replaced: Maya lives in Lisbon." in done.stdout
    assert (tmp_path / "graphmem-demo.db").exists()
    again = subprocess.run([bash, str(ROOT / "examples" / "demo.sh")], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=300)
    assert again.returncode == 0 and ": 0 new, " in again.stdout
