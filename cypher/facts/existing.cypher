UNWIND $ids AS id
MATCH (f:Fact {id: id})
RETURN f.id AS id
