UNWIND $ids AS id
MATCH (e:Entity {id: id})
WHERE e.group_id = $group_id
RETURN e.id AS id, e.name AS name, e.type AS type, e.aliases AS aliases, e.summary AS summary
