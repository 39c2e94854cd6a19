UNWIND $rows AS r
MATCH (f:Fact {id: r.id})
MATCH (o:Entity {id: r.object_id})
MERGE (f)-[:OBJECT]->(o)
