"""A long-lived agent with a scripted user who says what helped (issue 16): do usage feedback
and a forgetting curve help later recalls, and does a pinned rule stay in every context?

    python bench/usage_sim.py --out bench/results/usage_sim.json                  # SQLite
    python scripts/bolt_server.py start --dir /tmp/ubolt --bolt-port 0 --http-port 0
    . /tmp/ubolt/env.sh && python bench/usage_sim.py --store bolt --conversations 2 \
        --lme-blocks 0 --arms baseline feedback_decay random_decay --out /tmp/usage_bolt.json

**Users.** LoCoMo (``locomo10.json``): each conversation is one user; its sessions (dated weeks
apart) are its timeline. LongMemEval_S dev half (``lme_s_dev.json.xz``): a *block* of
``--lme-block`` consecutive questions is one user, whose timeline is the union of the blocks'
haystack sessions, by date. Turns are ``message`` episodes as in ``locomo.py`` / ``lme.py``
(rules extractor, hashed n-gram vectors), with the dia_id (LoCoMo) or session id (LME) in
metadata.

**Phases.** The timeline is cut at its middle session. The store holds the first half when the
*early* phase runs (recalls at the day after the middle session); questions whose evidence lies
wholly in the first half are split at random (seeded) between the early and the later phase;
the others are later questions. Then the second half arrives and the *later* phase runs (at the
day after the last session), and only it is scored. Every recall is ``recall(q, k=10,
as_of=<phase day>)``.

**The scripted user** (early phase only) marks as useful each returned episode that is evidence
(LoCoMo: an evidence turn; LME: a turn with ``has_answer`` in an answer session) and each
returned fact one of whose source episodes is, and as not useful the two best-ranked returned
items that are neither (``GraphMemory.feedback(..., at=<phase day>)``).

**Arms** (same data, same questions; ``cut`` = ``min_relative_score=0.25``, ``decay`` =
``decay_half_life=30`` days, floor 0.25 — chosen before any run, not tuned):
``baseline_nocut`` (the library default), ``baseline`` (cut), ``decay`` (cut+decay),
``feedback`` (cut+feedback), ``feedback_decay`` (cut+feedback+decay), ``random_decay`` (cut+decay,
feedback with the same per-question counts of useful / not useful as ``feedback_decay`` but on
episodes drawn at random from the user's store: the control), and ``pinned`` (baseline plus a
pinned rule written before the early phase and replaced by a new value when the second half
arrives: is the rule, in its current value, in every later context, and what does it cost?).

**Reported**, over later questions: evidence R@5 / R@10 (LoCoMo dialog ids, LME sessions; the
ranking protocol of ``locomo.py`` / ``lme.py``), context size per recall (items: facts +
episodes + pinned; characters: ``to_context()`` plus the returned episodes' text), and for
each arm against ``baseline``: the mean paired difference in R@10 with a 95% bootstrap CI over
questions, the Wilcoxon signed-rank p over questions and the sign of the mean difference per
user (LoCoMo conversation / LME block).
"""

from __future__ import annotations

import argparse
import json
import lzma
import os
import platform
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from locomo import DEFAULT_DATA as LOCOMO_DATA
from locomo import clean_evidence, conversation_items, make_embedder

from graphmem import GraphMemory, RecallResult, RetrievalConfig
from graphmem.embeddings.factory import Embedder

ROOT = Path(__file__).resolve().parent.parent
LME_DATA = ROOT.parent / "shared" / "bench" / "data" / "lme_s_dev.json.xz"
K = 10
CUT = {"min_relative_score": 0.25}
DECAY = {"decay_half_life": 30.0, "decay_floor": 0.25}
ARMS: dict[str, dict[str, Any]] = {
    "baseline_nocut": {"config": {}, "feedback": None},
    "baseline": {"config": CUT, "feedback": None},
    "decay": {"config": CUT | DECAY, "feedback": None},
    "feedback": {"config": CUT, "feedback": "scripted"},
    "feedback_decay": {"config": CUT | DECAY, "feedback": "scripted"},
    "random_decay": {"config": CUT | DECAY, "feedback": "random"},
    "pinned": {"config": CUT, "feedback": None, "pin": True},
}
PREDICATES = {"answer_style": "one"}


@dataclass
class Question:
    text: str
    evidence: list[str]  # keys: LoCoMo dia ids / LME session ids


@dataclass
class User:
    """One long-lived user: a timeline cut in two halves, and questions for each phase."""

    name: str
    first: list[dict[str, Any]]
    second: list[dict[str, Any]]
    early: list[Question]
    later: list[Question]
    early_day: datetime
    later_day: datetime
    key: str  # the metadata field that holds an episode's evidence key
    useful: Callable[[dict[str, Any], Question], bool] = field(repr=False)


# ----------------------------------------------------------------------------- users
def _split(
    questions: list[tuple[Question, int]], mid: int, rng: random.Random
) -> tuple[list[Question], list[Question]]:
    """Questions whose evidence ends by ``mid``: half early, half later (at random); the rest
    later."""
    early, later = [], []
    for q, last in questions:
        (early if last <= mid and rng.random() < 0.5 else later).append(q)
    return early, later


def locomo_users(path: Path, limit: int | None, rng: random.Random) -> list[User]:
    users = []
    for sample in json.loads(path.read_text())[:limit]:
        sid = sample["sample_id"]
        items = conversation_items(sample, True)
        sessions = sorted({int(it["source"].split("_")[1]) for it in items})
        mid = sessions[len(sessions) // 2 - 1]
        known = {it["metadata"]["dia_id"] for it in items}
        qs: list[tuple[Question, int]] = []
        for qa in sample["qa"]:
            ev = clean_evidence(qa.get("evidence") or [], known)
            if ev:
                last = max(int(d[1:].split(":")[0]) for d in ev)
                qs.append((Question(qa["question"], ev), last))
        early, later = _split(qs, mid, rng)
        day = {int(it["source"].split("_")[1]): it["reference_time"] for it in items}
        users.append(
            User(
                name=sid,
                first=[it for it in items if int(it["source"].split("_")[1]) <= mid],
                second=[it for it in items if int(it["source"].split("_")[1]) > mid],
                early=early,
                later=later,
                early_day=day[mid] + timedelta(days=1),
                later_day=day[sessions[-1]] + timedelta(days=1),
                key="dia_id",
                useful=lambda meta, q: meta.get("dia_id") in q.evidence,
            )
        )
    return users


def _lme_date(text: str) -> datetime:
    from lme import parse_date

    return parse_date(text)


def lme_users(path: Path, blocks: int, size: int, rng: random.Random) -> list[User]:
    if blocks <= 0:
        return []
    with lzma.open(path) as handle:
        data = json.loads(handle.read())
    qs = [
        q for q in data["questions"]
        if not q["question_id"].endswith("_abs") and q["answer_session_ids"]
    ]
    users = []
    for b in range(blocks):
        block = qs[b * size : (b + 1) * size]
        if not block:
            break
        dates: dict[str, datetime] = {}
        for q in block:
            for sid, d in zip(q["haystack_session_ids"], q["haystack_dates"], strict=True):
                dates.setdefault(sid, _lme_date(d))
        order = sorted(dates, key=lambda s: (dates[s], s))
        rank = {s: i for i, s in enumerate(order)}
        mid = len(order) // 2 - 1
        name = f"lme{b}"
        items = []
        for sid in order:
            for role, content, has_answer in data["sessions"][sid]:
                if content.strip():
                    items.append({
                        "content": content, "group_id": name, "kind": "message", "source": sid,
                        "reference_time": dates[sid],
                        "metadata": {"speaker": "user" if role == "u" else "assistant",
                                     "session_id": sid, "has_answer": int(has_answer)},
                    })
        tagged = [
            (Question(q["question"], list(q["answer_session_ids"])),
             max(rank[s] for s in q["answer_session_ids"]))
            for q in block
        ]
        early, later = _split(tagged, mid, rng)
        users.append(
            User(
                name=name,
                first=[it for it in items if rank[it["source"]] <= mid],
                second=[it for it in items if rank[it["source"]] > mid],
                early=early,
                later=later,
                early_day=dates[order[mid]] + timedelta(days=1),
                later_day=dates[order[-1]] + timedelta(days=1),
                key="session_id",
                useful=lambda meta, q: bool(meta.get("has_answer"))
                and meta.get("session_id") in q.evidence,
            )
        )
    return users


# ----------------------------------------------------------------------------- one run
def ranking(result: RecallResult, key: str) -> list[str]:
    """The protocol of locomo.py / lme.py: facts' source episodes in fact rank order, then
    RecallResult.episodes; evidence keys, deduplicated."""
    keys = [str(e.metadata.get(key)) for h in result.facts for e in h.episodes]
    keys += [str(e.metadata.get(key)) for e in result.episodes]
    return list(dict.fromkeys(k for k in keys if k != "None"))


def scripted(result: RecallResult, user: User, q: Question) -> list[tuple[str, bool]]:
    good: list[tuple[str, bool]] = []
    other: list[str] = []
    for hit in result.facts:
        if any(user.useful(e.metadata, q) for e in hit.episodes):
            good.append((hit.id, True))
        else:
            other.append(hit.id)
    for ep in result.episodes:
        if user.useful(ep.metadata, q):
            good.append((ep.id, True))
        else:
            other.append(ep.id)
    return good + [(i, False) for i in other[:2]]


def context_size(result: RecallResult) -> tuple[int, int]:
    items = len(result.facts) + len(result.episodes) + len(result.pinned)
    chars = len(result.to_context()) + sum(len(e.content or "") for e in result.episodes)
    return items, chars


def _r(ranked: Sequence[str], evidence: Sequence[str], k: int) -> float:
    return len(set(evidence) & set(ranked[:k])) / len(set(evidence))


def pin_rule(mem: GraphMemory, group: str, value: str, day: datetime) -> str:
    res = mem.add_fact(
        "user", "answer_style", value=value, statement=f"Standing rule: answer in {value}.",
        group_id=group, valid_from=day, source="user", pinned=True,
    )
    return res.episode_id


def run_arm(
    arm: str,
    user: User,
    open_memory: Callable[[str, str, dict[str, Any]], tuple[GraphMemory, str]],
    counts: dict[tuple[str, int], tuple[int, int]],
    rng: random.Random,
    replay: bool = True,
) -> list[dict[str, Any]]:
    spec = ARMS[arm]
    mem, group = open_memory(user.name, "early", spec["config"])
    calls: list[tuple[str, bool]] = []
    if spec.get("pin"):
        pin_rule(mem, group, "British English", user.early_day - timedelta(days=2))
    pool: list[str] = []
    if spec["feedback"] == "random":
        pool = mem.store.episode_ids_by_kind(group, "message")
    for i, q in enumerate(user.early):
        result = mem.recall(q.text, group_id=group, k=K, as_of=user.early_day)
        if spec["feedback"] == "scripted":
            given = scripted(result, user, q)
            counts[(user.name, i)] = (sum(u for _, u in given), sum(not u for _, u in given))
        elif spec["feedback"] == "random":
            good, bad = counts.get((user.name, i), (0, 0))
            given = [(rng.choice(pool), True) for _ in range(good)]
            given += [(rng.choice(pool), False) for _ in range(bad)]
        else:
            given = []
        for item, useful in given:
            mem.feedback(item, useful, group_id=group, source="sim", at=user.early_day)
            calls.append((item, useful))
    mem.close()
    mem, group = open_memory(user.name, "full", spec["config"])
    if spec.get("pin"):
        pin_rule(mem, group, "British English", user.early_day - timedelta(days=2))
        mem.add_fact(
            "user", "answer_style", value="American English", group_id=group, source="user",
            statement="Standing rule: answer in American English.", valid_from=user.later_day,
        )
    # The early phase's feedback, on the copy with both halves (Bolt: the same group, which
    # already holds it).
    for item, useful in calls if replay else []:
        mem.feedback(item, useful, group_id=group, source="sim", at=user.early_day)
    rows = []
    for q in user.later:
        t0 = time.perf_counter()
        result = mem.recall(q.text, group_id=group, k=K, as_of=user.later_day)
        ms = (time.perf_counter() - t0) * 1000
        ranked = ranking(result, user.key)
        items, chars = context_size(result)
        row = {
            "user": user.name, "R@5": _r(ranked, q.evidence, 5),
            "R@10": _r(ranked, q.evidence, 10), "items": items, "chars": chars, "ms": ms,
        }
        if spec.get("pin"):
            ctx = result.to_context()
            row["rule_current"] = float(
                ctx.startswith("Standing rules (pinned):")
                and "American English. (changed; was: Standing rule: answer in British" in ctx
            )
        rows.append(row)
    mem.close()
    return rows


# ----------------------------------------------------------------------------- stores
class SqliteStores:
    """Each user's two halves ingested once; each arm works on copies."""

    replay = True

    def __init__(self, users: list[User], embedder: Embedder, folder: Path) -> None:
        self.embedder, self.folder = embedder, folder
        self.base: dict[tuple[str, str], Path] = {}
        for user in users:
            for phase, items in (("early", user.first), ("full", user.first + user.second)):
                path = folder / f"{user.name}-{phase}.db"
                mem = GraphMemory(path, embedder=embedder, extractor="rules",
                                  predicates=PREDICATES)
                mem.add_episodes([{**it, "group_id": user.name} for it in items],
                                 on_invalid="skip")
                mem.close()
                self.base[(user.name, phase)] = path
        self.work = folder / "work"
        self.work.mkdir(exist_ok=True)

    def open(self, user: str, phase: str, config: dict[str, Any]) -> tuple[GraphMemory, str]:
        target = self.work / f"{user}-{phase}.db"
        for suffix in ("", "-wal", "-shm"):
            Path(str(target) + suffix).unlink(missing_ok=True)
        shutil.copy(self.base[(user, phase)], target)
        mem = GraphMemory(target, embedder=self.embedder, extractor="rules",
                          predicates=PREDICATES, retrieval=RetrievalConfig(**config))
        return mem, user


class BoltStores:
    """One Bolt store; each arm of each user gets its own group, which gets the first half
    before the early phase and the second half before the later one."""

    replay = False

    def __init__(self, uri: str, users: list[User], embedder: Embedder) -> None:
        from graphmem.store.neo4j import Neo4jStore

        self.uri, self.embedder = uri, embedder
        wipe = Neo4jStore(uri)
        wipe.connect()
        wipe.wipe_all_for_tests()
        wipe.close()
        self.items = {(u.name, "early"): u.first for u in users} | {
            (u.name, "full"): u.second for u in users
        }
        self.arm = ""

    def open(self, user: str, phase: str, config: dict[str, Any]) -> tuple[GraphMemory, str]:
        from graphmem.store.neo4j import Neo4jStore

        group = f"{user}-{self.arm}"
        mem = GraphMemory(Neo4jStore(self.uri), embedder=self.embedder, extractor="rules",
                          predicates=PREDICATES, retrieval=RetrievalConfig(**config))
        mem.add_episodes([{**it, "group_id": group} for it in self.items[(user, phase)]],
                         on_invalid="skip")
        return mem, group


# ----------------------------------------------------------------------------- statistics
def compare(rows: list[dict[str, Any]], base: list[dict[str, Any]], seed: int) -> dict[str, Any]:
    from scipy.stats import wilcoxon

    a = np.array([r["R@10"] for r in rows])
    b = np.array([r["R@10"] for r in base])
    diff = a - b
    rng = np.random.default_rng(seed)
    boots = [float(diff[rng.integers(0, len(diff), len(diff))].mean()) for _ in range(2000)]
    users: dict[str, list[float]] = {}
    for r, d in zip(rows, diff, strict=True):
        users.setdefault(r["user"], []).append(float(d))
    per_user = [float(np.mean(v)) for v in users.values()]
    p = float(wilcoxon(diff).pvalue) if np.any(diff != 0) else 1.0
    return {
        "mean_diff_R@10": round(float(diff.mean()), 4),
        "ci95": [round(float(np.percentile(boots, 2.5)), 4),
                 round(float(np.percentile(boots, 97.5)), 4)],
        "wilcoxon_p": round(p, 4),
        "questions_better_worse": [int((diff > 0).sum()), int((diff < 0).sum())],
        "users_better_worse": [sum(x > 0 for x in per_user), sum(x < 0 for x in per_user)],
    }


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out = {
        "n": len(rows),
        **{key: round(float(np.mean([r[key] for r in rows])), 4)
           for key in ("R@5", "R@10", "items", "chars")},
        "recall_ms_p50": round(float(np.median([r["ms"] for r in rows])), 2),
    }
    if rows and "rule_current" in rows[0]:
        out["rule_current_share"] = round(float(np.mean([r["rule_current"] for r in rows])), 4)
    return out


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--store", choices=["sqlite", "bolt"], default="sqlite")
    parser.add_argument("--conversations", type=int, default=None, help="LoCoMo: first N")
    parser.add_argument("--lme-blocks", type=int, default=6)
    parser.add_argument("--lme-block", type=int, default=10, help="questions per LME user")
    parser.add_argument("--arms", nargs="+", default=list(ARMS), choices=list(ARMS))
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument("--locomo-data", type=Path, default=LOCOMO_DATA)
    parser.add_argument("--lme-data", type=Path, default=LME_DATA)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)

    rng = random.Random(args.seed)
    datasets = {
        "locomo": locomo_users(args.locomo_data, args.conversations, rng),
        "lme_dev": lme_users(args.lme_data, args.lme_blocks, args.lme_block, rng),
    }
    embedder = make_embedder("hash")
    arms = ["baseline", *[a for a in args.arms if a != "baseline"]]
    if "random_decay" in arms and "feedback_decay" in arms:  # the control copies its counts
        arms.remove("random_decay")
        arms.append("random_decay")
    report: dict[str, Any] = {
        "command": "python " + " ".join([os.path.relpath(__file__, ROOT), *sys.argv[1:]]),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}",
        "store": args.store,
        "protocol": {"k": K, "arms": {a: ARMS[a] for a in arms}, "seed": args.seed,
                     "embedder": embedder.name, "extractor": "rules (no LLM)"},
        "datasets": {},
    }
    for name, users in datasets.items():
        if not users:
            continue
        t0 = time.perf_counter()
        folder = Path(tempfile.mkdtemp(prefix=f"usage-{name}-"))
        stores: Any
        if args.store == "sqlite":
            stores = SqliteStores(users, embedder, folder)
        else:
            uri = os.environ.get("NEO4J_URI") or os.environ.get("GRAPHMEM_TEST_BOLT_URI")
            if not uri:
                sys.exit("no Bolt server: set GRAPHMEM_TEST_BOLT_URI or NEO4J_URI")
            stores = BoltStores(uri, users, embedder)
        print(f"{name}: {len(users)} users ready in {time.perf_counter() - t0:.0f}s",
              file=sys.stderr, flush=True)
        counts: dict[tuple[str, int], tuple[int, int]] = {}
        results: dict[str, list[dict[str, Any]]] = {}
        for arm in arms:
            stores.arm = arm
            arm_rng = random.Random(args.seed + 1)
            rows: list[dict[str, Any]] = []
            for user in users:
                rows += run_arm(arm, user, stores.open, counts, arm_rng, stores.replay)
            results[arm] = rows
            print(f"{name} {arm:15} {summary(rows)}", file=sys.stderr, flush=True)
        feedback_given = [c for c in counts.values()]
        report["datasets"][name] = {
            "users": len(users),
            "early_questions": sum(len(u.early) for u in users),
            "later_questions": sum(len(u.later) for u in users),
            "turns": sum(len(u.first) + len(u.second) for u in users),
            "feedback_per_early_question": {
                "useful": round(float(np.mean([g for g, _ in feedback_given])), 2)
                if feedback_given else 0,
                "not_useful": round(float(np.mean([b for _, b in feedback_given])), 2)
                if feedback_given else 0,
            },
            "arms": {arm: summary(rows) for arm, rows in results.items()},
            "vs_baseline": {
                arm: compare(rows, results["baseline"], args.seed)
                for arm, rows in results.items() if arm != "baseline"
            },
            "seconds": round(time.perf_counter() - t0, 1),
        }
        shutil.rmtree(folder, ignore_errors=True)
    text = json.dumps(report, indent=2)
    if args.out:
        args.out.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
