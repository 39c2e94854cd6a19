UNWIND $ids AS id
MATCH (e:Entity {id: id})
DETACH DELETE e
