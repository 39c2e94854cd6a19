UNWIND $ids AS id
MATCH (f:Fact {id: id})
RETURN properties(f) AS f
ORDER BY f.id
