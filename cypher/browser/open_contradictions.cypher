// graphmem: open contradictions (both facts still believed and still valid).
// :param group_id => 'default'
MATCH conflict = (a:Fact)-[:CONTRADICTS]->(b:Fact)
WHERE a.group_id = $group_id AND a.expired_at IS NULL AND b.expired_at IS NULL
  AND (a.valid_to IS NULL OR a.valid_to > timestamp())
  AND (b.valid_to IS NULL OR b.valid_to > timestamp())
MATCH about = (:Entity)-[:SUBJECT_OF]->(a)
RETURN conflict, about
LIMIT 100
