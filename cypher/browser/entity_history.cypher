// graphmem: an entity's history: every fact about it (still believed or superseded), the
// SUPERSEDES links between them and the episodes each fact came from.
// :param group_id => 'default'
// :param name => 'Alice'
MATCH (e:Entity)
WHERE e.group_id = $group_id AND (e.name = $name OR e.key = toLower(trim($name)))
MATCH about = (e)-[:SUBJECT_OF]->(f:Fact)
OPTIONAL MATCH replaced = (f)-[:SUPERSEDES]->(:Fact)
OPTIONAL MATCH source = (f)-[:FROM_EPISODE]->(:Episode)
RETURN about, replaced, source
