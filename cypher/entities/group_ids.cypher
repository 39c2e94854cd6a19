MATCH (e:Entity)
WHERE e.group_id = $group_id
RETURN e.id AS id
