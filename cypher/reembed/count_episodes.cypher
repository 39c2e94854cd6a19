// Moving to another embedder: episodes staged, and episodes still to embed.
MATCH (n:Episode)
WHERE n.embedding_next IS NOT NULL OR (n.embedding IS NOT NULL OR (n.status = 'extracted' AND coalesce(n.extractor, '') <> 'direct'))
RETURN count(n.embedding_next) AS staged, count(n) - count(n.embedding_next) AS todo
