// Moving to another embedder: episodes not staged yet (those that hold a vector, and the
// extracted episodes that hold none but add_fact's own), in id order.
MATCH (n:Episode)
WHERE n.embedding_next IS NULL AND (n.embedding IS NOT NULL OR (n.status = 'extracted' AND coalesce(n.extractor, '') <> 'direct'))
RETURN n.id AS id, n.content AS text, n.kind AS kind
ORDER BY n.id
LIMIT $limit
