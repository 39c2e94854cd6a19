"""Ordered SQLite migrations, and what runs them. Each runs once, in its own transaction,
recorded in the file."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

from ..._errors import SchemaError
from ..._time import to_ms, utcnow
from .._base import MigrationInfo
from .fts_vocab import create_vocab_tables

if TYPE_CHECKING:
    from .db import SQLiteDB

__all__ = ["MIGRATIONS", "migrate", "migration_status"]

MIGRATIONS: list[tuple[int, str, str]] = [
    (
        1,
        "core tables",
        """
        CREATE TABLE graphmem_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE episodes (
            id TEXT PRIMARY KEY,
            group_id TEXT NOT NULL,
            source TEXT,
            kind TEXT NOT NULL,
            content TEXT NOT NULL,
            reference_time INTEGER NOT NULL,
            ingested_at INTEGER NOT NULL,
            content_hash TEXT NOT NULL,
            status TEXT NOT NULL,
            extractor TEXT,
            error TEXT,
            metadata TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX episodes_group_time ON episodes (group_id, reference_time);
        CREATE INDEX episodes_status ON episodes (status, group_id);
        CREATE TABLE entities (
            id TEXT PRIMARY KEY,
            group_id TEXT NOT NULL,
            name TEXT NOT NULL,
            key TEXT NOT NULL,
            type TEXT NOT NULL,
            aliases TEXT NOT NULL DEFAULT '[]',
            search_text TEXT NOT NULL,
            summary TEXT,
            embedding BLOB,
            created_at INTEGER NOT NULL,
            attributes TEXT NOT NULL DEFAULT '{}',
            UNIQUE (group_id, key, type)
        );
        CREATE TABLE entity_aliases (
            group_id TEXT NOT NULL,
            alias_key TEXT NOT NULL,
            entity_id TEXT NOT NULL,
            PRIMARY KEY (group_id, alias_key, entity_id)
        );
        CREATE INDEX entity_aliases_entity ON entity_aliases (entity_id);
        CREATE TABLE facts (
            id TEXT PRIMARY KEY,
            group_id TEXT NOT NULL,
            subject_id TEXT NOT NULL,
            predicate TEXT NOT NULL,
            object_id TEXT,
            value_json TEXT,
            statement TEXT NOT NULL,
            embedding BLOB,
            valid_from INTEGER NOT NULL,
            valid_to INTEGER,
            recorded_at INTEGER NOT NULL,
            expired_at INTEGER,
            ended_at INTEGER,
            end_reason TEXT,
            confidence REAL NOT NULL,
            decided_by TEXT NOT NULL
        );
        CREATE INDEX facts_timeline ON facts (group_id, subject_id, predicate, valid_from);
        CREATE INDEX facts_object ON facts (object_id);
        CREATE INDEX facts_group_predicate ON facts (group_id, predicate);
        CREATE TABLE fact_episodes (
            fact_id TEXT NOT NULL,
            episode_id TEXT NOT NULL,
            span TEXT,
            PRIMARY KEY (fact_id, episode_id)
        );
        CREATE INDEX fact_episodes_episode ON fact_episodes (episode_id);
        CREATE TABLE fact_links (
            kind TEXT NOT NULL CHECK (kind IN ('SUPERSEDES', 'CONTRADICTS')),
            src TEXT NOT NULL,
            dst TEXT NOT NULL,
            reason TEXT NOT NULL,
            decided_by TEXT NOT NULL,
            decided_at INTEGER NOT NULL,
            PRIMARY KEY (kind, src, dst)
        );
        CREATE INDEX fact_links_dst ON fact_links (dst, kind);
        CREATE INDEX fact_links_src ON fact_links (src, kind);
        CREATE TABLE mentions (
            episode_id TEXT NOT NULL,
            entity_id TEXT NOT NULL,
            PRIMARY KEY (episode_id, entity_id)
        );
        CREATE INDEX mentions_entity ON mentions (entity_id);
        CREATE TABLE audit_log (
            id TEXT PRIMARY KEY,
            at INTEGER NOT NULL,
            group_id TEXT NOT NULL,
            action TEXT NOT NULL,
            details TEXT NOT NULL
        );
        """,
    ),
    (
        2,
        "full-text indexes (FTS5, kept in sync by triggers)",
        """
        CREATE VIRTUAL TABLE facts_fts USING fts5(
            statement, content='facts', content_rowid='rowid', tokenize='porter unicode61');
        CREATE TRIGGER facts_fts_ai AFTER INSERT ON facts BEGIN
            INSERT INTO facts_fts(rowid, statement) VALUES (new.rowid, new.statement);
        END;
        CREATE TRIGGER facts_fts_ad AFTER DELETE ON facts BEGIN
            INSERT INTO facts_fts(facts_fts, rowid, statement)
            VALUES ('delete', old.rowid, old.statement);
        END;
        CREATE TRIGGER facts_fts_au AFTER UPDATE OF statement ON facts BEGIN
            INSERT INTO facts_fts(facts_fts, rowid, statement)
            VALUES ('delete', old.rowid, old.statement);
            INSERT INTO facts_fts(rowid, statement) VALUES (new.rowid, new.statement);
        END;
        CREATE VIRTUAL TABLE entities_fts USING fts5(
            search_text, content='entities', content_rowid='rowid', tokenize='unicode61');
        CREATE TRIGGER entities_fts_ai AFTER INSERT ON entities BEGIN
            INSERT INTO entities_fts(rowid, search_text) VALUES (new.rowid, new.search_text);
        END;
        CREATE TRIGGER entities_fts_ad AFTER DELETE ON entities BEGIN
            INSERT INTO entities_fts(entities_fts, rowid, search_text)
            VALUES ('delete', old.rowid, old.search_text);
        END;
        CREATE TRIGGER entities_fts_au AFTER UPDATE OF search_text ON entities BEGIN
            INSERT INTO entities_fts(entities_fts, rowid, search_text)
            VALUES ('delete', old.rowid, old.search_text);
            INSERT INTO entities_fts(rowid, search_text) VALUES (new.rowid, new.search_text);
        END;
        CREATE VIRTUAL TABLE episodes_fts USING fts5(
            content, content='episodes', content_rowid='rowid', tokenize='porter unicode61');
        CREATE TRIGGER episodes_fts_ai AFTER INSERT ON episodes BEGIN
            INSERT INTO episodes_fts(rowid, content) VALUES (new.rowid, new.content);
        END;
        CREATE TRIGGER episodes_fts_ad AFTER DELETE ON episodes BEGIN
            INSERT INTO episodes_fts(episodes_fts, rowid, content)
            VALUES ('delete', old.rowid, old.content);
        END;
        """,
    ),
    (
        3,
        "claims on provenance, negations as fact_endings (timelines rebuilt on forget)",
        """
        ALTER TABLE fact_episodes ADD COLUMN claim TEXT;
        CREATE TABLE fact_endings (
            fact_id TEXT NOT NULL,
            episode_id TEXT NOT NULL,
            span TEXT,
            claim TEXT,
            PRIMARY KEY (fact_id, episode_id)
        );
        CREATE INDEX fact_endings_episode ON fact_endings (episode_id);
        """,
    ),
    (
        4,
        "episode embeddings; full-text and vector search inside one group",
        # Each row's group as one token (its hex, ending in a digit so no stemmer touches it) in
        # a second full-text column: a query ANDs it in, so the index itself returns the group's
        # rows only and a query's cost follows the group, not the store. (group_id) indexes give
        # the vector caches and speaker lists a group's rows in rowid order.
        """
        ALTER TABLE episodes ADD COLUMN embedding BLOB;
        ALTER TABLE facts ADD COLUMN fts_group TEXT
            GENERATED ALWAYS AS ('g' || hex(group_id) || '0') VIRTUAL;
        CREATE INDEX facts_group ON facts (group_id);
        ALTER TABLE entities ADD COLUMN fts_group TEXT
            GENERATED ALWAYS AS ('g' || hex(group_id) || '0') VIRTUAL;
        CREATE INDEX entities_group ON entities (group_id);
        ALTER TABLE episodes ADD COLUMN fts_group TEXT
            GENERATED ALWAYS AS ('g' || hex(group_id) || '0') VIRTUAL;
        CREATE INDEX episodes_group ON episodes (group_id);
        CREATE INDEX episodes_group_source ON episodes (group_id, source);
        DROP TRIGGER IF EXISTS facts_fts_ai;
        DROP TRIGGER IF EXISTS facts_fts_ad;
        DROP TRIGGER IF EXISTS facts_fts_au;
        DROP TABLE facts_fts;
        CREATE VIRTUAL TABLE facts_fts USING fts5(
            statement, fts_group,
            content='facts', content_rowid='rowid', tokenize='porter unicode61');
        CREATE TRIGGER facts_fts_ai AFTER INSERT ON facts BEGIN
            INSERT INTO facts_fts(rowid, statement, fts_group)
                VALUES (new.rowid, new.statement, new.fts_group);
        END;
        CREATE TRIGGER facts_fts_ad AFTER DELETE ON facts BEGIN
            INSERT INTO facts_fts(facts_fts, rowid, statement, fts_group)
            VALUES ('delete', old.rowid, old.statement, old.fts_group);
        END;
        CREATE TRIGGER facts_fts_au AFTER UPDATE OF statement ON facts BEGIN
            INSERT INTO facts_fts(facts_fts, rowid, statement, fts_group)
            VALUES ('delete', old.rowid, old.statement, old.fts_group);
            INSERT INTO facts_fts(rowid, statement, fts_group)
                VALUES (new.rowid, new.statement, new.fts_group);
        END;
        INSERT INTO facts_fts(facts_fts) VALUES ('rebuild');
        DROP TRIGGER IF EXISTS entities_fts_ai;
        DROP TRIGGER IF EXISTS entities_fts_ad;
        DROP TRIGGER IF EXISTS entities_fts_au;
        DROP TABLE entities_fts;
        CREATE VIRTUAL TABLE entities_fts USING fts5(
            search_text, fts_group,
            content='entities', content_rowid='rowid', tokenize='unicode61');
        CREATE TRIGGER entities_fts_ai AFTER INSERT ON entities BEGIN
            INSERT INTO entities_fts(rowid, search_text, fts_group)
                VALUES (new.rowid, new.search_text, new.fts_group);
        END;
        CREATE TRIGGER entities_fts_ad AFTER DELETE ON entities BEGIN
            INSERT INTO entities_fts(entities_fts, rowid, search_text, fts_group)
            VALUES ('delete', old.rowid, old.search_text, old.fts_group);
        END;
        CREATE TRIGGER entities_fts_au AFTER UPDATE OF search_text ON entities BEGIN
            INSERT INTO entities_fts(entities_fts, rowid, search_text, fts_group)
            VALUES ('delete', old.rowid, old.search_text, old.fts_group);
            INSERT INTO entities_fts(rowid, search_text, fts_group)
                VALUES (new.rowid, new.search_text, new.fts_group);
        END;
        INSERT INTO entities_fts(entities_fts) VALUES ('rebuild');
        DROP TRIGGER IF EXISTS episodes_fts_ai;
        DROP TRIGGER IF EXISTS episodes_fts_ad;
        DROP TRIGGER IF EXISTS episodes_fts_au;
        DROP TABLE episodes_fts;
        CREATE VIRTUAL TABLE episodes_fts USING fts5(
            content, fts_group,
            content='episodes', content_rowid='rowid', tokenize='porter unicode61');
        CREATE TRIGGER episodes_fts_ai AFTER INSERT ON episodes BEGIN
            INSERT INTO episodes_fts(rowid, content, fts_group)
                VALUES (new.rowid, new.content, new.fts_group);
        END;
        CREATE TRIGGER episodes_fts_ad AFTER DELETE ON episodes BEGIN
            INSERT INTO episodes_fts(episodes_fts, rowid, content, fts_group)
            VALUES ('delete', old.rowid, old.content, old.fts_group);
        END;
        INSERT INTO episodes_fts(episodes_fts) VALUES ('rebuild');
        """,
    ),
    (
        5,
        "episodes by kind (experience recall); object index without literal facts",
        # A literal fact has no object, so the object index only holds the facts that have one.
        """
        CREATE INDEX episodes_group_kind ON episodes (group_id, kind);
        DROP INDEX facts_object;
        CREATE INDEX facts_object ON facts (object_id) WHERE object_id IS NOT NULL;
        """,
    ),
    (
        6,
        "experience index: time, success, text terms and field values per attempt",
        # Kept beside each experience episode and read back by column, so a new process ranks
        # a group's attempts without parsing their records. ``seq`` is never reused
        # (AUTOINCREMENT): a reader holding rows up to a seq reads only what came after.
        # Values and terms are clustered by (group, path or term, seq): one column of a group
        # is one range read. Deleting an episode deletes its entry (triggers), so forget and
        # purge leave nothing of it behind. ``experience_groups`` counts each group's experience
        # episodes and entries (triggers): one row tells a reader what changed. Entries are
        # written by graphmem with the episode; attempts stored before this migration (counted
        # here) are indexed by the first recall of their group.
        """
        CREATE TABLE experiences (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            episode_id TEXT NOT NULL UNIQUE,
            group_id TEXT NOT NULL,
            at INTEGER NOT NULL,
            success INTEGER NOT NULL,
            length INTEGER NOT NULL,
            paths TEXT NOT NULL,
            terms TEXT NOT NULL
        );
        CREATE INDEX experiences_group ON experiences (group_id, seq, at, success, length);
        CREATE TABLE experience_values (
            group_id TEXT NOT NULL,
            path TEXT NOT NULL,
            seq INTEGER NOT NULL,
            data NOT NULL,
            PRIMARY KEY (group_id, path, seq)
        ) WITHOUT ROWID;
        CREATE TABLE experience_terms (
            group_id TEXT NOT NULL,
            term TEXT NOT NULL,
            seq INTEGER NOT NULL,
            tf INTEGER NOT NULL,
            PRIMARY KEY (group_id, term, seq)
        ) WITHOUT ROWID;
        CREATE TABLE experience_groups (
            group_id TEXT PRIMARY KEY,
            episodes INTEGER NOT NULL DEFAULT 0,
            indexed INTEGER NOT NULL DEFAULT 0
        );
        INSERT INTO experience_groups (group_id, episodes)
            SELECT group_id, count(*) FROM episodes WHERE kind = 'experience' GROUP BY group_id;
        CREATE TRIGGER experience_groups_episode_ai AFTER INSERT ON episodes
        WHEN new.kind = 'experience' BEGIN
            INSERT INTO experience_groups (group_id, episodes) VALUES (new.group_id, 1)
                ON CONFLICT (group_id) DO UPDATE SET episodes = episodes + 1;
        END;
        CREATE TRIGGER experiences_episode_ad AFTER DELETE ON episodes
        WHEN old.kind = 'experience' BEGIN
            UPDATE experience_groups SET episodes = episodes - 1 WHERE group_id = old.group_id;
            DELETE FROM experiences WHERE episode_id = old.id;
            DELETE FROM experience_groups
                WHERE group_id = old.group_id AND episodes <= 0 AND indexed <= 0;
        END;
        CREATE TRIGGER experiences_ai AFTER INSERT ON experiences BEGIN
            UPDATE experience_groups SET indexed = indexed + 1 WHERE group_id = new.group_id;
        END;
        CREATE TRIGGER experiences_ad AFTER DELETE ON experiences BEGIN
            UPDATE experience_groups SET indexed = indexed - 1 WHERE group_id = old.group_id;
            DELETE FROM experience_values WHERE group_id = old.group_id
                AND path IN (SELECT value FROM json_each(old.paths)) AND seq = old.seq;
            DELETE FROM experience_terms WHERE group_id = old.group_id
                AND term IN (SELECT key FROM json_each(old.terms)) AND seq = old.seq;
        END;
        """,
    ),
    (
        7,
        "experience packs: a group's index columns as packed blobs for a new process",
        # A derived copy of a group's columns (rows, one path's values, one term's postings)
        # up to a seq, packed as a few blobs, written by a reader that has just read many rows
        # one by one, so the next new process reads one blob instead. Removing an entry drops
        # its group's packs and moves ``experience_removals``: a reader that began before a
        # removal writes no pack (it checks the count has not moved), so a pack never holds an
        # attempt that is gone.
        """
        CREATE TABLE experience_packs (
            group_id TEXT NOT NULL,
            name TEXT NOT NULL,
            upto INTEGER NOT NULL,
            seqs BLOB NOT NULL,
            sizes BLOB NOT NULL,
            data BLOB NOT NULL,
            PRIMARY KEY (group_id, name)
        );
        CREATE TABLE experience_removals (
            id INTEGER PRIMARY KEY CHECK (id = 0),
            removed INTEGER NOT NULL
        );
        INSERT INTO experience_removals VALUES (0, 0);
        CREATE TRIGGER experiences_packs_ad AFTER DELETE ON experiences BEGIN
            UPDATE experience_removals SET removed = removed + 1 WHERE id = 0;
            DELETE FROM experience_packs WHERE group_id = old.group_id;
        END;
        """,
    ),
    (
        8,
        "links between turns (UPDATES) and each turn's link terms",
        # A turn's link terms (with its stated time ``at``: a new turn reads the nearest turns
        # of each term, not all of them) find the turns it may update
        # (``reconcile/turn_links.py``); the links say which later turn states a new value of
        # what an earlier one stated. Deleting an episode deletes both (trigger), so forget and
        # purge leave nothing of it behind.
        # Turns stored before this migration have no terms: they link from their next
        # reprocess on.
        """
        CREATE TABLE episode_terms (
            group_id TEXT NOT NULL,
            term TEXT NOT NULL,
            at INTEGER NOT NULL,
            episode_id TEXT NOT NULL,
            PRIMARY KEY (group_id, term, at, episode_id)
        ) WITHOUT ROWID;
        CREATE INDEX episode_terms_episode ON episode_terms (episode_id);
        CREATE TABLE episode_links (
            kind TEXT NOT NULL,
            src TEXT NOT NULL,
            dst TEXT NOT NULL,
            group_id TEXT NOT NULL,
            reason TEXT NOT NULL,
            terms TEXT NOT NULL,
            decided_at INTEGER NOT NULL,
            PRIMARY KEY (kind, src, dst)
        ) WITHOUT ROWID;
        CREATE INDEX episode_links_dst ON episode_links (dst);
        CREATE INDEX episode_links_src ON episode_links (src);
        CREATE TRIGGER episode_links_episode_ad AFTER DELETE ON episodes BEGIN
            DELETE FROM episode_terms WHERE episode_id = old.id;
            DELETE FROM episode_links WHERE src = old.id OR dst = old.id;
        END;
        """,
    ),
]


# ---------------------------------------------------------------------- running them
def migrate(db: SQLiteDB) -> list[str]:
    """Apply the pending migrations, each in its own transaction; a read-only store is only
    checked (``SchemaError`` unless it is up to date). Returns what was applied."""
    applied: list[str] = []
    with db.lock:
        conn = db.conn
        if db.read_only:
            _check_migrated_read_only(db, conn)
            return applied
        conn.execute(
            "CREATE TABLE IF NOT EXISTS graphmem_migrations ("
            "version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)"
        )
        done = {row[0] for row in conn.execute("SELECT version FROM graphmem_migrations")}
        newest = max(version for version, _, _ in MIGRATIONS)
        if done and max(done) > newest:
            raise SchemaError(
                f"{db.path} was written by a newer graphmem (schema v{max(done)}, "
                f"this one knows v{newest}); upgrade graphmem"
            )
        if any(version not in done for version, _, _ in MIGRATIONS):
            # The vocabulary views read the full-text tables a migration may rebuild.
            for table in ("facts", "entities", "episodes"):
                conn.execute(f"DROP TABLE IF EXISTS temp.{table}_vocab")
        for version, name, sql in MIGRATIONS:
            if version in done:
                continue
            try:
                conn.execute("BEGIN IMMEDIATE")
                for statement in _split_sql(sql):
                    conn.execute(statement)
                conn.execute(
                    "INSERT INTO graphmem_migrations VALUES (?, ?, ?)",
                    (version, name, to_ms(utcnow())),
                )
                conn.execute("COMMIT")
            except sqlite3.Error as exc:
                conn.execute("ROLLBACK")
                raise SchemaError(f"migration {version} ({name}) failed: {exc}") from exc
            applied.append(f"{version}: {name}")
        create_vocab_tables(conn)
    return applied


def _check_migrated_read_only(db: SQLiteDB, conn: sqlite3.Connection) -> None:
    """A read-only store cannot be migrated: ``SchemaError`` unless it is up to date."""
    try:
        done = {row[0] for row in conn.execute("SELECT version FROM graphmem_migrations")}
    except sqlite3.OperationalError:
        done = set()
    newest = max(version for version, _, _ in MIGRATIONS)
    if done and max(done) > newest:
        raise SchemaError(
            f"{db.path} was written by a newer graphmem (schema v{max(done)}, "
            f"this one knows v{newest}); upgrade graphmem"
        )
    pending = [version for version, _, _ in MIGRATIONS if version not in done]
    if pending:
        raise SchemaError(
            f"{db.path} needs migrations {pending} but is read-only: migrating it needs "
            f"{db.writes_need} (graphmem db migrate)"
        )


def migration_status(db: SQLiteDB) -> list[MigrationInfo]:
    with db.lock:
        try:
            rows = dict(
                db.conn.execute("SELECT version, applied_at FROM graphmem_migrations")
            )
        except sqlite3.OperationalError:
            rows = {}
    newest = max(version for version, _, _ in MIGRATIONS)
    if rows and max(rows) > newest:
        # Listing the migrations this graphmem knows would say "up to date" of a store it
        # cannot read.
        raise SchemaError(
            f"{db.path} was written by a newer graphmem (schema v{max(rows)}, this one knows "
            f"v{newest}); upgrade graphmem"
        )
    return [MigrationInfo(v, name, rows.get(v)) for v, name, _ in MIGRATIONS]


def _split_sql(script: str) -> list[str]:
    """Split a migration into statements; trigger bodies keep their inner semicolons."""
    statements: list[str] = []
    buffer = ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            if buffer.strip():
                statements.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        statements.append(buffer.strip())
    return statements

