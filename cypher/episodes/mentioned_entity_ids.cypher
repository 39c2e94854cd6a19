UNWIND $ids AS id
MATCH (:Episode {id: id})-[:MENTIONS]->(e:Entity)
RETURN e.id AS id
