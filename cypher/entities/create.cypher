// New entities; one that exists with the same (group_id, key, type) is left as it is.
// `group_token` scopes full-text search to the group.
UNWIND $rows AS r
MERGE (e:Entity {group_id: r.group_id, key: r.key, type: r.type})
ON CREATE SET
  e.id = r.id, e.name = r.name, e.aliases = r.aliases, e.alias_text = r.alias_text,
  e.summary = r.summary, e.embedding = r.embedding, e.created_at = r.created_at,
  e.attributes = r.attributes, e.seq = r.seq, e.group_token = r.group_token
