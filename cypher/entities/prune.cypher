// Delete the entities left without facts or mentions; returns the ids deleted.
UNWIND $ids AS id
MATCH (e:Entity {id: id})
WHERE NOT EXISTS { (e)-[:SUBJECT_OF|OBJECT|MENTIONS]-() }
WITH e, e.id AS deleted
DETACH DELETE e
RETURN deleted
