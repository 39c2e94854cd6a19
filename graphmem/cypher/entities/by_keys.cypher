// Entities of a group whose key, or one of whose alias keys, is in $keys.
MATCH (e:Entity)
WHERE e.key IN $keys AND e.group_id = $group_id
RETURN properties(e) AS e
UNION
MATCH (a:EntityAlias)
WHERE a.key IN $keys AND a.group_id = $group_id
MATCH (e:Entity {id: a.entity_id})
RETURN properties(e) AS e
