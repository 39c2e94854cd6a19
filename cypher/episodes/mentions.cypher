// (episode id, entity id) for each entity these episodes mention (MENTIONS).
UNWIND $ids AS id
MATCH (e:Episode {id: id})-[:MENTIONS]->(n:Entity)
RETURN e.id AS episode_id, n.id AS entity_id
ORDER BY episode_id, entity_id
