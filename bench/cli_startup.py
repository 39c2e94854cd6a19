"""CPU cost of one `graphmem` command-line process (issue 14, item 10).

    python bench/cli_startup.py --baseline HEAD --out bench/results/cli_startup.json
    python bench/cli_startup.py --baseline HEAD --instructions   # + valgrind instruction counts
    python bench/cli_startup.py --baseline HEAD --venvs --out bench/results/cli_startup.json

``--venvs`` builds two default installs in the temporary folder, each a fresh venv holding only
the ``[project] dependencies`` of its tree's ``pyproject.toml`` (``before`` the baseline's,
``after`` the working tree's), and runs each tree under its own: the figure for a user who runs
``pip install graphmem`` before and after a change of the dependencies. Without it both trees
run under the interpreter that runs this script (then run it from a default install).

Each command runs ``--runs`` times as a fresh process (``python -m graphmem.cli ...``, what the
``graphmem`` console script runs) against a store made by the same code from ``examples/data``
(``graphmem init`` + ``graphmem ingest``); the figure is the process's user + system CPU time
(``os.wait4``), median and minimum over the runs, beside the wall time. Commands: ``recall
"where does Maya live?"``, ``facts --entity Maya``, ``--help``, and ``import graphmem`` alone
(what a library user or an integration pays before its first call).

Trees: ``after`` is a copy of this working tree's package, ``before`` is ``git archive
--baseline`` unpacked, both in a temporary folder without any ``__pycache__`` (nothing in the
working tree is touched). Both run with ``PYTHONPATH`` set to their tree, so the installed
package does not matter.

Modes:

- ``bytecode``: the modules' compiled bytecode is cached (in a private ``PYTHONPYCACHEPREFIX``,
  warmed by one run of each command first), as in an installed wheel or any install where
  Python may write ``__pycache__``. This is the figure for a default install.
- ``source``: ``PYTHONDONTWRITEBYTECODE=1``, so every graphmem module a command imports is
  compiled from source in every process (numpy, pydantic and the standard library keep their
  installed bytecode). This repository's CI/dev machine sets ``PYTHONDONTWRITEBYTECODE=1``, so an
  editable install there pays this on every command.

Reference points measured the same way: ``python -c pass``, ``import numpy``, and the floor of
any command that validates a pydantic model, searches vectors with numpy and parses arguments
with click (``import numpy, click, sqlite3`` and one pydantic model built and validated).

``--instructions`` also counts each command's instructions under valgrind (callgrind): the same
count on every run, so it compares trees on a loaded machine where CPU seconds vary by 30%.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import tomllib
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
COMMANDS: dict[str, list[str]] = {  # python's arguments
    "recall": ["-m", "graphmem.cli", "recall", "where does Maya live?"],
    "facts": ["-m", "graphmem.cli", "facts", "--entity", "Maya"],
    "help": ["-m", "graphmem.cli", "--help"],
    "import": ["-c", "import graphmem"],
}
LABELS = {
    "recall": 'graphmem recall "where does Maya live?"',
    "facts": "graphmem facts --entity Maya",
    "help": "graphmem --help",
    "import": "python -c 'import graphmem'",
}
FLOOR = (
    "import numpy, click, sqlite3\n"
    "from pydantic import BaseModel\n"
    "class M(BaseModel):\n"
    "    x: int = 0\n"
    "M(x=1)\n"
)
REFERENCES = {"python -c pass": "pass", "import numpy": "import numpy", "floor": FLOOR}
WATCHED = ("numpy", "pydantic", "click", "importlib.metadata", "xml.etree.ElementTree",
           "neo4j", "openai", "langchain_core", "tenacity", "networkx")


def _distributions() -> int:
    """How many packages the interpreter sees: pydantic reads every one's entry points when it
    builds its first model, so a big environment costs a command more CPU."""
    from importlib.metadata import distributions

    return sum(1 for _ in distributions())


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def base_dependencies(pyproject: str) -> list[str]:
    deps: list[str] = tomllib.loads(pyproject)["project"]["dependencies"]
    return deps


def make_venv(folder: Path, deps: Sequence[str]) -> Path:
    """A fresh venv holding ``deps`` (and what they need) and nothing else; its python."""
    subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
    python = folder / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", *deps],
        check=True,
    )
    return python


def distributions_of(python: Path) -> int:
    code = "from importlib.metadata import distributions as d; print(sum(1 for _ in d()))"
    out = subprocess.run([str(python), "-c", code], check=True, capture_output=True, text=True)
    return int(out.stdout)


def unpack(ref: str, into: Path) -> Path:
    """``git archive ref graphmem`` unpacked into ``into``; returns the tree root."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", ref, "graphmem", "examples"],
        check=True, capture_output=True,
    ).stdout
    into.mkdir(parents=True, exist_ok=True)
    tar_path = into / "tree.tar"
    tar_path.write_bytes(archive)
    with tarfile.open(tar_path) as tar:
        tar.extractall(into, filter="data")
    tar_path.unlink()
    return into


def environ(tree: Path, store: Path, mode: str, cache: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(tree)
    env["GRAPHMEM_STORE"] = f"sqlite:///{store}"
    env["PYTHONHASHSEED"] = "0"
    if mode == "source":
        # The installed packages' own __pycache__ is used; the tree (a fresh copy) has none.
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env.pop("PYTHONPYCACHEPREFIX", None)
    else:
        env["PYTHONPYCACHEPREFIX"] = str(cache)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def run_once(argv: Sequence[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """CPU seconds (user + system) and wall seconds of one process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        list(argv), env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({status})")
    return usage.ru_utime + usage.ru_stime, wall


def measure(argv: Sequence[str], env: dict[str, str], cwd: Path, runs: int) -> dict[str, Any]:
    cpu: list[float] = []
    wall: list[float] = []
    for _ in range(runs):
        c, w = run_once(argv, env, cwd)
        cpu.append(c)
        wall.append(w)
    return {
        "cpu_s_median": round(statistics.median(cpu), 3),
        "cpu_s_min": round(min(cpu), 3),
        "wall_s_median": round(statistics.median(wall), 3),
        "runs": runs,
    }


def instructions(argv: Sequence[str], env: dict[str, str], cwd: Path) -> int | None:
    if shutil.which("valgrind") is None:
        return None
    out = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *argv],
        env=env, cwd=cwd, capture_output=True, text=True,
    ).stderr
    found = re.search(r"Collected : (\d+)", out)
    return int(found.group(1)) if found else None


def modules(
    python: Path, args: Sequence[str], env: dict[str, str], cwd: Path
) -> dict[str, Any]:
    """What a command imports: graphmem modules, and which of the heavy packages."""
    if args[0] == "-c":
        run = f"exec({args[1]!r})\n"
    else:
        run = f"sys.argv = ['graphmem', *{list(args[2:])!r}]\n" + (
            "runpy.run_module('graphmem.cli', run_name='__main__')\n"
        )
    code = (
        "import runpy, sys, json, atexit\n"
        "def report():\n"
        "    sys.__stderr__.write('MODULES ' + json.dumps(sorted(sys.modules)) + '\\n')\n"
        "atexit.register(report)\n" + run
    )
    err = subprocess.run(
        [str(python), "-c", code], env=env, cwd=cwd, capture_output=True, text=True
    ).stderr
    line = next(x for x in err.splitlines() if x.startswith("MODULES "))
    loaded = json.loads(line[len("MODULES "):])
    own = [m for m in loaded if m == "graphmem" or m.startswith("graphmem.")]
    return {
        "graphmem_modules": len(own),
        "all_modules": len(loaded),
        "heavy": [m for m in WATCHED if m in loaded],
    }


def make_store(python: Path, folder: Path, env: dict[str, str]) -> None:
    for args in (["init"], ["ingest", str(ROOT / "examples" / "data")]):
        subprocess.run(
            [str(python), "-m", "graphmem.cli", "-q", *args], env=env, cwd=folder,
            check=True, stdout=subprocess.DEVNULL,
        )


def bench_tree(
    name: str, tree: Path, folder: Path, runs: int, count_instructions: bool, python: Path
) -> dict[str, Any]:
    store = folder / f"{name}.db"
    warm_cache = folder / f"pyc-{name}"
    result: dict[str, Any] = {
        "tree": str(tree), "python": str(python),
        "distributions": distributions_of(python), "modes": {},
    }
    make_store(python, folder, environ(tree, store, "bytecode", warm_cache))
    for mode in ("bytecode", "source"):
        env = environ(tree, store, mode, warm_cache)
        entry: dict[str, Any] = {"load_avg_before": _load()}
        for command, args in COMMANDS.items():
            argv = [str(python), *args]
            run_once(argv, env, folder)  # writes the bytecode cache in bytecode mode
            entry[command] = measure(argv, env, folder, runs)
            if count_instructions:
                entry[command]["instructions_millions"] = round(
                    (instructions(argv, env, folder) or 0) / 1e6
                )
            if mode == "bytecode":
                entry[command]["imports"] = modules(python, args, env, folder)
            print(f"{name} {mode} {command}: {entry[command]}", file=sys.stderr, flush=True)
        entry["load_avg_after"] = _load()
        result["modes"][mode] = entry
    return result


def references(
    folder: Path, runs: int, count_instructions: bool, python: Path
) -> dict[str, Any]:
    env = environ(folder, folder / "none.db", "bytecode", folder / "pyc-reference")
    out: dict[str, Any] = {}
    for label, code in REFERENCES.items():
        argv = [str(python), "-c", code]
        run_once(argv, env, folder)
        out[label] = measure(argv, env, folder, runs)
        if count_instructions:
            count = instructions(argv, env, folder) or 0
            out[label]["instructions_millions"] = round(count / 1e6)
    return out


def markdown(report: dict[str, Any]) -> str:
    before, after = report["trees"]["before"]["modes"], report["trees"]["after"]["modes"]
    lines = [
        "| command | CPU s before (median / min) | after | instructions before → after "
        "| no bytecode cache: CPU s before → after (instructions) |",
        "|---|---|---|---|---|",
    ]
    for command in COMMANDS:
        b, a = before["bytecode"][command], after["bytecode"][command]
        bs, as_ = before["source"][command], after["source"][command]
        counted = "instructions_millions" in a
        ins = "–"
        if counted:
            ins = f"{b['instructions_millions']:,}M → {a['instructions_millions']:,}M"
        source = f"{bs['cpu_s_median']:.2f} → {as_['cpu_s_median']:.2f}"
        if counted:
            source += f" ({bs['instructions_millions']:,}M → {as_['instructions_millions']:,}M)"
        lines.append(
            f"| `{LABELS[command]}` | {b['cpu_s_median']:.2f} / "
            f"{b['cpu_s_min']:.2f} | {a['cpu_s_median']:.2f} / {a['cpu_s_min']:.2f} | {ins} | "
            f"{source} |"
        )
    refs = report["references"]
    lines.append("")
    lines.append(
        f"Distributions installed: before {report['trees']['before']['distributions']}, "
        f"after {report['trees']['after']['distributions']}."
    )
    lines.append(
        "Reference points (bytecode cached): "
        + ", ".join(
            f"{label} {r['cpu_s_median']:.2f} s"
            + (f" ({r['instructions_millions']:,}M instructions)"
               if "instructions_millions" in r else "")
            for label, r in refs.items()
        )
        + "."
    )
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--baseline", default="HEAD", help="git ref of the 'before' tree")
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--instructions", action="store_true",
                        help="also count instructions under valgrind (deterministic)")
    parser.add_argument("--venvs", action="store_true",
                        help="run each tree in a fresh venv of its own base dependencies")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="graphmem-startup-"))
    try:
        baseline = unpack(args.baseline, folder / "before")
        pythons = {"before": Path(sys.executable), "after": Path(sys.executable)}
        if args.venvs:
            old = subprocess.run(
                ["git", "-C", str(ROOT), "show", f"{args.baseline}:pyproject.toml"],
                check=True, capture_output=True, text=True,
            ).stdout
            new = (ROOT / "pyproject.toml").read_text()
            for name, text in (("before", old), ("after", new)):
                pythons[name] = make_venv(folder / f"venv-{name}", base_dependencies(text))
        commit = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", args.baseline],
            check=True, capture_output=True, text=True,
        ).stdout.strip()
        report: dict[str, Any] = {
            "command": "python " + " ".join([os.path.relpath(__file__, ROOT), *sys.argv[1:]]),
            "date": datetime.now().strftime("%Y-%m-%d"),
            "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python "
            f"{platform.python_version()}, load average at start {_load()}",
            "python": (
                "each tree in a fresh venv of its pyproject's base dependencies"
                if args.venvs else f"{sys.executable} ({_distributions()} distributions)"
            ),
            "before": f"git {args.baseline} ({commit})",
            "after": "working tree (a copy of graphmem/ at the time of the run)",
            "references": references(
                folder, args.runs, args.instructions, pythons["after"]
            ),
            "trees": {},
        }
        after = folder / "after"
        shutil.copytree(
            ROOT / "graphmem", after / "graphmem",
            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
        )
        for data in ("cypher", "prompts"):  # top-level since issue 15 (read from the checkout)
            if (ROOT / data).is_dir():
                shutil.copytree(ROOT / data, after / data)
        for name, tree in (("before", baseline), ("after", after)):
            report["trees"][name] = bench_tree(
                name, tree, folder, args.runs, args.instructions, pythons[name]
            )
        report["load_avg_end"] = _load()
        report["markdown"] = markdown(report)
        print(report["markdown"])
        if args.out:
            args.out.write_text(json.dumps(report, indent=2) + "\n")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
