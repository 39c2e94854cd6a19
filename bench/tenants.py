"""Per-group cost: does a group's recall cost follow the group or the store? (issue 11)

Two figures, one command each:

    # (a) tenant ratio: a group of 500 turns alone in its store vs beside 39 others
    python bench/tenants.py --store sqlite --out bench/results/tenants_sqlite.json
    python scripts/bolt_server.py start --dir /tmp/boltT --bolt-port 0 --http-port 0
    . /tmp/boltT/env.sh
    python bench/tenants.py --store bolt --out bench/results/tenants_bolt.json
    python scripts/bolt_server.py stop --dir /tmp/boltT --kill

    # (b) a LongMemEval-sized SQLite store: ~230k turns in 468 groups, one question per group
    python bench/tenants.py --lme-scale --out bench/results/lme_scale_sqlite.json

Data (deterministic from ``--seed``): synthetic conversations. Each group is a chat between
"user" and "assistant": sessions of 10-24 turns, a date per session (``reference_time``),
``source`` = the session id, ``metadata`` = ``{"speaker", "session_id"}``, one ``message``
episode per turn, 20-120 words a turn in sentences. Words: ~45% English function words, the
rest content words drawn from one Zipf distribution shared by every group (a few hundred
common English words first, then 40,000 pronounceable made-up words), a third of them from the
session's own topic words; about one user turn in twelve also states a personal fact ("I moved
to Ostavel.", "My sister Brinna works at Kelmor.") that the ``rules`` extractor turns into
facts and entities. Groups share the vocabulary, so a query word's postings span every group,
as in real tenants' text. Questions (LongMemEval-like, 8-15 words): a lead ("Can you remind me
what we said about") and 2-4 less common content words of one of the group's user turns.

(a) ``--store sqlite|bolt``: the target group (group 0, the same turns in both stores) alone
in one store; in the other, the same group among ``--groups`` groups of the same size, their
sessions ingested round-robin (rowids interleaved, like tenants writing at the same time).
Both stores are open at once; ``--rounds`` rounds each ask the same ``--queries`` questions
(``recall(question, group_id=target, k=20)``, query embedding included) after a warm-up,
each question of both stores in turn, alternating which store goes first (so each store's
recall always follows one on the other store). Reported: each round's p50/p95 per store and
its crowded/alone p50 ratio, the median over rounds, and a per-stage breakdown (time inside
each store method, summed per recall; the vector searches run in a thread beside the full-text
ones, so stages overlap). SQLite: two files in ``--workdir``. Bolt: the server in
``NEO4J_URI`` (or ``GRAPHMEM_TEST_BOLT_URI``; credentials from ``NEO4J_USERNAME`` /
``NEO4J_PASSWORD`` or the ``GRAPHMEM_TEST_BOLT_*`` variables of ``scripts/bolt_server.py``),
two databases created on it over ArcadeDB's HTTP API (``GRAPHMEM_TEST_BOLT_HTTP``) or with
``CREATE DATABASE`` (Neo4j Enterprise); WIPED first. Where a second database cannot be made,
one database is used: alone measured first, then the other groups ingested and the crowded
rounds measured (``"mode": "sequential"``; the stage breakdown is then of the crowded store
twice), unless ``--crowded-uri`` names a second server (same credentials; Neo4j Community
holds one database) for the crowded store: then both are open at once and the rounds alternate.

(b) ``--lme-scale``: 468 groups of 450-530 turns (about 230k), built once in ``--workdir``
(reused unless ``--rebuild`` or the SQLite migrations changed) by bulk ``add_episodes`` per
group, in a child process (ingest time, peak RSS); then, in a fresh child process, one
question per group in group order (``recall(k=20)``: each group's first recall, as
LongMemEval asks one question per haystack) and a second pass over the first ``--queries``
groups (warm); p50/p95 per question, peak RSS.

The default embedder (hashed n-grams, 384 dimensions) and the ``rules`` extractor; no LLM.
The load average before and after each phase is recorded: the machine is shared.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
import os
import platform
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import STAGES, instrument, percentiles, rss_mb

ROOT = Path(__file__).resolve().parent.parent
K = 20


# ------------------------------------------------------------------------------ synthetic chat
def _words(text: str) -> list[str]:
    return text.split()


FUNCTION_WORDS = _words(
    "i the to and a of it you that in is my for was this but so with on just have be me what "
    "are not we can do at like about if your they there all as or one would get when been out "
    "had some up from how will more an which also them then than our very because did really"
)
COMMON_WORDS = _words(
    "think know time good want going well people need help great yeah thanks sure work day "
    "make right thing things lot back last week year new first long little different "
    "remember recommend trying looking getting made used find feel try start idea ideas tips "
    "plan plans home family friend friends kids weekend morning night trip place places food "
    "book books music movie show game class project job team meeting money car house room "
    "water health sleep exercise workout coffee dinner lunch recipe garden dog cat phone "
    "computer website online store price list number hours minutes months days today "
    "tomorrow yesterday since before after around maybe probably actually definitely usually "
    "enjoy love favorite interesting important best better easy hard small big old young "
    "local city country school college course study learn learning read reading write "
    "writing watch watching play playing cook cooking travel travelling visit visited buy "
    "bought sell pay paid save saving budget schedule routine goal goals habit progress "
    "question questions answer information advice suggestion suggestions option options "
    "experience problem issue issues solution process support service care doctor "
    "appointment event party birthday gift wedding vacation hotel flight beach mountain "
    "park hiking running walking yoga bike camera photo photos picture art painting guitar "
    "piano song songs concert theater museum history science language spanish french "
    "japanese practice lesson lessons teacher student students office boss company business "
    "customer client market product products marketing social media account email message"
)
ONSETS = _words("b c d f g h j k l m n p r s t v w z br cl st tr sh ch gr pl dr fl")
VOWELS = _words("a e i o u ai ea ou ie")
CODAS = ["", "", "n", "r", "s", "t", "l", "m", "nd", "st", "rk"]
LEADS = (
    "Can you remind me what we said about",
    "What did I tell you about",
    "How many times did I mention",
    "When did we talk about",
    "What was the thing you recommended for",
    "Remind me of my plans with",
    "What did you suggest about",
    "Where did I say I found",
)
FACT_TEMPLATES = (
    "I moved to {place} last year.",
    "My sister {name} works at {org}.",
    "I work at {org} now.",
    "I really enjoy {hobby}.",
    "My friend {name} lives in {place}.",
    "I have a dog named {name}.",
)
BASE_DAY = datetime(2023, 1, 1, 9, 0, tzinfo=UTC)


def _env(*names: str) -> str | None:
    """The first of these environment variables that is set and not empty."""
    return next((os.environ[n] for n in names if os.environ.get(n)), None)


class Vocabulary:
    """Function words, then a Zipf distribution over common English words followed by made-up
    ones; and capitalised made-up names for people, places and organisations."""

    def __init__(self, seed: int, size: int = 40_000) -> None:
        rng = np.random.default_rng([seed, 9_999])
        made: list[str] = []
        seen = set(COMMON_WORDS) | set(FUNCTION_WORDS)
        while len(made) < size + 3_000:
            syllables = int(rng.choice([1, 2, 3], p=[0.15, 0.6, 0.25]))
            word = "".join(
                ONSETS[rng.integers(len(ONSETS))]
                + VOWELS[rng.integers(len(VOWELS))]
                + CODAS[rng.integers(len(CODAS))]
                for _ in range(syllables)
            )
            if word not in seen:
                seen.add(word)
                made.append(word)
        self.content = np.array(COMMON_WORDS + made[:size])
        ranks = np.arange(len(self.content), dtype=np.float64)
        weights = 1.0 / (ranks + 2.7) ** 1.0
        self.cdf = np.cumsum(weights / weights.sum())
        self.names = [w.capitalize() for w in made[size:]]
        fw = 1.0 / (np.arange(len(FUNCTION_WORDS)) + 1.5)
        self.function = np.array(FUNCTION_WORDS)
        self.function_cdf = np.cumsum(fw / fw.sum())

    def content_ids(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return np.minimum(np.searchsorted(self.cdf, rng.random(n)), len(self.content) - 1)


def group_name(index: int) -> str:
    return f"conv-{index:04d}"


def conversation(vocab: Vocabulary, seed: int, index: int, turns: int) -> list[dict[str, Any]]:
    """One group's turns (``add_episodes`` items), deterministic from (seed, index)."""
    rng = np.random.default_rng([seed, index])
    group = group_name(index)
    people = list(rng.choice(vocab.names, 12, replace=False))
    places = list(rng.choice(vocab.names, 6, replace=False))
    orgs = list(rng.choice(vocab.names, 6, replace=False))
    hobbies = [w + "ing" for w in rng.choice(vocab.content[400:3000], 6, replace=False)]
    days = np.sort(rng.choice(400, size=max(1, turns // 10), replace=False))
    items: list[dict[str, Any]] = []
    session = 0
    while len(items) < turns:
        size = min(int(rng.integers(10, 25)), turns - len(items))
        sid = f"{group}-s{session:03d}"
        start = BASE_DAY + timedelta(days=int(days[session % len(days)]), hours=session % 9)
        topic = vocab.content_ids(rng, 400)
        topic = topic[topic >= 150][:40]  # the session's own words: not the most common ones
        for t in range(size):
            speaker = "user" if t % 2 == 0 else "assistant"
            words = int(np.clip(rng.lognormal(np.log(50), 0.5), 20, 120))
            n_content = int(words * 0.55)
            ids = vocab.content_ids(rng, n_content)
            if len(topic):
                own = rng.random(n_content) < 0.33
                ids[own] = rng.choice(topic, int(own.sum()))
            content = list(vocab.content[ids])
            function = list(
                vocab.function[np.searchsorted(vocab.function_cdf, rng.random(words - n_content))]
            )
            order = rng.permutation(words)
            pool = content + function
            tokens = [pool[i] for i in order]
            sentences: list[str] = []
            at = 0
            while at < len(tokens):
                length = int(rng.integers(7, 19))
                chunk = tokens[at : at + length]
                sentences.append(" ".join([chunk[0].capitalize(), *chunk[1:]]) + ".")
                at += length
            if speaker == "user" and rng.random() < 0.08:
                template = FACT_TEMPLATES[rng.integers(len(FACT_TEMPLATES))]
                sentences.insert(
                    int(rng.integers(len(sentences) + 1)),
                    template.format(
                        place=places[rng.integers(len(places))],
                        name=people[rng.integers(len(people))],
                        org=orgs[rng.integers(len(orgs))],
                        hobby=hobbies[rng.integers(len(hobbies))],
                    ),
                )
            items.append(
                {
                    "content": " ".join(sentences),
                    "group_id": group,
                    "source": sid,
                    "kind": "message",
                    "reference_time": start + timedelta(minutes=t),
                    "metadata": {"speaker": speaker, "session_id": sid},
                }
            )
        session += 1
    return items


def questions(vocab: Vocabulary, items: Sequence[dict[str, Any]], seed: int, n: int) -> list[str]:
    """n questions about the group's own user turns: a lead and 2-4 less common words."""
    rng = np.random.default_rng([seed, 777])
    rank = {w: i for i, w in enumerate(vocab.content)}
    user = [it["content"] for it in items if it["metadata"]["speaker"] == "user"]
    out: list[str] = []
    while len(out) < n:
        text = user[int(rng.integers(len(user)))]
        words = [w.strip(".").lower() for w in text.split()]
        candidates = sorted({w for w in words if rank.get(w, 0) >= 60})
        if len(candidates) < 2:
            continue
        picked = rng.choice(candidates, min(len(candidates), int(rng.integers(2, 5))), False)
        out.append(f"{LEADS[rng.integers(len(LEADS))]} {' '.join(picked)}?")
    return out


# ------------------------------------------------------------------------------ helpers
def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"{one:.2f}/{five:.2f}"


def _machine() -> str:
    return (
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"SQLite {sqlite3.sqlite_version}"
    )


def _source_digest() -> str:
    """sha1 of graphmem's sources (Python and Cypher) as measured: the tree may be uncommitted."""
    import hashlib

    digest = hashlib.sha1()
    for path in sorted((ROOT / "graphmem").rglob("*")):
        if path.suffix in (".py", ".cypher") and path.is_file():
            digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:12]


def _schema_digest() -> str:
    """sha1 of the SQLite migrations: a cached store built under other ones is rebuilt."""
    import hashlib

    from graphmem.store.sqlite.schema import MIGRATIONS

    return hashlib.sha1(repr(MIGRATIONS).encode()).hexdigest()[:12]


def _instrument(store: Any) -> tuple[dict[str, float], Callable[[], None]]:
    return instrument(store, STAGES)


def _timed_recalls(mem: Any, group: str, qs: Sequence[str]) -> list[float]:
    samples: list[float] = []
    for q in qs:
        t0 = time.perf_counter()
        mem.recall(q, group_id=group, k=K)
        samples.append(time.perf_counter() - t0)
    return samples


def _ingest(mem: Any, items: Sequence[dict[str, Any]], batch: int) -> tuple[float, int]:
    t0 = time.perf_counter()
    facts = 0
    for at in range(0, len(items), batch):
        results = mem.add_episodes(items[at : at + batch], on_invalid="skip")
        facts += sum(r.facts_added for r in results)
    return time.perf_counter() - t0, facts


def _round_robin(groups: Sequence[Sequence[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Sessions of all groups interleaved: one session of each group in turn."""
    sessions: list[list[list[dict[str, Any]]]] = []
    for items in groups:
        by: dict[str, list[dict[str, Any]]] = {}
        for it in items:
            by.setdefault(it["source"], []).append(it)
        sessions.append(list(by.values()))
    out: list[dict[str, Any]] = []
    for i in range(max(len(s) for s in sessions)):
        for s in sessions:
            if i < len(s):
                out.extend(s[i])
    return out


# ------------------------------------------------------------------------------ stores
class SQLiteStores:
    mode = "alternating"

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir

    @contextlib.contextmanager
    def open(self, name: str, *, fresh: bool) -> Iterator[Any]:
        from graphmem import GraphMemory

        path = self.workdir / f"tenants_{name}.db"
        if fresh:
            for suffix in ("", "-wal", "-shm"):
                Path(f"{path}{suffix}").unlink(missing_ok=True)
        mem = GraphMemory(path, extractor="rules")
        mem.connect()
        try:
            yield mem
        finally:
            mem.close()

    def describe(self) -> str:
        return f"SQLite files in {self.workdir}"




class BoltStores:
    """Two databases on one Bolt server (one if a second cannot be created)."""

    def __init__(self, crowded_uri: str | None = None) -> None:
        uri = _env("NEO4J_URI", "GRAPHMEM_TEST_BOLT_URI")
        if not uri:
            raise SystemExit(
                "--store bolt needs NEO4J_URI or GRAPHMEM_TEST_BOLT_URI (start a server with "
                "scripts/bolt_server.py and source its env.sh)"
            )
        self.uri = uri
        self.user = _env("NEO4J_USERNAME", "NEO4J_USER", "GRAPHMEM_TEST_BOLT_USER")
        self.password = _env("NEO4J_PASSWORD", "GRAPHMEM_TEST_BOLT_PASSWORD")
        self.http = _env("GRAPHMEM_ARCADEDB_HTTP", "GRAPHMEM_TEST_BOLT_HTTP")
        self.default_db = _env("NEO4J_DATABASE", "GRAPHMEM_TEST_BOLT_DATABASE")
        self.databases = {"alone": "tenantsalone", "crowded": "tenantscrowded"}
        self.agent = ""
        # The crowded store on a second server (same credentials), for a server that holds one
        # database (Neo4j Community): both stores open at once, so the rounds alternate.
        self.uris = {"alone": uri, "crowded": crowded_uri or uri}
        if crowded_uri:
            self.mode = "alternating"
            self.databases = {"alone": self.default_db or "", "crowded": self.default_db or ""}
        elif not all(self._create(db) for db in self.databases.values()):
            self.mode = "sequential"
            self.databases = {"alone": self.default_db or "", "crowded": self.default_db or ""}
        else:
            self.mode = "alternating"

    def _create(self, database: str) -> bool:
        if self.http:
            token = base64.b64encode(f"{self.user or 'root'}:{self.password}".encode()).decode()
            headers = {"Authorization": f"Basic {token}", "Content-Type": "application/json"}
            listing = urllib.request.Request(
                f"{self.http.rstrip('/')}/api/v1/databases", headers=headers
            )
            try:
                with urllib.request.urlopen(listing, timeout=30) as resp:
                    if database in json.loads(resp.read()).get("result", []):
                        return True
                create = urllib.request.Request(
                    f"{self.http.rstrip('/')}/api/v1/server",
                    data=json.dumps({"command": f"create database {database}"}).encode(),
                    headers=headers,
                    method="POST",
                )
                with urllib.request.urlopen(create, timeout=60):
                    return True
            except OSError as exc:
                print(f"could not create database {database} over HTTP: {exc}", file=sys.stderr)
                return False
        try:
            import neo4j

            auth = (self.user or "neo4j", self.password or "")
            with neo4j.GraphDatabase.driver(self.uri, auth=auth) as driver:
                driver.execute_query(
                    f"CREATE DATABASE {database} IF NOT EXISTS WAIT", database_="system"
                )
            return True
        except Exception as exc:  # community edition: one database only
            print(f"could not create database {database}: {exc}", file=sys.stderr)
            return False

    @contextlib.contextmanager
    def open(self, name: str, *, fresh: bool) -> Iterator[Any]:
        from graphmem import GraphMemory
        from graphmem.store.neo4j import Neo4jStore

        def store() -> Neo4jStore:
            return Neo4jStore(
                self.uris[name],
                username=self.user,
                password=self.password,
                database=self.databases[name] or None,
                http_url=self.http,
                max_retry_time=60,
            )

        if fresh:
            first = store()
            first.connect()
            first.wipe_all_for_tests()
            first.close()
        s = store()
        mem = GraphMemory(s, extractor="rules")
        mem.connect()
        self.agent = s.server_agent
        try:
            yield mem
        finally:
            mem.close()

    def describe(self) -> str:
        if self.uris["crowded"] != self.uri:
            return f"{self.agent}: alone at {self.uri}, crowded at {self.uris['crowded']}"
        return f"{self.agent} at {self.uri}, databases {sorted(set(self.databases.values()))}"


# ------------------------------------------------------------------------------ (a) ratio
def tenant_ratio(args: argparse.Namespace) -> dict[str, Any]:
    vocab = Vocabulary(args.seed)
    groups = [conversation(vocab, args.seed, g, args.per_group) for g in range(args.groups)]
    target = group_name(0)
    qs = questions(vocab, groups[0], args.seed, args.queries)
    stores: SQLiteStores | BoltStores = (
        SQLiteStores(args.workdir) if args.store == "sqlite" else BoltStores(args.crowded_uri)
    )
    report: dict[str, Any] = {
        "command": "python " + " ".join([os.path.relpath(__file__, ROOT), *sys.argv[1:]]),
        "machine": _machine(),
        "graphmem_source_sha1": _source_digest(),
        "store": args.store,
        "mode": stores.mode,
        "workload": {
            "groups_crowded": args.groups,
            "episodes_per_group": args.per_group,
            "episodes_crowded": sum(len(g) for g in groups),
            "questions": len(qs),
            "rounds": args.rounds,
            "k": K,
            "seed": args.seed,
            "embedder": "hash-ngram-v1-384 (default)",
            "extractor": "rules",
            "example_questions": qs[:3],
            "example_turn": groups[0][0]["content"],
        },
        "target": "crowded p50 / alone p50 <= 1.2",
    }
    build: dict[str, Any] = {}
    crowded_items = _round_robin(groups)
    with contextlib.ExitStack() as stack:
        mems: dict[str, Any] = {}
        plan = [("alone", groups[0]), ("crowded", crowded_items)]
        if stores.mode == "sequential":
            plan = [("alone", groups[0])]
        for name, items in plan:
            load = _load()
            mem = stack.enter_context(stores.open(name, fresh=True))
            seconds, facts = _ingest(mem, items, args.batch)
            stats = mem.stats(target)
            build[name] = {
                "episodes": len(items),
                "ingest_seconds": round(seconds, 1),
                "episodes_per_s": round(len(items) / seconds),
                "facts": facts,
                "target_group": {k: stats[k] for k in ("episodes", "entities", "facts")},
                "load": f"{load} -> {_load()}",
            }
            print(f"built {name}: {build[name]}", file=sys.stderr, flush=True)
            mems[name] = mem
        report["server"] = stores.describe()
        rounds: list[dict[str, Any]] = []
        names = ["alone", "crowded"]

        def measure(name: str, r: int) -> None:
            samples = _timed_recalls(mems[name], target, qs)
            rounds[r][name] = percentiles(samples)

        def measure_both(r: int) -> None:
            """Each question on both stores, in turn, alternating which goes first: each store
            always follows the other (caches see the same interference)."""
            samples: dict[str, list[float]] = {name: [] for name in names}
            for i, q in enumerate(qs):
                for name in names if (i + r) % 2 == 0 else names[::-1]:
                    samples[name] += _timed_recalls(mems[name], target, [q])
            for name in names:
                rounds[r][name] = percentiles(samples[name])

        for name in mems:  # warm-up: caches, vector matrices, JIT on the server
            _timed_recalls(mems[name], target, qs[: max(5, len(qs) // 4)])
        if stores.mode == "sequential":
            rounds = [{"load_before": _load()} for _ in range(args.rounds)]
            for r in range(args.rounds):
                measure("alone", r)
            seconds, facts = _ingest(mems["alone"], _round_robin(groups[1:]), args.batch)
            build["crowded"] = {
                "episodes": len(crowded_items),
                "ingest_seconds_others": round(seconds, 1),
                "note": "the other groups added to the same database after the alone rounds",
            }
            mems["crowded"] = mems["alone"]
            _timed_recalls(mems["crowded"], target, qs[: max(5, len(qs) // 4)])
            for r in range(args.rounds):
                measure("crowded", r)
        else:
            for r in range(args.rounds):
                rounds.append({"load_before": _load()})
                measure_both(r)
                print(f"round {r}: {rounds[r]}", file=sys.stderr, flush=True)
        for rnd in rounds:
            rnd["ratio_p50"] = round(rnd["crowded"]["p50_ms"] / rnd["alone"]["p50_ms"], 2)
            rnd["ratio_p95"] = round(rnd["crowded"]["p95_ms"] / rnd["alone"]["p95_ms"], 2)
        # Where the time goes: one more pass per store, store methods timed.
        stages: dict[str, dict[str, float]] = {}
        for name in names:
            spent, undo = _instrument(mems[name].store)
            _timed_recalls(mems[name], target, qs)
            undo()
            stages[name] = {
                k: round(v * 1000 / len(qs), 2)
                for k, v in sorted(spent.items(), key=lambda kv: -kv[1])
            }

    def med(values: list[float]) -> float:
        return round(float(np.median(values)), 2)

    report["build"] = build
    report["rounds"] = rounds
    report["median_over_rounds"] = {
        "alone_p50_ms": med([r["alone"]["p50_ms"] for r in rounds]),
        "alone_p95_ms": med([r["alone"]["p95_ms"] for r in rounds]),
        "crowded_p50_ms": med([r["crowded"]["p50_ms"] for r in rounds]),
        "crowded_p95_ms": med([r["crowded"]["p95_ms"] for r in rounds]),
        "ratio_p50": med([r["ratio_p50"] for r in rounds]),
        "ratio_p95": med([r["ratio_p95"] for r in rounds]),
    }
    report["stage_ms_per_recall"] = stages
    report["load_after"] = _load()
    report["peak_rss_mb"] = rss_mb()
    return report


# ------------------------------------------------------------------------------ (b) LME scale
def _lme_db(workdir: Path) -> Path:
    return workdir / "lme_scale.db"


def _lme_sizes(seed: int, groups: int) -> list[int]:
    rng = np.random.default_rng([seed, 468])
    return [int(n) for n in rng.integers(450, 531, size=groups)]


def lme_build(args: argparse.Namespace) -> dict[str, Any]:
    from graphmem import GraphMemory

    path = _lme_db(args.workdir)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    vocab = Vocabulary(args.seed)
    load = _load()
    mem = GraphMemory(path, extractor="rules")
    mem.connect()
    spent = 0.0
    generate = 0.0
    facts = episodes = 0
    cpu = time.process_time()
    for g, size in enumerate(_lme_sizes(args.seed, args.lme_groups)):
        t0 = time.perf_counter()
        items = conversation(vocab, args.seed, g, size)
        generate += time.perf_counter() - t0
        seconds, added = _ingest(mem, items, args.batch)
        spent += seconds
        facts += added
        episodes += len(items)
        if g % 50 == 0:
            print(f"group {g}: {episodes} turns, {spent:.0f} s", file=sys.stderr, flush=True)
    cpu_s = time.process_time() - cpu
    stats = mem.stats()
    mem.close()
    info = {
        "groups": args.lme_groups,
        "episodes": episodes,
        "entities": stats["entities"],
        "facts": facts,
        "ingest_seconds": round(spent, 1),
        "ingest_episodes_per_s": round(episodes / spent),
        "ingest_cpu_seconds": round(cpu_s - generate, 1),
        "generate_seconds": round(generate, 1),
        "ingest_peak_rss_mb": rss_mb(),
        "db_mb": round(sum(p.stat().st_size for p in args.workdir.glob(f"{path.name}*")) / 2**20),
        "load": f"{load} -> {_load()}",
        "seed": args.seed,
        "schema_sha1": _schema_digest(),
    }
    path.with_suffix(".json").write_text(json.dumps(info, indent=2))
    return info


def lme_query(args: argparse.Namespace) -> dict[str, Any]:
    from graphmem import GraphMemory

    vocab = Vocabulary(args.seed)
    sizes = _lme_sizes(args.seed, args.lme_groups)
    asked: list[tuple[str, str]] = []
    for g, size in enumerate(sizes):
        items = conversation(vocab, args.seed, g, size)
        asked.append((group_name(g), questions(vocab, items, args.seed + g, 1)[0]))
    load = _load()
    mem = GraphMemory(_lme_db(args.workdir), extractor="rules")
    mem.connect()
    rss_open = rss_mb()
    t0 = time.perf_counter()
    mem.recall("warm up the embedder and the connection", group_id="no-such-group", k=K)
    warm = time.perf_counter() - t0
    first: list[float] = []
    cpu = time.process_time()
    for group, q in asked:
        t0 = time.perf_counter()
        mem.recall(q, group_id=group, k=K)
        first.append(time.perf_counter() - t0)
    cpu_ms = (time.process_time() - cpu) * 1000 / len(asked)
    load_mid = _load()
    again = _timed_recalls_pairs(mem, asked[: args.queries])
    spent, undo = _instrument(mem.store)
    passes = asked[: min(args.queries, 100)]
    _timed_recalls_pairs(mem, passes)
    undo()
    mem.close()
    slowest = sorted(range(len(first)), key=lambda i: -first[i])[:5]
    return {
        "questions": len(asked),
        "recall_first_in_group": percentiles(first),
        "recall_first_in_group_cpu_ms_mean": round(cpu_ms, 2),
        "recall_warm_second_pass": percentiles(again),
        "warm_questions": len(again),
        "stage_ms_per_recall_warm": {
            k: round(v * 1000 / len(passes), 2)
            for k, v in sorted(spent.items(), key=lambda kv: -kv[1])
        },
        "slowest": [
            {"group": asked[i][0], "question": asked[i][1], "ms": round(first[i] * 1000, 1)}
            for i in slowest
        ],
        "empty_group_recall_ms": round(warm * 1000, 1),
        "rss_after_open_mb": rss_open,
        "query_peak_rss_mb": rss_mb(),
        "load": f"{load} -> {load_mid} -> {_load()}",
        "example_questions": [q for _, q in asked[:3]],
    }


def _timed_recalls_pairs(mem: Any, pairs: Sequence[tuple[str, str]]) -> list[float]:
    samples: list[float] = []
    for group, q in pairs:
        t0 = time.perf_counter()
        mem.recall(q, group_id=group, k=K)
        samples.append(time.perf_counter() - t0)
    return samples


def _child(args: list[str]) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, __file__, *args], check=True, stdout=subprocess.PIPE, text=True
    )
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def lme_scale(args: argparse.Namespace) -> dict[str, Any]:
    common = [
        "--lme-scale",
        "--workdir", str(args.workdir),
        "--seed", str(args.seed),
        "--lme-groups", str(args.lme_groups),
        "--batch", str(args.batch),
        "--queries", str(args.queries),
    ]  # fmt: skip
    meta = _lme_db(args.workdir).with_suffix(".json")
    fresh = args.rebuild or not meta.exists() or not _lme_db(args.workdir).exists()
    if not fresh:
        built = json.loads(meta.read_text())
        fresh = (built.get("seed"), built.get("groups"), built.get("schema_sha1")) != (
            args.seed,
            args.lme_groups,
            _schema_digest(),
        )
    if fresh:
        print("building the store ...", file=sys.stderr, flush=True)
        built = _child([*common, "--phase", "build"])
    print("asking ...", file=sys.stderr, flush=True)
    queried = _child([*common, "--phase", "query"])
    return {
        "command": "python " + " ".join([os.path.relpath(__file__, ROOT), *sys.argv[1:]]),
        "machine": _machine(),
        "graphmem_source_sha1": _source_digest(),
        "store": "sqlite",
        "target": "recall p95 <= 50 ms per question on a quiet machine",
        "workload": {
            "turns_per_group": "450-530 (uniform)",
            "words_per_turn": "20-120",
            "k": K,
            "embedder": "hash-ngram-v1-384 (default)",
            "extractor": "rules",
        },
        "build": built,
        "query": queried,
        "peak_rss_mb": max(built["ingest_peak_rss_mb"], queried["query_peak_rss_mb"]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--store", choices=["sqlite", "bolt"], default="sqlite")
    parser.add_argument("--lme-scale", action="store_true", help="figure (b), SQLite")
    parser.add_argument("--groups", type=int, default=40, help="(a) groups in the crowded store")
    parser.add_argument("--per-group", type=int, default=500, help="(a) turns per group")
    parser.add_argument("--rounds", type=int, default=6, help="(a) rounds")
    parser.add_argument(
        "--queries", type=int, default=60, help="(a) questions per round; (b) warm second pass"
    )
    parser.add_argument("--lme-groups", type=int, default=468, help="(b) groups")
    parser.add_argument("--batch", type=int, default=1000, help="turns per add_episodes call")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument(
        "--workdir", type=Path, default=Path(tempfile.gettempdir()) / "graphmem-tenants"
    )
    parser.add_argument("--rebuild", action="store_true", help="(b) build the store again")
    parser.add_argument(
        "--crowded-uri",
        help="(a) bolt: the crowded store on this second server (for one-database servers)",
    )
    parser.add_argument("--out", type=Path)
    parser.add_argument("--phase", choices=["build", "query"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    if args.phase == "build":
        print(json.dumps(lme_build(args)))
        return
    if args.phase == "query":
        print(json.dumps(lme_query(args)))
        return
    report = lme_scale(args) if args.lme_scale else tenant_ratio(args)
    text = json.dumps(report, indent=2) + "\n"
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
