// Facts of a group (optionally one predicate, optionally valid in a view), oldest first.
MATCH (f:Fact)
WHERE f.group_id = $group_id
  AND ($predicate IS NULL OR f.predicate = $predicate)
  AND ($at IS NULL
   OR (f.recorded_at <= $known AND (f.expired_at IS NULL OR f.expired_at > $known)
       AND f.valid_from <= $at
       AND (f.valid_to IS NULL OR f.valid_to > $at OR (f.ended_at IS NOT NULL AND f.ended_at > $known))))
MATCH (s:Entity)-[:SUBJECT_OF]->(f)
OPTIONAL MATCH (f)-[:OBJECT]->(o:Entity)
CALL (f) {
  OPTIONAL MATCH (n:Fact)-[l:SUPERSEDES]->(f)
  RETURN n.id AS superseded_by, l.reason AS superseded_reason
  ORDER BY l.decided_at DESC
  LIMIT 1
}
RETURN f {
         .id, .group_id, .subject_id, .predicate, .object_id, .value_json, .statement,
         .valid_from, .valid_to, .recorded_at, .expired_at, .ended_at, .end_reason,
         .confidence, .decided_by, .seq
       } AS f,
       s.name AS subject_name, o.name AS object_name,
       COLLECT { MATCH (f)-[:FROM_EPISODE]->(e:Episode) RETURN e.id } AS episode_ids,
       superseded_by, superseded_reason
ORDER BY f.valid_from, f.recorded_at, f.seq
