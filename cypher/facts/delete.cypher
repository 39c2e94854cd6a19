UNWIND $ids AS id
MATCH (f:Fact {id: id})
DETACH DELETE f
