// graphmem: current facts about an entity (as subject or object).
// :param group_id => 'default'
// :param name => 'Alice'
MATCH (e:Entity)
WHERE e.group_id = $group_id AND (e.name = $name OR e.key = toLower(trim($name)))
MATCH (e)-[:SUBJECT_OF|OBJECT]-(f:Fact)
WHERE f.expired_at IS NULL AND f.valid_from <= timestamp()
  AND (f.valid_to IS NULL OR f.valid_to > timestamp())
MATCH about = (:Entity)-[:SUBJECT_OF]->(f)
OPTIONAL MATCH target = (f)-[:OBJECT]->(:Entity)
RETURN about, target
