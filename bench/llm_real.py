"""A real model, end to end: the ``llm`` extractor over a local GGUF model on this CPU.

    LLAMA_PY=/path/to/llama-venv/bin/python          # has llama-cpp-python[server]
    python bench/llm_real.py --llama-python "$LLAMA_PY" --out bench/results/llm_real.json
    python bench/llm_real.py --base-url http://127.0.0.1:8080/v1 --model-id qwen1.5b ...

What it does (issue 13, item 4). It starts ``scripts/llm_server.py serve`` (llama-cpp-python
behind an ASGI wrapper that turns OpenAI's ``json_schema`` response format into a grammar, and
records every call) over Qwen2.5-Coder-1.5B-Instruct Q4_K_M (``scripts/llm_server.py fetch``),
then ingests, one ``add_episode`` at a time, with ``GraphMemory(..., extractor="llm",
settings=Settings(llm_model=..., llm_base_url=..., llm_timeout=..., llm_concurrency=1))``:

1. ``examples/data/`` (what ``examples/demo.sh`` ingests): the 23 chat/transcript messages
   through the model; the 48 robot JSON records through the ``structured`` extractor as
   ``auto`` does (``--json-sample N`` also sends the first N records through the model);
2. about 50 LoCoMo turns: the first ``--sessions`` sessions of conversation ``--conversation``
   (``../shared/bench/data/locomo10.json``, read as ``bench/locomo.py`` reads it).

The same episodes are ingested with the offline extractors (``rules``; ``structured`` for JSON)
as the baseline. Reported per run: episodes extracted / failed, facts per episode, chat calls
per episode, prompt and completion tokens, seconds per episode. Quality: on the examples, the
demo's questions (``where does Maya live?`` now and as of 2024-02-01, …) with the expected word
in the top fact; on LoCoMo, every question whose evidence turns all lie in the ingested turns is
asked with ``recall(k=20)`` and scored as ``bench/locomo.py`` does (R@5/10/20 of the evidence
turns, facts' provenance first, then ``RecallResult.episodes``), plus ``facts_only`` (the facts'
provenance turns alone: what the extraction contributes) and ``answer_in_facts@10`` (the share
of the gold answer's content words found in the top-10 facts' statements). BM25 over the same
turns is given for reference.

The server's raw calls go to ``--record`` (JSONL); ``tests/fixtures/llm_real/`` holds the
subset that the offline replay test (``tests/unit/test_llm_replay_real.py``) plays back.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "scripts"))

import llm_server  # noqa: E402
import numpy as np  # noqa: E402
from locomo import (  # noqa: E402
    BM25,
    DEFAULT_DATA,
    conversation_items,
    dialog_ids,
    questions,
    score,
    summarize,
)

from graphmem import GraphMemory, HashEmbedder  # noqa: E402
from graphmem._config import Settings  # noqa: E402
from graphmem.sources.files import load_episodes  # noqa: E402

EXAMPLES = ROOT / "examples" / "data"
K = 20

# The demo's questions, and the word the top fact must hold (examples/demo.sh).
EXAMPLE_CHECKS: list[dict[str, Any]] = [
    {"q": "where does Maya live?", "expect": "Porto"},
    {"q": "where does Maya live?", "as_of": "2024-02-01", "expect": "Lisbon"},
    {"q": "where does Maya work?", "expect": "Tidewater"},
    {"q": "what does Maya prefer to drink?", "expect": "tea"},
    {"q": "where does Leo live?", "expect": "Porto"},
    {"q": "where does Leo work?", "expect": "Atlas"},
    {"q": "which version is the gripper firmware on?", "expect": "2.2"},
    {"q": "what fingertips does Maya like?", "expect": "silicone"},
]

_STOP = frozenset(
    """a an the and or of to in on at for with by from is are was were be been it its his her
    their they he she them that this as but not no so do did does has have had i you we my your
    our about into up out over after before than then there""".split()  # noqa: SIM905
)
_WORD = re.compile(r"\w+")


def content_words(text: str) -> set[str]:
    return {w for w in _WORD.findall(str(text).lower()) if w not in _STOP}


def graphmem_state() -> dict[str, Any]:
    """The code measured: commit, whether graphmem/ had local changes, the prompt's version."""
    import subprocess

    from graphmem.extract.llm.prompts import load_prompt

    def git(*cmd: str) -> str:
        try:
            out = subprocess.run(["git", *cmd], cwd=ROOT, capture_output=True, text=True)
        except OSError:
            return ""
        return out.stdout.strip()

    prompt = load_prompt("extract_facts")
    return {
        "commit": git("rev-parse", "--short", "HEAD"),
        "graphmem_changed_locally": bool(git("status", "--short", "graphmem")),
        "prompt": f"{prompt.name} v{getattr(prompt, 'version', '?')}",
    }


def load_avg() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


# ----------------------------------------------------------------------------- corpora
def example_items(json_sample: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(episodes for the llm run with their extractor, the same for the offline run)."""
    episodes = load_episodes([EXAMPLES])
    llm_run, offline_run = [], []
    json_seen = 0
    for item in episodes:
        if item.get("kind") == "json":
            json_seen += 1
            llm_run.append({**item, "_extractor": "llm" if json_seen <= json_sample else "auto"})
            offline_run.append({**item, "_extractor": "structured"})
        else:
            llm_run.append({**item, "_extractor": "llm"})
            offline_run.append({**item, "_extractor": "rules"})
    return llm_run, offline_run


def locomo_items(
    data: Path, conversation: str, sessions: int
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    samples = json.loads(data.read_text())
    sample = next((s for s in samples if s["sample_id"] == conversation), None)
    if sample is None:
        raise SystemExit(f"no conversation {conversation!r} in {data}")
    wanted = {f"session_{n}" for n in range(1, sessions + 1)}
    items = [it for it in conversation_items(sample, True) if it["source"] in wanted]
    return sample, items


# ----------------------------------------------------------------------------- ingest
def ingest(
    mem: GraphMemory,
    items: Sequence[dict[str, Any]],
    label: str,
    progress: Path | None,
    deadline: float | None = None,
    start: int = 0,
) -> list[dict[str, Any]]:
    """``start``: how many of the run's episodes an earlier (resumed) run already ingested."""
    rows: list[dict[str, Any]] = []
    total = start + len(items)
    for i, raw in enumerate(items, start):
        if deadline is not None and time.monotonic() > deadline:
            print(f"[{label}] deadline: stopped after {i} episodes", file=sys.stderr)
            break
        item = dict(raw)
        extractor = item.pop("_extractor", None)
        label_extractor = extractor
        if extractor == "llm":  # the memory's own (maybe capped) llm extractor
            extractor = None
        t0 = time.perf_counter()
        result = mem.add_episode(
            item["content"],
            group_id=item.get("group_id") or "default",
            source=item.get("source"),
            kind=item.get("kind") or "message",
            reference_time=item.get("reference_time"),
            metadata=item.get("metadata"),
            extractor=extractor,
        )
        seconds = time.perf_counter() - t0
        row = {
            "i": i,
            "extractor": label_extractor or str(mem.default_extractor),
            "kind": item.get("kind") or "message",
            "group_id": item.get("group_id") or "default",
            "source": item.get("source"),
            "speaker": (item.get("metadata") or {}).get("speaker"),
            "dia_id": (item.get("metadata") or {}).get("dia_id"),
            "content": item["content"],
            "episode_id": result.episode_id,
            "status": result.status,
            "error": result.error,
            "facts_added": result.facts_added,
            "facts_duplicate": result.facts_duplicate,
            "superseded": len(result.superseded),
            "contradictions": len(result.contradictions),
            "llm_calls": result.llm_calls,
            "llm_repairs": getattr(result, "llm_repairs", 0),
            "llm_retries": getattr(result, "llm_retries", 0),
            "llm_failed_calls": getattr(result, "llm_failed_calls", 0),
            "prompt_tokens": result.prompt_tokens,
            "completion_tokens": result.completion_tokens,
            "seconds": round(seconds, 3),
            "warnings": list(result.warnings),
        }
        rows.append(row)
        line = (
            f"[{label} {i + 1}/{total}] {row['status']:<9} facts+{row['facts_added']} "
            f"calls {row['llm_calls']} tok {row['prompt_tokens']}/{row['completion_tokens']} "
            f"{seconds:.1f}s  {item['content'][:60]!r}"
            + (f"  ERROR {row['error']}" if row["error"] else "")
        )
        print(line, file=sys.stderr, flush=True)
        if progress is not None:
            with progress.open("a") as f:
                f.write(json.dumps({"run": label, **row}, default=str) + "\n")
    return rows


def attach_facts(mem: GraphMemory, rows: list[dict[str, Any]]) -> None:
    """Each episode's facts (statement, predicate, whether still current) from the export."""
    facts: dict[str, dict[str, Any]] = {}
    by_episode: dict[str, list[str]] = {}
    groups = {r["group_id"] for r in rows}
    for group in groups:
        for rec in mem.export(group_id=group):
            if rec.get("type") == "fact":
                facts[rec["id"]] = {
                    "statement": rec["statement"],
                    "predicate": rec["predicate"],
                    "value": rec.get("value"),
                    "current": rec.get("expired_at") is None and rec.get("ended_at") is None,
                    "decided_by": rec.get("decided_by"),
                }
            elif rec.get("type") == "provenance":
                by_episode.setdefault(rec["episode_id"], []).append(rec["fact_id"])
    for row in rows:
        row["facts"] = [facts[f] for f in by_episode.get(row["episode_id"], []) if f in facts]


def summarize_run(rows: Sequence[dict[str, Any]], *, llm_only: bool) -> dict[str, Any]:
    chosen = rows
    if llm_only:
        chosen = [r for r in rows if r["llm_calls"] > 0 or r["extractor"] == "llm"]
    if not chosen:
        return {"episodes": 0}
    n = len(chosen)
    ok = [r for r in chosen if r["status"] == "extracted"]
    facts = [len(r["facts"]) for r in chosen]
    out: dict[str, Any] = {
        "episodes": n,
        "extracted": len(ok),
        "failed": n - len(ok),
        "extracted_pct": round(100.0 * len(ok) / n, 1),
        "episodes_with_facts": sum(1 for f in facts if f),
        "facts_per_episode": round(sum(facts) / n, 2),
        "facts_added_per_episode": round(sum(r["facts_added"] for r in chosen) / n, 2),
        "llm_calls_per_episode": round(sum(r["llm_calls"] for r in chosen) / n, 2),
        "repair_calls": sum(r["llm_repairs"] for r in chosen),
        "retries": sum(r["llm_retries"] for r in chosen),
        "prompt_tokens_mean": round(sum(r["prompt_tokens"] for r in chosen) / n, 1),
        "completion_tokens_mean": round(sum(r["completion_tokens"] for r in chosen) / n, 1),
        "prompt_tokens_total": sum(r["prompt_tokens"] for r in chosen),
        "completion_tokens_total": sum(r["completion_tokens"] for r in chosen),
        "seconds_per_episode_mean": round(statistics.fmean(r["seconds"] for r in chosen), 4),
        "seconds_per_episode_p50": round(statistics.median(r["seconds"] for r in chosen), 4),
        "seconds_per_episode_max": round(max(r["seconds"] for r in chosen), 4),
        "seconds_total": round(sum(r["seconds"] for r in chosen), 1),
        "superseded_links": sum(r["superseded"] for r in chosen),
        "contradiction_links": sum(r["contradictions"] for r in chosen),
        "errors": sorted({str(r["error"])[:300] for r in chosen if r["error"]}),
    }
    return out


# ----------------------------------------------------------------------------- quality
def example_checks(mem: GraphMemory) -> list[dict[str, Any]]:
    out = []
    for check in EXAMPLE_CHECKS:
        as_of = (
            datetime.fromisoformat(check["as_of"]).replace(tzinfo=UTC) if "as_of" in check else None
        )
        result = mem.recall(check["q"], k=3, as_of=as_of)
        statements = [h.statement for h in result.facts]
        top = statements[0] if statements else None
        out.append(
            {
                **check,
                "top_facts": statements,
                "top1_ok": bool(top and check["expect"].lower() in top.lower()),
                "top3_ok": any(check["expect"].lower() in s.lower() for s in statements),
            }
        )
    return out


def current_facts(mem: GraphMemory, entity: str) -> list[str]:
    try:
        return [f.statement for f in mem.facts(entity=entity)]
    except Exception as exc:  # an entity the run never created
        return [f"({type(exc).__name__}: {exc})"]


def locomo_quality(
    mem: GraphMemory, sample: dict[str, Any], items: Sequence[dict[str, Any]]
) -> dict[str, Any]:
    group = sample["sample_id"]
    dia_of = {
        rec["id"]: rec["metadata"]["dia_id"]
        for rec in mem.export(group_id=group)
        if rec.get("type") == "episode" and "dia_id" in (rec.get("metadata") or {})
    }
    known = set(dia_of.values())
    answers = {qa["question"]: qa.get("answer") for qa in sample["qa"]}
    every = {it["metadata"]["dia_id"] for it in conversation_items(sample, True)}
    qas = [qa for qa in questions(sample, every) if set(qa["ev"]) <= known]
    rows, fact_rows, per_question = [], [], []
    answer_cover: list[float] = []
    for qa in qas:
        result = mem.recall(qa["q"], group_id=group, k=K)
        ranked = dialog_ids(result, dia_of)
        from_facts = list(
            dict.fromkeys(dia_of[e] for h in result.facts for e in h.episode_ids if e in dia_of)
        )
        metrics = score(ranked, qa["ev"])
        rows.append((qa["cat"], metrics))
        fact_rows.append((qa["cat"], score(from_facts, qa["ev"])))
        answer = answers.get(qa["q"])
        cover = None
        if answer is not None and qa["cat"] != 5:
            want = content_words(str(answer))
            got: set[str] = set()
            for hit in result.facts[:10]:
                got |= content_words(hit.statement)
            if want:
                cover = len(want & got) / len(want)
                answer_cover.append(cover)
        per_question.append(
            {
                "q": qa["q"],
                "cat": qa["cat"],
                "evidence": qa["ev"],
                "answer": answer,
                "R@10": round(metrics["R@10"], 3),
                "facts_only_R@10": round(score(from_facts, qa["ev"])["R@10"], 3),
                "answer_in_facts@10": None if cover is None else round(cover, 3),
                "top_facts": [h.statement for h in result.facts[:3]],
            }
        )
    return {
        "questions": len(qas),
        "protocol": summarize(rows) if rows else {},
        "facts_only": summarize(fact_rows) if fact_rows else {},
        "answer_in_facts@10": round(float(np.mean(answer_cover)), 4) if answer_cover else None,
        "answer_in_facts_n": len(answer_cover),
        "per_question": per_question,
    }


def bm25_on(sample: dict[str, Any], items: Sequence[dict[str, Any]]) -> dict[str, Any]:
    dias = [it["metadata"]["dia_id"] for it in items]
    texts = [f"{it['metadata']['speaker']}: {it['content']}" for it in items]
    bm25 = BM25(texts)
    every = {it["metadata"]["dia_id"] for it in conversation_items(sample, True)}
    rows = []
    for qa in questions(sample, every):
        if not set(qa["ev"]) <= set(dias):
            continue
        s = bm25.scores(qa["q"])
        ranking = [dias[int(j)] for j in np.argsort(-s, kind="stable")[:50]]
        rows.append((qa["cat"], score(ranking, qa["ev"])))
    return summarize(rows) if rows else {}


# ----------------------------------------------------------------------------- replay fixtures
_PROMPT_FIELD = re.compile(r"^(Speaker|Episode time): (.*)$", re.MULTILINE)


def prompt_episode(request: dict[str, Any]) -> dict[str, Any]:
    """Speaker, episode time and episode text of a recorded extraction request."""
    user = next(m["content"] for m in request["messages"] if m["role"] == "user")
    fields = dict(_PROMPT_FIELD.findall(user))
    return {
        "speaker": fields.get("Speaker", "").strip(),
        "reference_time": fields.get("Episode time", "").strip(),
        "content": user.rpartition("\nEpisode:\n")[2],
    }


def make_fixture(
    calls_path: Path, progress_path: Path | None, first: int, last: int, about: str
) -> dict[str, Any]:
    """Episodes ``first``..``last`` (0-based, in recorded order) with every recorded answer.

    Replaying a contiguous run from the first episode of a store reproduces the prompts' known
    facts (and so the ``F1``… aliases the answers cite), since graphmem builds them
    deterministically from what the earlier answers wrote.
    """
    rows = [json.loads(line) for line in calls_path.read_text().splitlines() if line.strip()]
    meta: dict[str, dict[str, Any]] = {}
    if progress_path is not None and progress_path.exists():
        for line in progress_path.read_text().splitlines():
            row = json.loads(line)
            meta.setdefault(row["content"], row)
    episodes: list[dict[str, Any]] = []
    for row in rows:
        request = row.get("request") or {}
        if not request.get("messages"):
            continue
        info = prompt_episode(request)
        repair = len(request["messages"]) > 2
        if not repair:
            known = meta.get(info["content"], {})
            episodes.append(
                {
                    **info,
                    "source": known.get("source"),
                    "kind": known.get("kind", "message"),
                    "dia_id": known.get("dia_id"),
                    "calls": [],
                }
            )
        response = row.get("response") or {}
        choice = (response.get("choices") or [{}])[0] if isinstance(response, dict) else {}
        episodes[-1]["calls"].append(
            {
                "status": row.get("status"),
                "response_format": (request.get("response_format") or {}).get("type"),
                "content": (choice.get("message") or {}).get("content"),
                "finish_reason": choice.get("finish_reason"),
                "usage": response.get("usage") if isinstance(response, dict) else None,
                "seconds": row.get("seconds"),
                "error": response.get("error") if isinstance(response, dict) else response,
            }
        )
    chosen = episodes[first : last + 1]
    return {"about": about, "recorded_from": calls_path.name, "episodes": chosen}


# ----------------------------------------------------------------------------- replay
def recorded_answers(paths: Sequence[Path]) -> dict[tuple[str, int], str | None]:
    """(episode text, attempt) -> the answer a recorded run's server gave (first one wins)."""
    answers: dict[tuple[str, int], str | None] = {}
    for path in paths:
        for line in path.read_text().splitlines():
            row = json.loads(line) if line.strip() else {}
            request = row.get("request") or {}
            if not request.get("messages") or row.get("status") != 200:
                continue
            attempt = 0 if len(request["messages"]) <= 2 else 1
            choice = (row["response"].get("choices") or [{}])[0]
            content = (choice.get("message") or {}).get("content")
            answers.setdefault((prompt_episode(request)["content"], attempt), content)
    return answers


def replay_answers(args: argparse.Namespace) -> dict[str, Any]:
    """The recorded answers played back to the current code (the test suite's fake server):
    what graphmem now makes of the same model output, without the model. An episode with no
    recorded answer gets an empty one and is counted in ``replay_missing``."""
    from tests.fakes.openai_server import FakeOpenAIServer

    answers = recorded_answers(args.replay)
    missing: list[str] = []

    def respond(body: dict[str, Any]) -> str:
        episode = prompt_episode(body)["content"]
        answer = answers.get((episode, 0 if len(body["messages"]) <= 2 else 1))
        if answer is None:
            missing.append(episode[:60])
            return '{"entities": [], "facts": []}'
        return answer

    with FakeOpenAIServer() as server:
        server.default = respond
        report = run_all(args, server.base_url, "replay")
    report["replay_missing"] = len(missing)
    return report


# ----------------------------------------------------------------------------- runs
def _memory(
    args: argparse.Namespace, work: Path, name: str, base_url: str | None, model_id: str | None
) -> GraphMemory:
    llm = base_url is not None
    settings = Settings(
        llm_model=model_id if llm else None,
        llm_base_url=base_url,
        llm_timeout=args.timeout,
        llm_max_retries=args.max_retries,
        llm_concurrency=1,
        llm_max_completion_tokens=args.max_completion_tokens or 4096,
    )
    extractor = "llm" if llm else "rules"
    return GraphMemory(
        work / f"{name}.db",
        embedder=HashEmbedder(),
        settings=settings,
        extractor=extractor,
    )


def evaluate(
    mem: GraphMemory,
    name: str,
    rows: list[dict[str, Any]],
    sample: dict[str, Any],
    turns: Sequence[dict[str, Any]],
    *,
    llm: bool,
) -> dict[str, Any]:
    attach_facts(mem, rows)
    run: dict[str, Any] = {"summary": summarize_run(rows, llm_only=llm)}
    if name.startswith("examples"):
        run["text_only"] = summarize_run([r for r in rows if r["kind"] != "json"], llm_only=False)
        run["json_records"] = summarize_run(
            [r for r in rows if r["kind"] == "json"], llm_only=False
        )
        run["checks"] = example_checks(mem)
        run["current_facts"] = {e: current_facts(mem, e) for e in ("Maya", "Leo")}
    else:
        run["quality"] = locomo_quality(mem, sample, turns)
    run["episodes"] = rows
    return run


def run_all(args: argparse.Namespace, base_url: str | None, model_id: str | None) -> dict[str, Any]:
    """Model runs first (stopping at --deadline), then the offline runs on the same episodes."""
    work = args.work or Path(tempfile.mkdtemp(prefix="llm-real-"))
    work.mkdir(parents=True, exist_ok=True)
    ex_llm, ex_offline = example_items(args.json_sample)
    sample, turns = locomo_items(args.data, args.conversation, args.sessions)
    if args.turns:
        turns = turns[: args.turns]
    deadline = time.monotonic() + args.deadline * 60 if args.deadline else None
    report: dict[str, Any] = {"runs": {}}
    parts = [("examples", ex_llm, ex_offline), ("locomo", turns, turns)]
    if args.only:
        parts = [p for p in parts if f"{p[0]}_llm" in args.only]
    for kind, llm_items, offline_items in parts:
        done = len(llm_items)
        if not args.offline_only:
            name = f"{kind}_llm"
            load_before = load_avg()
            t0 = time.perf_counter()
            with _memory(args, work, name, base_url, model_id) as mem:
                if args.rescore or args.resume:
                    rows = [r for r in read_progress(args.progress) if r.get("run") == name]
                    for row in rows:
                        row.pop("run", None)
                if args.resume:  # the store in --work holds these: ingest the rest into it
                    rows += ingest(
                        mem, llm_items[len(rows) :], name, args.progress, deadline, len(rows)
                    )
                elif not args.rescore:
                    rows = ingest(mem, llm_items, name, args.progress, deadline)
                done = len(rows)
                run = evaluate(mem, name, rows, sample, turns[:done], llm=True)
            if not args.rescore:
                run["load_average"] = {"before": load_before, "after": load_avg()}
                run["wall_s"] = round(time.perf_counter() - t0, 1)
            run["ingested"] = f"{done} of {len(llm_items)} episodes"
            report["runs"][name] = run
        name = f"{kind}_offline" if kind == "examples" else "locomo_rules"
        (work / f"{name}.db").unlink(missing_ok=True)
        with _memory(args, work, name, None, None) as mem:
            rows = ingest(mem, offline_items[:done], name, None)
            report["runs"][name] = evaluate(mem, name, rows, sample, turns[:done], llm=False)
        if kind == "locomo":
            report["bm25_same_turns"] = bm25_on(sample, turns[:done])
        if args.out:  # write as we go: a long run keeps what it finished
            partial = redact_locomo(json.loads(json.dumps(report, default=str)))
            args.out.write_text(json.dumps(partial, indent=2) + "\n")
    return report


def redact_locomo(report: dict[str, Any]) -> dict[str, Any]:
    """No LoCoMo text in a result file (CC BY-NC 4.0, not redistributed): ids and numbers only."""
    for name, run in report.get("runs", {}).items():
        if not name.startswith("locomo"):
            continue
        for row in run.get("episodes", []):
            row.pop("content", None)
            row["warnings"] = len(row.get("warnings") or [])  # they quote the turns
            facts = row.pop("facts", [])
            row["fact_predicates"] = [f["predicate"] for f in facts]
        quality = run.get("quality") or {}
        for item in quality.get("per_question", []):
            for key in ("q", "answer", "top_facts"):
                item.pop(key, None)
    return report


def read_progress(path: Path | None) -> list[dict[str, Any]]:
    if path is None or not path.exists():
        raise SystemExit("--rescore needs --progress FILE from the model run")
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--base-url", help="use a running server instead of starting one")
    parser.add_argument("--model-id", help="with --base-url: the model name to send")
    parser.add_argument("--model", choices=list(llm_server.MODELS), default="qwen1.5b")
    parser.add_argument("--model-file", type=Path, help="the .gguf (default: fetch it)")
    parser.add_argument(
        "--llama-python",
        default=os.environ.get("GRAPHMEM_LLAMA_PYTHON") or sys.executable,
        help="an interpreter with llama-cpp-python[server] ($GRAPHMEM_LLAMA_PYTHON)",
    )
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--n-ctx", type=int, default=4096)
    parser.add_argument(
        "--backend", choices=["auto", "xllamacpp", "llama-cpp-python"], default="auto"
    )
    parser.add_argument(
        "--no-rewrite",
        action="store_true",
        help="pass json_schema through to the backend unchanged",
    )
    parser.add_argument(
        "--json-object-only",
        action="store_true",
        help="the server refuses json_schema (400): graphmem's fallback path",
    )
    parser.add_argument("--timeout", type=float, default=600.0, help="llm_timeout (s)")
    parser.add_argument(
        "--max-completion-tokens",
        type=int,
        default=0,
        help="llm_max_completion_tokens (2x for the repair after a cut-off answer); 0: 4096",
    )
    parser.add_argument("--max-retries", type=int, default=1, help="llm_max_retries")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--conversation", default="conv-30")
    parser.add_argument("--sessions", type=int, default=3)
    parser.add_argument("--turns", type=int, default=0, help="cap the LoCoMo turns (0: all)")
    parser.add_argument(
        "--json-sample",
        type=int,
        default=0,
        help="also send the first N robot JSON records through the model",
    )
    parser.add_argument("--only", nargs="+", choices=["examples_llm", "locomo_llm"])
    parser.add_argument("--offline-only", action="store_true")
    parser.add_argument(
        "--deadline",
        type=float,
        default=0.0,
        help="minutes per model run; stop ingesting then and score what is in",
    )
    parser.add_argument(
        "--rescore",
        action="store_true",
        help="no model: score the stores in --work from --progress (a run that was stopped)",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="continue a stopped model run: --work's store and --progress's rows are kept, "
        "only the episodes after them are sent (use a --turns above the first run's)",
    )
    parser.add_argument(
        "--replay",
        type=Path,
        nargs="+",
        metavar="CALLS",
        help="no model: play these --record files' answers back to the current code",
    )
    parser.add_argument("--record", type=Path, help="server calls (JSONL)")
    parser.add_argument("--progress", type=Path, help="one JSON line per model episode")
    parser.add_argument("--work", type=Path, help="keep the stores here (default: a temp dir)")
    parser.add_argument(
        "--make-fixture",
        type=Path,
        metavar="OUT",
        help="write a replay fixture from --record (and --progress), then exit",
    )
    parser.add_argument("--episodes", default="0:", help="with --make-fixture: FIRST:LAST")
    parser.add_argument("--about", default="", help="with --make-fixture: what it shows")
    parser.add_argument("--out", type=Path, help="the result (LoCoMo text removed)")
    parser.add_argument("--full-out", type=Path, help="the result with LoCoMo text (keep local)")
    args = parser.parse_args(argv)
    if args.make_fixture:
        if args.record is None:
            raise SystemExit("--make-fixture needs --record CALLS.jsonl")
        lo, _, hi = args.episodes.partition(":")
        fixture = make_fixture(
            args.record, args.progress, int(lo or 0), int(hi) if hi else 10**9, args.about
        )
        args.make_fixture.parent.mkdir(parents=True, exist_ok=True)
        args.make_fixture.write_text(json.dumps(fixture, indent=1, ensure_ascii=False) + "\n")
        print(f"{args.make_fixture}: {len(fixture['episodes'])} episodes")
        return

    header: dict[str, Any] = {
        "graphmem": graphmem_state(),
        "command": "python " + " ".join([os.path.relpath(__file__, ROOT), *sys.argv[1:]]),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, load average at start {load_avg()}",
        "data": {
            "examples": "examples/data (23 messages, 48 robot JSON records)",
            "locomo": f"{args.data.name} (LoCoMo, CC BY-NC 4.0): {args.conversation}, "
            f"sessions 1-{args.sessions}",
        },
        "protocol": {
            "extractor": "GraphMemory(extractor='llm', settings=Settings(llm_model, llm_base_url, "
            f"llm_timeout={args.timeout:g}, llm_max_retries={args.max_retries}, "
            "llm_concurrency=1)); one add_episode at a time; max_completion_tokens "
            + (str(args.max_completion_tokens) if args.max_completion_tokens else "4096 (default)"),
            "baseline": "rules (text), structured (JSON records)",
            "embedder": "hash",
            "recall": f"recall(question, k={K}); scored as bench/locomo.py",
        },
    }
    if args.offline_only or args.rescore:
        header["server"] = (
            "rescored from --progress and the stores in --work" if args.rescore else None
        )
        report = run_all(
            args, "http://rescore.invalid/v1" if args.rescore else None, args.model_id or "qwen1.5b"
        )
    elif args.replay:
        header["server"] = {"replay": [p.name for p in args.replay]}
        report = replay_answers(args)
    elif args.base_url:
        header["server"] = {"base_url": args.base_url, "model_id": args.model_id}
        report = run_all(args, args.base_url, args.model_id or "local")
    else:
        spec = llm_server.MODELS[args.model]
        model_file = args.model_file or llm_server.fetch_model(args.model)
        header["server"] = {
            "runtime": f"scripts/llm_server.py serve --backend {args.backend} (xllamacpp "
            "2026.10.11549 = llama.cpp's C++ server, or llama-cpp-python[server] 0.3.36); "
            + (
                "json_schema refused with 400 (--json-object-only); "
                if args.json_object_only
                else "json_schema -> json_object+schema grammar; "
            )
            + "temperature 0 when the request sends none",
            "model": spec.description,
            "model_sha256": spec.sha256,
            "n_threads": args.threads,
            "n_ctx": args.n_ctx,
        }
        with llm_server.start_server(
            model_file,
            python=args.llama_python,
            n_threads=args.threads,
            n_ctx=args.n_ctx,
            record=args.record,
            rewrite=not args.no_rewrite,
            json_object_only=args.json_object_only,
            backend=args.backend,
        ) as server:
            header["server"]["model_id"] = server.model_id
            print(f"server ready at {server.base_url} ({server.model_id})", file=sys.stderr)
            report = run_all(args, server.base_url, server.model_id)
    report = {**header, **report}
    brief = {
        name: {
            k: run["summary"].get(k)
            for k in (
                "episodes",
                "extracted_pct",
                "facts_per_episode",
                "llm_calls_per_episode",
                "prompt_tokens_mean",
                "completion_tokens_mean",
                "seconds_per_episode_mean",
            )
        }
        for name, run in report["runs"].items()
    }
    for name, run in report["runs"].items():
        if "quality" in run:
            q = run["quality"]
            brief[name]["R@10"] = q["protocol"].get("all_1-5", {}).get("R@10")
            brief[name]["facts_only_R@10"] = q["facts_only"].get("all_1-5", {}).get("R@10")
            brief[name]["answer_in_facts@10"] = q["answer_in_facts@10"]
        if "checks" in run:
            brief[name]["checks_top1"] = sum(c["top1_ok"] for c in run["checks"])
    report["brief"] = brief
    print(json.dumps(brief, indent=2))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        if args.full_out:  # everything, LoCoMo text included: keep it local
            args.full_out.write_text(json.dumps(report, indent=2, default=str) + "\n")
        report = redact_locomo(report)
        args.out.write_text(json.dumps(report, indent=2, default=str) + "\n")


if __name__ == "__main__":
    main()
