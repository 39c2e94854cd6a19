"""Precision of the rules extractor on the hand-labelled sample, now and at a git revision.

    python bench/rules_precision.py --baseline ee1fd49 --out bench/results/rules_precision.json

Data: ``tests/fixtures/rules_precision/turns.json`` (361 turns of BEAM 100K, LoCoMo and the
LongMemEval development half, in strata; its ``about`` field says how they were drawn and
judged). Each run re-reads every turn and counts, per stratum and corpus, the facts emitted, the
judged ones and the correct ones. ``--baseline REV`` does the same with the extractor of git
revision ``REV`` (its ``graphmem/`` exported to a temporary folder, imported in a subprocess), in
the same run. The fact-bearing and statement strata were drawn from what the current extractor
reads, so only the ``random`` stratum compares yields without bias; precision compares anywhere.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "rules_precision" / "turns.json"


def _key(data: dict[str, Any]) -> str:
    target = data["object"] if data.get("object") is not None else data.get("value")
    return f"{data['subject']} | {data['predicate']} | {target} | {data['kind']}"


def measure(fixture: Path) -> dict[str, Any]:
    """Emitted, judged and correct facts per stratum, corpus and overall."""
    from graphmem._models import EpisodeRecord
    from graphmem._predicates import PredicateRegistry
    from graphmem.extract._base import ExtractionContext
    from graphmem.extract.rules import RulesExtractor

    extractor = RulesExtractor()
    turns = json.loads(fixture.read_text(encoding="utf-8"))["turns"]
    tally: dict[str, dict[str, int]] = {}
    for turn in turns:
        ref = datetime.fromisoformat(turn["reference_time"])
        episode = EpisodeRecord(
            id=turn["id"], group_id="precision", source=turn["corpus"], kind="message",
            content=turn["content"], reference_time=ref, ingested_at=ref,
            content_hash="0" * 64, status="pending",
        )
        context = ExtractionContext(speaker=turn["speaker"], predicates=PredicateRegistry())
        facts = extractor.extract(episode, context).facts
        for group in ("all", f"stratum:{turn['stratum']}", f"corpus:{turn['corpus']}"):
            row = tally.setdefault(group, {"turns": 0, "facts": 0, "judged": 0, "correct": 0})
            row["turns"] += 1
            for fact in facts:
                label = turn["labels"].get(_key(fact.model_dump(mode="json")))
                row["facts"] += 1
                row["judged"] += label is not None
                row["correct"] += bool(label)
    for row in tally.values():
        row_any: dict[str, Any] = row
        row_any["precision"] = round(row["correct"] / row["judged"], 3) if row["judged"] else None
    return tally


def baseline(rev: str, fixture: Path) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="rules-precision-") as tmp:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "graphmem"],
                                 check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        target = Path(tmp) / "result.json"
        subprocess.run([sys.executable, __file__, "--measure-only", str(target),
                        "--fixture", str(fixture)],
                       check=True, env={**os.environ, "PYTHONPATH": tmp}, cwd=tmp)
        result: dict[str, Any] = json.loads(target.read_text(encoding="utf-8"))
        return result


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--fixture", type=Path, default=FIXTURE)
    parser.add_argument("--baseline", metavar="REV", help="also measure git revision REV")
    parser.add_argument("--measure-only", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    if args.measure_only is not None:
        args.measure_only.write_text(json.dumps(measure(args.fixture)), encoding="utf-8")
        return
    sys.path.insert(0, str(ROOT))
    report: dict[str, Any] = {
        "command": "python " + " ".join([os.path.relpath(__file__, ROOT), *sys.argv[1:]]),
        "fixture": str(args.fixture.relative_to(ROOT)),
        "current": measure(args.fixture),
    }
    if args.baseline:
        report["baseline_rev"] = args.baseline
        report["baseline"] = baseline(args.baseline, args.fixture)
    for name in ("baseline", "current"):
        for group, row in report.get(name, {}).items():
            print(f"{name:>8} {group:<34} turns {row['turns']:>4}  facts {row['facts']:>4}  "
                  f"judged {row['judged']:>4}  correct {row['correct']:>4}  "
                  f"precision {row['precision']}")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
