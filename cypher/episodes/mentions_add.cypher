UNWIND $rows AS r
MATCH (e:Episode {id: r.episode_id})
MATCH (x:Entity {id: r.entity_id})
MERGE (e)-[m:MENTIONS]->(x)
ON CREATE SET m.seq = r.seq
