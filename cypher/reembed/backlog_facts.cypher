// Moving to another embedder: facts not staged yet (those that hold a vector), in id order.
MATCH (n:Fact)
WHERE n.embedding_next IS NULL AND n.embedding IS NOT NULL
RETURN n.id AS id, n.statement AS text, null AS kind
ORDER BY n.id
LIMIT $limit
