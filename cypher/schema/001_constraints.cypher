// Migration 1: uniqueness constraints (each also gives the lookups by id an index).
// Only IS UNIQUE: ArcadeDB ignores IS NODE KEY and enforces IS NOT NULL (Enterprise-only on
// Neo4j), so neither is used.
CREATE CONSTRAINT graphmem_episode_id IF NOT EXISTS
FOR (e:Episode) REQUIRE e.id IS UNIQUE
// ---
CREATE CONSTRAINT graphmem_fact_id IF NOT EXISTS
FOR (f:Fact) REQUIRE f.id IS UNIQUE
// ---
CREATE CONSTRAINT graphmem_entity_id IF NOT EXISTS
FOR (e:Entity) REQUIRE e.id IS UNIQUE
// ---
CREATE CONSTRAINT graphmem_entity_key IF NOT EXISTS
FOR (e:Entity) REQUIRE (e.group_id, e.key, e.type) IS UNIQUE
// ---
CREATE CONSTRAINT graphmem_entity_alias IF NOT EXISTS
FOR (a:EntityAlias) REQUIRE (a.group_id, a.key, a.entity_id) IS UNIQUE
// ---
CREATE CONSTRAINT graphmem_audit_id IF NOT EXISTS
FOR (a:AuditRecord) REQUIRE a.id IS UNIQUE
// ---
CREATE CONSTRAINT graphmem_meta_key IF NOT EXISTS
FOR (m:GraphmemMeta) REQUIRE m.key IS UNIQUE
// ---
CREATE CONSTRAINT graphmem_migration_version IF NOT EXISTS
FOR (m:GraphmemMigration) REQUIRE m.version IS UNIQUE
// ---
CREATE CONSTRAINT graphmem_lock_name IF NOT EXISTS
FOR (l:GraphmemLock) REQUIRE l.name IS UNIQUE
