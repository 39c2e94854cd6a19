UNWIND $ids AS id
MATCH (e:Entity {id: id})
RETURN e.id AS id
