MATCH (e:Episode)-[m:MENTIONS]->(x:Entity)
WHERE $group_id IS NULL OR e.group_id = $group_id
RETURN e.id AS episode_id, x.id AS entity_id
ORDER BY m.seq
