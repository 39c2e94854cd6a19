// Moving to another embedder: new vectors of entities, beside the ones searches still use.
UNWIND $rows AS r
MATCH (n:Entity {id: r.id})
SET n.embedding_next = r.embedding
