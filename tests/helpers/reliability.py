"""Shared pieces of the reliability suite: corpora, canonical exports and store consistency checks.

Everything here is store-agnostic where it can be (``canonical`` and ``snapshot`` work on
``GraphMemory.export()`` rows, so a Bolt parametrization can reuse them); the SQLite-only checks
(``sqlite_problems``, ``fts_docs``) open the file directly with the ``sqlite3`` module.
"""

from __future__ import annotations

import json
import random
import sqlite3
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from graphmem import GraphMemory

BASE_TIME = datetime(2024, 1, 1, tzinfo=UTC)
SUBJECTS = ["Alice", "Bob", "Carol", "Dave", "Erin", "Frank"]
CITIES = [
    "Paris", "Berlin", "Osaka", "Lima", "Oslo", "Rome", "Quito", "Accra", "Hanoi", "Perth",
    "Dublin", "Porto",
]
EMPLOYERS = ["Acme", "Globex", "Initech", "Umbrella", "Hooli", "Stark", "Wayne", "Wonka"]
HOBBIES = [
    "jazz", "hiking", "chess", "tennis", "sushi", "poetry", "rowing", "opera", "baking", "golf",
    "karate", "cycling",
]
TABLES = (
    "episodes", "entities", "entity_aliases", "facts", "fact_episodes", "fact_links", "mentions",
)
FTS_TABLES = ("facts", "entities", "episodes")


# ------------------------------------------------------------------------------------ corpora
def corpus(seed: int, n: int, *, group_id: str = "default") -> list[dict[str, Any]]:
    """``n`` distinct episodes (chat messages and JSON robot records) about overlapping entities.

    Built so that the final graph cannot depend on ingest order: every (subject, predicate)
    timeline only ever moves to a value it never had before (or repeats the current one, a
    duplicate), no two values share a valid time, and multi-valued facts are stated once per
    (subject, value). Reference times increase strictly with the index. JSON-serialisable
    (times as ISO strings, which ``add_episode(s)`` parse).
    """
    rng = random.Random(seed)
    lives: dict[str, list[str]] = {s: [] for s in SUBJECTS}
    works: dict[str, list[str]] = {s: [] for s in SUBJECTS}
    likes: dict[str, set[str]] = {s: set() for s in SUBJECTS}
    robots: dict[int, dict[str, Any]] = {}
    out: list[dict[str, Any]] = []
    for i in range(n):
        when = (BASE_TIME + timedelta(minutes=i, milliseconds=rng.randrange(1000))).isoformat()
        subject = rng.choice(SUBJECTS)
        roll = rng.random()
        if roll < 0.3:
            k = rng.randrange(12)
            robot = robots.setdefault(
                k,
                {
                    "success": rng.random() < 0.5,
                    "tags": rng.sample(["grasp", "lift", "place", "push", "scan"], 2),
                    "force": 5.0,
                },
            )
            robot["force"] = round(robot["force"] + 0.5 + rng.randrange(10) / 10, 1)
            record = {
                "episode": k,
                "task": "grasp",
                "success": robot["success"],
                "params": {"force_peak": robot["force"]},
                "tags": robot["tags"],
                "note": f"run {i}",
            }
            out.append(
                {
                    "content": json.dumps(record, sort_keys=True),
                    "kind": "json",
                    "source": "robot.jsonl",
                    "reference_time": when,
                    "group_id": group_id,
                }
            )
            continue
        if roll < 0.55:
            sentence = _step(rng, lives[subject], CITIES, f"{subject} lives in {{}}.")
        elif roll < 0.75:
            sentence = _step(rng, works[subject], EMPLOYERS, f"{subject} works at {{}}.")
        else:
            fresh = [h for h in HOBBIES if h not in likes[subject]]
            if not fresh:
                sentence = _step(rng, lives[subject], CITIES, f"{subject} lives in {{}}.")
            else:
                hobby = rng.choice(fresh)
                likes[subject].add(hobby)
                sentence = f"{subject} likes {hobby}."
        first_person = rng.random() < 0.25 and " lives in " in sentence
        content = sentence.replace(f"{subject} lives in", "I live in") if first_person else sentence
        out.append(
            {
                "content": f"{content} (message {i})",
                "kind": "message",
                "source": f"chat-{subject.lower()}",
                "reference_time": when,
                "metadata": {"speaker": subject, "turn": i},
                "group_id": group_id,
            }
        )
    return out


def _step(rng: random.Random, history: list[str], values: Sequence[str], template: str) -> str:
    """Repeat the current value (a duplicate) or move to one this timeline never had."""
    fresh = [v for v in values if v not in history]
    if history and (rng.random() < 0.3 or not fresh):
        return template.format(history[-1])
    value = rng.choice(fresh)
    history.append(value)
    return template.format(value)


def ingest(
    mem: GraphMemory, episodes: Sequence[Mapping[str, Any]], *, bulk: int, chunk: int
) -> None:
    """The workers' ingest pattern: the first ``bulk`` episodes through ``add_episodes`` in
    chunks of ``chunk``, the rest one by one through ``add_episode``."""
    head = list(episodes[:bulk])
    for start in range(0, len(head), chunk):
        mem.add_episodes(head[start : start + chunk])
    for episode in episodes[bulk:]:
        mem.add_episode(**episode)


# ------------------------------------------------------------------------------------ exports
def snapshot(mem: GraphMemory, group_id: str | None = None) -> list[str]:
    """Every exported row, exactly (times, ids, embeddings), in a stable order."""
    return sorted(json.dumps(r, sort_keys=True, default=str) for r in mem.export(group_id=group_id))


def canonical(rows: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The graph without ids, record times or embeddings: what equal inputs must reproduce.

    Facts are (group, subject, predicate, object|value, valid_from, valid_to, expired?,
    confidence, statement, supporting episode ids); links are (kind, fact, fact, reason) by
    those fact signatures. Episode ids are kept: they derive from (group, content).
    """
    rows = list(rows)
    entities: dict[str, tuple[Any, ...]] = {}
    for r in rows:
        if r["type"] == "entity":
            entities[r["id"]] = (r["group_id"], r["key"], r["entity_type"])
    provenance: dict[str, list[str]] = {}
    for r in rows:
        if r["type"] == "provenance":
            provenance.setdefault(r["fact_id"], []).append(r["episode_id"])
    facts: dict[str, tuple[Any, ...]] = {}
    for r in rows:
        if r["type"] != "fact":
            continue
        target = (
            ("entity", entities.get(r["object_id"], ("?missing", r["object_id"])))
            if r["object_id"]
            else ("value", json.dumps(r["value"], sort_keys=True))
        )
        facts[r["id"]] = (
            r["group_id"],
            entities.get(r["subject_id"], ("?missing", r["subject_id"])),
            r["predicate"],
            target,
            r["valid_from"],
            r["valid_to"],
            r["expired_at"] is not None,
            round(float(r["confidence"]), 6),
            r["statement"],
            tuple(sorted(provenance.get(r["id"], []))),
        )
    # Sorted by repr: two links from one fact compare its valid_to, which is None or a time.
    links = sorted(
        [
            (
                r["kind"],
                facts.get(r["src"], ("?missing", r["src"])),
                facts.get(r["dst"], ("?missing", r["dst"])),
                r["reason"],
            )
            for r in rows
            if r["type"] == "link"
        ],
        key=repr,
    )
    episodes = sorted(
        (r["id"], r["group_id"], r["content_hash"], r["status"])
        for r in rows
        if r["type"] == "episode"
    )
    mentions = sorted(
        (r["episode_id"], entities.get(r["entity_id"], ("?missing", r["entity_id"])))
        for r in rows
        if r["type"] == "mention"
    )
    entity_names = sorted(
        (r["group_id"], r["key"], r["entity_type"], r["name"], tuple(r["aliases"]))
        for r in rows
        if r["type"] == "entity"
    )
    return {
        "episodes": episodes,
        "entities": entity_names,
        "facts": sorted(facts.values(), key=repr),
        "links": sorted(links, key=repr),
        "mentions": sorted(mentions, key=repr),
    }


def diff_canonical(left: Mapping[str, Any], right: Mapping[str, Any], limit: int = 6) -> str:
    """A short readable difference of two canonical graphs (for assertion messages)."""
    lines: list[str] = []
    for key in left:
        a, b = Counter(map(repr, left[key])), Counter(map(repr, right[key]))
        only_a, only_b = list((a - b).elements()), list((b - a).elements())
        if only_a or only_b:
            lines.append(f"{key}: {len(only_a)} only left, {len(only_b)} only right")
            lines += [f"  < {x}" for x in only_a[:limit]]
            lines += [f"  > {x}" for x in only_b[:limit]]
    return "\n".join(lines)


def export_counts(rows: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """Rows per kind in an export (the store-agnostic view of per-table counts)."""
    counts = Counter(str(r["type"]) for r in rows)
    return {k: counts.get(k, 0) for k in ("episode", "entity", "fact", "provenance", "link",
                                           "mention")}


def export_problems(rows: Iterable[Mapping[str, Any]]) -> list[str]:
    """Dangling references and orphans visible in an export (works for every store)."""
    rows = list(rows)
    by_type: dict[str, list[Mapping[str, Any]]] = {}
    for r in rows:
        by_type.setdefault(str(r["type"]), []).append(r)
    episodes = {r["id"]: r for r in by_type.get("episode", [])}
    entities = {r["id"]: r for r in by_type.get("entity", [])}
    facts = {r["id"]: r for r in by_type.get("fact", [])}
    problems: list[str] = []
    supported: set[str] = set()
    used: set[str] = set()
    for r in by_type.get("provenance", []):
        supported.add(r["fact_id"])
        if r["fact_id"] not in facts:
            problems.append(f"provenance to missing fact {r['fact_id']}")
        if r["episode_id"] not in episodes:
            problems.append(f"provenance to missing episode {r['episode_id']}")
        elif r["fact_id"] in facts and episodes[r["episode_id"]]["group_id"] != facts[
            r["fact_id"]
        ]["group_id"]:
            problems.append(f"provenance across groups {r['fact_id']} <- {r['episode_id']}")
    for fid, f in facts.items():
        if fid not in supported:
            problems.append(f"fact without provenance {fid}")
        for role in ("subject_id", "object_id"):
            eid = f.get(role)
            if eid is None:
                continue
            used.add(eid)
            if eid not in entities:
                problems.append(f"fact {fid} {role} missing entity {eid}")
            elif entities[eid]["group_id"] != f["group_id"]:
                problems.append(f"fact {fid} {role} is an entity of another group")
    for r in by_type.get("link", []):
        for end in ("src", "dst"):
            if r[end] not in facts:
                problems.append(f"{r['kind']} link {end} is a missing fact {r[end]}")
    for r in by_type.get("mention", []):
        used.add(r["entity_id"])
        if r["episode_id"] not in episodes:
            problems.append(f"mention by missing episode {r['episode_id']}")
        if r["entity_id"] not in entities:
            problems.append(f"mention of missing entity {r['entity_id']}")
    for eid in entities:
        if eid not in used:
            problems.append(f"orphan entity {eid} ({entities[eid]['name']!r})")
    for eid, ep in episodes.items():
        if ep["status"] != "extracted" and any(
            r["episode_id"] == eid for r in by_type.get("provenance", [])
        ):
            problems.append(f"{ep['status']} episode {eid} carries facts")
    return problems


# ------------------------------------------------------------------------------------ SQLite
def connect_ro(path: str | Path) -> sqlite3.Connection:
    """A plain connection for checks (read-write: the FTS5 integrity-check command is an INSERT,
    and the first opener of a WAL file left by a killed process recovers it)."""
    conn = sqlite3.connect(str(path), timeout=30)
    conn.execute("PRAGMA busy_timeout = 30000")
    return conn


def fts_docs(conn: sqlite3.Connection) -> dict[str, int]:
    """Rows really held by each FTS5 index (its ``_docsize`` shadow table).

    ``SELECT count(*) FROM facts_fts`` is no use for this: on an external-content FTS5 table a
    full scan reads the *content* table, so it always equals ``count(*) FROM facts``.
    """
    return {
        f"{t}_fts": int(conn.execute(f"SELECT count(*) FROM {t}_fts_docsize").fetchone()[0])
        for t in FTS_TABLES
    }


def row_counts(conn: sqlite3.Connection) -> dict[str, int]:
    out = {t: int(conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]) for t in TABLES}
    out.update(fts_docs(conn))
    out["fact_vectors"] = int(
        conn.execute("SELECT count(*) FROM facts WHERE embedding IS NOT NULL").fetchone()[0]
    )
    out["entity_vectors"] = int(
        conn.execute("SELECT count(*) FROM entities WHERE embedding IS NOT NULL").fetchone()[0]
    )
    return out


_ORPHAN_QUERIES = {
    "fact whose subject entity is missing":
        "SELECT count(*) FROM facts f LEFT JOIN entities e ON e.id = f.subject_id "
        "WHERE e.id IS NULL",
    "fact whose object entity is missing":
        "SELECT count(*) FROM facts f LEFT JOIN entities e ON e.id = f.object_id "
        "WHERE f.object_id IS NOT NULL AND e.id IS NULL",
    "fact without provenance":
        "SELECT count(*) FROM facts f WHERE NOT EXISTS "
        "(SELECT 1 FROM fact_episodes x WHERE x.fact_id = f.id)",
    "provenance to a missing fact":
        "SELECT count(*) FROM fact_episodes x LEFT JOIN facts f ON f.id = x.fact_id "
        "WHERE f.id IS NULL",
    "provenance to a missing episode":
        "SELECT count(*) FROM fact_episodes x LEFT JOIN episodes e ON e.id = x.episode_id "
        "WHERE e.id IS NULL",
    "link from a missing fact":
        "SELECT count(*) FROM fact_links l LEFT JOIN facts f ON f.id = l.src WHERE f.id IS NULL",
    "link to a missing fact":
        "SELECT count(*) FROM fact_links l LEFT JOIN facts f ON f.id = l.dst WHERE f.id IS NULL",
    "mention of a missing episode":
        "SELECT count(*) FROM mentions m LEFT JOIN episodes e ON e.id = m.episode_id "
        "WHERE e.id IS NULL",
    "mention of a missing entity":
        "SELECT count(*) FROM mentions m LEFT JOIN entities e ON e.id = m.entity_id "
        "WHERE e.id IS NULL",
    "alias of a missing entity":
        "SELECT count(*) FROM entity_aliases a LEFT JOIN entities e ON e.id = a.entity_id "
        "WHERE e.id IS NULL",
    "entity used by no fact and no mention":
        "SELECT count(*) FROM entities e WHERE NOT EXISTS "
        "(SELECT 1 FROM facts f WHERE f.subject_id = e.id OR f.object_id = e.id) "
        "AND NOT EXISTS (SELECT 1 FROM mentions m WHERE m.entity_id = e.id)",
    "unfinished episode with facts or mentions":
        "SELECT count(*) FROM episodes e WHERE e.status != 'extracted' AND (EXISTS "
        "(SELECT 1 FROM fact_episodes x WHERE x.episode_id = e.id) OR EXISTS "
        "(SELECT 1 FROM mentions m WHERE m.episode_id = e.id))",
    "fact linked across groups":
        "SELECT count(*) FROM fact_links l JOIN facts a ON a.id = l.src "
        "JOIN facts b ON b.id = l.dst WHERE a.group_id != b.group_id",
    "provenance across groups":
        "SELECT count(*) FROM fact_episodes x JOIN facts f ON f.id = x.fact_id "
        "JOIN episodes e ON e.id = x.episode_id WHERE f.group_id != e.group_id",
    "fact about an entity of another group":
        "SELECT count(*) FROM facts f JOIN entities e ON e.id = f.subject_id "
        "OR e.id = f.object_id WHERE e.group_id != f.group_id",
    "duplicate entity (group, key, type)":
        "SELECT count(*) FROM (SELECT 1 FROM entities GROUP BY group_id, key, type "
        "HAVING count(*) > 1)",
    "duplicate episode (group, content_hash)":
        "SELECT count(*) FROM (SELECT 1 FROM episodes GROUP BY group_id, content_hash "
        "HAVING count(*) > 1)",
}


def sqlite_problems(path: str | Path) -> list[str]:
    """Everything wrong with a graphmem SQLite file, as readable lines (empty: consistent).

    ``PRAGMA integrity_check``, dangling references in every direction, facts without
    provenance, orphan entities, unfinished episodes that already carry facts, FTS indexes
    that disagree with their tables, duplicates.
    """
    problems: list[str] = []
    conn = connect_ro(path)
    try:
        check = [r[0] for r in conn.execute("PRAGMA integrity_check").fetchall()]
        if check != ["ok"]:
            problems.append(f"integrity_check: {check[:5]}")
        for what, sql in _ORPHAN_QUERIES.items():
            count = int(conn.execute(sql).fetchone()[0])
            if count:
                problems.append(f"{count} x {what}")
        counts = row_counts(conn)
        for table in FTS_TABLES:
            if counts[f"{table}_fts"] != counts[table]:
                problems.append(
                    f"{table}_fts indexes {counts[f'{table}_fts']} rows, {table} has "
                    f"{counts[table]}"
                )
            try:
                conn.execute(
                    f"INSERT INTO {table}_fts({table}_fts, rank) VALUES ('integrity-check', 1)"
                )
            except sqlite3.DatabaseError as exc:
                problems.append(f"{table}_fts integrity-check: {exc}")
    finally:
        conn.close()
    return problems


def episode_signatures(path: str | Path) -> dict[str, dict[str, Any]]:
    """Per episode: status, and what it contributed (its facts and mentions, by name)."""
    conn = connect_ro(path)
    try:
        out: dict[str, dict[str, Any]] = {
            row[0]: {"status": row[1], "facts": [], "mentions": []}
            for row in conn.execute("SELECT id, status FROM episodes")
        }
        for episode_id, subject, predicate, obj, value in conn.execute(
            "SELECT x.episode_id, s.key, f.predicate, o.key, f.value_json FROM fact_episodes x "
            "JOIN facts f ON f.id = x.fact_id JOIN entities s ON s.id = f.subject_id "
            "LEFT JOIN entities o ON o.id = f.object_id"
        ):
            out[episode_id]["facts"].append((subject, predicate, obj, value))
        for episode_id, key, type_ in conn.execute(
            "SELECT m.episode_id, e.key, e.type FROM mentions m JOIN entities e "
            "ON e.id = m.entity_id"
        ):
            out[episode_id]["mentions"].append((key, type_))
    finally:
        conn.close()
    for item in out.values():
        item["facts"].sort(key=repr)
        item["mentions"].sort()
    return out


def audit_actions(path: str | Path) -> list[tuple[str, str, dict[str, Any]]]:
    conn = connect_ro(path)
    try:
        return [
            (row[0], row[1], json.loads(row[2]))
            for row in conn.execute("SELECT group_id, action, details FROM audit_log ORDER BY at")
        ]
    finally:
        conn.close()


def per_group(mem: Any, group_id: str) -> dict[str, Any]:
    """A group's canonical graph with the group factored out (episode ids derive from the
    group: they are replaced by the content hash, which does not)."""
    rows = list(mem.export(group_id=group_id))
    hashes = {r["id"]: r["content_hash"] for r in rows if r["type"] == "episode"}
    renamed = []
    for r in rows:
        r = dict(r)
        if "group_id" in r:
            r["group_id"] = "G"
        if r["type"] == "episode":
            r["id"] = hashes[r["id"]]
        if "episode_id" in r:
            r["episode_id"] = hashes[r["episode_id"]]
        renamed.append(r)
    return canonical(renamed)
