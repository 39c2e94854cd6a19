// Moving to another embedder: entities not staged yet (those that hold a vector), in id order.
MATCH (n:Entity)
WHERE n.embedding_next IS NULL AND n.embedding IS NOT NULL
RETURN n.id AS id, n.name AS text, null AS kind
ORDER BY n.id
LIMIT $limit
