// Moving to another embedder: facts staged, and facts still to embed.
MATCH (n:Fact)
WHERE n.embedding_next IS NOT NULL OR n.embedding IS NOT NULL
RETURN count(n.embedding_next) AS staged, count(n) - count(n.embedding_next) AS todo
