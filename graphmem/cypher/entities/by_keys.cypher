// Entities of a group whose key, or one of whose alias keys, is in $keys. Lookups take their
// value from UNWIND in an inline property map: ArcadeDB then uses the index (it scans for
// `WHERE e.key IN $keys`), and Neo4j plans both forms the same.
UNWIND $keys AS key
MATCH (e:Entity {key: key})
WHERE e.group_id = $group_id
RETURN properties(e) AS e
UNION
UNWIND $keys AS key
MATCH (a:EntityAlias {key: key})
WHERE a.group_id = $group_id
MATCH (e:Entity {id: a.entity_id})
RETURN properties(e) AS e
