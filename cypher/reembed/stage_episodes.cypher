// Moving to another embedder: new vectors of episodes, beside the ones searches still use.
UNWIND $rows AS r
MATCH (n:Episode {id: r.id})
SET n.embedding_next = r.embedding
