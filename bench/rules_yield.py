"""How many facts the offline rules extractor reads from open conversation: facts per turn.

    python bench/rules_yield.py --baseline ee1fd49 --out bench/results/rules_yield.json

Data: BEAM 100K (``../shared/bench/data/beam_100k.json.xz``, Tavakoli et al. 2025, CC BY-SA 4.0;
20 long user-assistant conversations, 5,094 turns) and LoCoMo (``locomo10.json``, CC BY-NC 4.0;
10 conversations between two people, 5,882 turns) as a second, different kind of chat.

Protocol: every turn is one ``message`` episode read by ``RulesExtractor`` exactly as ingest
calls it (no ``context.previous``: the rules extractor does not ask for context). The speaker is
what ingest derives from the role: ``user`` for BEAM user turns, ``assistant`` for BEAM
assistant turns, the speaker's name on LoCoMo. Reported: facts per turn overall and per speaker
role, the facts by predicate and kind, and the share of turns with at least one fact.

``--baseline REV`` runs the same count with the extractor of git revision ``REV`` (its
``graphmem/`` exported to a temporary folder and imported in a subprocess), on the same turns in
the same run, so the before/after figures come from one invocation.
"""

from __future__ import annotations

import argparse
import json
import lzma
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "bench" / "data"
# BEAM gives no dates for most batches: a fixed start, one day per batch, a minute per turn.
BEAM_START = datetime(2024, 1, 1, tzinfo=UTC)


def beam_turns(path: Path) -> Iterator[tuple[str, str, str, datetime]]:
    """(conversation id, role, content, reference time) for every BEAM message, in order."""
    with lzma.open(path, "rt", encoding="utf-8") as handle:
        data = json.load(handle)
    for conv_id, conv in data["conversations"].items():
        n = 0
        for batch_no, batch in enumerate(conv["chat"]):
            for turn in batch["turns"]:
                for message in turn:
                    when = BEAM_START + timedelta(days=batch_no, minutes=n)
                    n += 1
                    yield conv_id, str(message["role"]), str(message["content"]), when


def locomo_turns(path: Path) -> Iterator[tuple[str, str, str, datetime]]:
    """(conversation id, speaker, text, session time) for every LoCoMo dialog turn."""
    for sample in json.loads(path.read_text(encoding="utf-8")):
        conv = sample["conversation"]
        n = 1
        while f"session_{n}" in conv:
            when = datetime.strptime(conv[f"session_{n}_date_time"].strip(),
                                     "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)
            for turn in conv[f"session_{n}"]:
                text = str(turn.get("text", "")).strip()
                if text:
                    yield sample["sample_id"], str(turn["speaker"]), text, when
            n += 1


def count(turns: Sequence[tuple[str, str, str, datetime]], *, roles: bool) -> dict[str, Any]:
    """Run the extractor (of whatever ``graphmem`` is importable) over the turns."""
    from graphmem._models import EpisodeRecord
    from graphmem._predicates import PredicateRegistry
    from graphmem.extract._base import ExtractionContext
    from graphmem.extract.rules import RulesExtractor

    extractor = RulesExtractor()
    registry = PredicateRegistry()
    per_role: dict[str, Counter[str]] = {}
    predicates: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    t0 = time.perf_counter()
    for index, (conv, who, content, when) in enumerate(turns):
        role = who if roles else "speaker"
        episode = EpisodeRecord(
            id=f"{conv}:{index}", group_id=conv, source=conv, kind="message", content=content,
            reference_time=when, ingested_at=when, content_hash="0" * 64, status="pending",
        )
        facts = extractor.extract(episode, ExtractionContext(speaker=who, predicates=registry))
        tally = per_role.setdefault(role, Counter())
        tally["turns"] += 1
        tally["facts"] += len(facts.facts)
        tally["turns_with_facts"] += bool(facts.facts)
        for fact in facts.facts:
            predicates[fact.predicate] += 1
            kinds[fact.kind] += 1
    seconds = time.perf_counter() - t0
    total = Counter[str]()
    for tally in per_role.values():
        total.update(tally)

    def rates(tally: Counter[str]) -> dict[str, Any]:
        turns = max(tally["turns"], 1)
        return {"turns": tally["turns"], "facts": tally["facts"],
                "facts_per_turn": round(tally["facts"] / turns, 4),
                "turns_with_facts": round(tally["turns_with_facts"] / turns, 4)}

    return {
        "all": rates(total),
        "by_role": {role: rates(t) for role, t in sorted(per_role.items())} if roles else {},
        "by_predicate": dict(predicates.most_common()),
        "by_kind": dict(kinds.most_common()),
        "ms_per_turn": round(1000 * seconds / max(total["turns"], 1), 3),
    }


def measure(beam: Path, locomo: Path | None) -> dict[str, Any]:
    out = {"beam_100k": count(list(beam_turns(beam)), roles=True)}
    if locomo is not None and locomo.exists():
        out["locomo10"] = count(list(locomo_turns(locomo)), roles=False)
    return out


def baseline(rev: str, beam: Path, locomo: Path | None) -> dict[str, Any]:
    """The same measure with the ``graphmem/`` of git revision ``rev``, in a subprocess."""
    with tempfile.TemporaryDirectory(prefix="rules-yield-") as tmp:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "graphmem"],
                                 check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        target = Path(tmp) / "result.json"
        cmd = [sys.executable, __file__, "--measure-only", str(target), "--beam", str(beam)]
        if locomo is not None:
            cmd += ["--locomo", str(locomo)]
        subprocess.run(cmd, check=True, env={**os.environ, "PYTHONPATH": tmp})
        result: dict[str, Any] = json.loads(target.read_text(encoding="utf-8"))
        return result


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--beam", type=Path, default=DATA / "beam_100k.json.xz")
    parser.add_argument("--locomo", type=Path, default=DATA / "locomo10.json")
    parser.add_argument("--baseline", metavar="REV", help="also measure git revision REV")
    parser.add_argument("--measure-only", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)

    if args.measure_only is not None:
        args.measure_only.write_text(json.dumps(measure(args.beam, args.locomo)),
                                     encoding="utf-8")
        return
    sys.path.insert(0, str(ROOT))
    report: dict[str, Any] = {
        "command": "python " + " ".join([os.path.relpath(__file__, ROOT), *sys.argv[1:]]),
        "data": {"beam_100k": f"{args.beam.name} (BEAM 100K, CC BY-SA 4.0)",
                 "locomo10": f"{args.locomo.name} (LoCoMo, CC BY-NC 4.0)"},
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}",
        "protocol": "every turn one message episode; RulesExtractor as ingest calls it (no "
        "context.previous); speaker = role (BEAM) or name (LoCoMo)",
        "current": measure(args.beam, args.locomo),
    }
    if args.baseline:
        report["baseline_rev"] = args.baseline
        report["baseline"] = baseline(args.baseline, args.beam, args.locomo)
    for name in ("baseline", "current"):
        if name not in report:
            continue
        for corpus, result in report[name].items():
            roles = " ".join(f"{role} {r['facts_per_turn']:.3f}"
                             for role, r in result["by_role"].items())
            print(f"{name:>8} {corpus:<10} facts {result['all']['facts']:>5}  "
                  f"per turn {result['all']['facts_per_turn']:.3f}  {roles}  "
                  f"({result['ms_per_turn']} ms/turn)")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
