// Migration 2: range indexes for group lookups, timelines and the temporal filters.
// No index here may touch a full-text property (Fact.statement, Entity.name,
// Entity.alias_text, Episode.content): on ArcadeDB an LSM index on a property blocks a later
// FULL_TEXT index on it.
CREATE INDEX graphmem_episode_group IF NOT EXISTS FOR (e:Episode) ON (e.group_id)
// ---
CREATE INDEX graphmem_episode_status IF NOT EXISTS FOR (e:Episode) ON (e.status)
// ---
CREATE INDEX graphmem_episode_time IF NOT EXISTS FOR (e:Episode) ON (e.reference_time)
// ---
CREATE INDEX graphmem_entity_group IF NOT EXISTS FOR (e:Entity) ON (e.group_id)
// ---
CREATE INDEX graphmem_entity_key_only IF NOT EXISTS FOR (e:Entity) ON (e.key)
// ---
CREATE INDEX graphmem_alias_key IF NOT EXISTS FOR (a:EntityAlias) ON (a.key)
// ---
CREATE INDEX graphmem_alias_entity IF NOT EXISTS FOR (a:EntityAlias) ON (a.entity_id)
// ---
CREATE INDEX graphmem_fact_group IF NOT EXISTS FOR (f:Fact) ON (f.group_id)
// ---
CREATE INDEX graphmem_fact_subject IF NOT EXISTS FOR (f:Fact) ON (f.subject_id)
// ---
CREATE INDEX graphmem_fact_object IF NOT EXISTS FOR (f:Fact) ON (f.object_id)
// ---
CREATE INDEX graphmem_fact_predicate IF NOT EXISTS FOR (f:Fact) ON (f.predicate)
// ---
CREATE INDEX graphmem_fact_valid_from IF NOT EXISTS FOR (f:Fact) ON (f.valid_from)
// ---
CREATE INDEX graphmem_fact_valid_to IF NOT EXISTS FOR (f:Fact) ON (f.valid_to)
// ---
CREATE INDEX graphmem_fact_recorded_at IF NOT EXISTS FOR (f:Fact) ON (f.recorded_at)
// ---
CREATE INDEX graphmem_fact_expired_at IF NOT EXISTS FOR (f:Fact) ON (f.expired_at)
// ---
CREATE INDEX graphmem_audit_group IF NOT EXISTS FOR (a:AuditRecord) ON (a.group_id)
