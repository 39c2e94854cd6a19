// New facts (reified: a node per fact) with their SUBJECT_OF and OBJECT links; r.props holds
// each fact's properties (subject_id, object_id and the group_token that scopes full-text
// search to the group among them).
UNWIND $rows AS r
CREATE (f:Fact)
SET f = r.props
WITH f
OPTIONAL MATCH (s:Entity {id: f.subject_id})
FOREACH (subject IN CASE WHEN s IS NULL THEN [] ELSE [s] END |
  MERGE (subject)-[:SUBJECT_OF]->(f))
WITH f
OPTIONAL MATCH (o:Entity {id: f.object_id})
FOREACH (object IN CASE WHEN o IS NULL THEN [] ELSE [o] END |
  MERGE (f)-[:OBJECT]->(object))
