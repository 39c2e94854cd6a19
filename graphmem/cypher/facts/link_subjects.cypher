UNWIND $rows AS r
MATCH (f:Fact {id: r.id})
MATCH (s:Entity {id: r.subject_id})
MERGE (s)-[:SUBJECT_OF]->(f)
