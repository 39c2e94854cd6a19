// Moving to another embedder: entities staged, and entities still to embed.
MATCH (n:Entity)
WHERE n.embedding_next IS NOT NULL OR n.embedding IS NOT NULL
RETURN count(n.embedding_next) AS staged, count(n) - count(n.embedding_next) AS todo
