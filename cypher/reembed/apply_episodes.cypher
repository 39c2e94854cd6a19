// Moving to another embedder: a batch of staged episodes vectors swapped in ($apply) or
// dropped (an unfinished move given up); returns how many were touched.
MATCH (n:Episode)
WHERE n.embedding_next IS NOT NULL
WITH n LIMIT $limit
SET n.embedding = CASE WHEN $apply THEN n.embedding_next ELSE n.embedding END
REMOVE n.embedding_next
RETURN count(n) AS moved
