UNWIND $ids AS id
MATCH (e:Episode {id: id})
DETACH DELETE e
