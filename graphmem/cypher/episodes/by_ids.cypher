UNWIND $ids AS id
MATCH (e:Episode {id: id})
RETURN properties(e) AS e
