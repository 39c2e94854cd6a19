// Entities of a group whose key, or one of whose alias keys, is in $keys. Each lookup matches
// group_id and key together, so it seeks the (group_id, key) indexes of migration 7 and reads
// only the group's rows, however many other groups share the name. Values come from UNWIND
// and $group_id in an inline property map: ArcadeDB uses an index only for that form (it scans
// for `WHERE e.key IN $keys`), and Neo4j plans both forms the same.
UNWIND $keys AS key
MATCH (e:Entity {group_id: $group_id, key: key})
RETURN properties(e) AS e
UNION
UNWIND $keys AS key
MATCH (a:EntityAlias {group_id: $group_id, key: key})
MATCH (e:Entity {id: a.entity_id})
WHERE e.group_id = $group_id
RETURN properties(e) AS e
