// Raw episodes, written before any extraction; an existing id is left as it is. `speaker` is
// derived from the JSON metadata (metadata.speaker, else metadata.name) for recall's speaker
// cue: Cypher cannot read JSON. `group_token` scopes full-text search to the group;
// `embedding` is null until extraction sets it, except on import. An experience carries its
// index entry (x_*, null for other kinds).
UNWIND $rows AS r
MERGE (e:Episode {id: r.id})
ON CREATE SET
  e.group_id = r.group_id, e.source = r.source, e.kind = r.kind, e.content = r.content,
  e.reference_time = r.reference_time, e.ingested_at = r.ingested_at,
  e.content_hash = r.content_hash, e.status = r.status, e.extractor = r.extractor,
  e.error = r.error, e.metadata = r.metadata, e.speaker = r.speaker, e.seq = r.seq,
  e.group_token = r.group_token, e.embedding = r.embedding,
  e.x_success = r.x_success, e.x_length = r.x_length, e.x_terms = r.x_terms,
  e.x_tfs = r.x_tfs, e.x_values = r.x_values
