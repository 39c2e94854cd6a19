// Moving to another embedder: new vectors of facts, beside the ones searches still use.
UNWIND $rows AS r
MATCH (n:Fact {id: r.id})
SET n.embedding_next = r.embedding
