// Migration 7: entity names and alias keys are looked up inside one group. Composite range
// indexes on (group_id, key) let entities/by_keys seek a group's names directly; the key-only
// indexes of migration 2 (store-wide: their cost grew with the number of groups sharing a
// name) are dropped. The uniqueness constraints of migration 1 stay as they are. The same
// Cypher DDL runs on Neo4j 5 and on ArcadeDB (which names these indexes as given here).
CREATE INDEX graphmem_entity_group_key IF NOT EXISTS
FOR (e:Entity) ON (e.group_id, e.key)
// ---
CREATE INDEX graphmem_alias_group_key IF NOT EXISTS
FOR (a:EntityAlias) ON (a.group_id, a.key)
// ---
DROP INDEX graphmem_entity_key_only IF EXISTS
// ---
DROP INDEX graphmem_alias_key IF EXISTS
