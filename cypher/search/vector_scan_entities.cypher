// Exact cosine top $limit of one group's entities: the group's rows come from its group_id index
// and no other group's row is read. At most $scan_limit rows are scored; `scanned` tells
// whether the group had more (then the store searches the vector index instead). A zero
// vector has no cosine (Neo4j's function does not take it; the vector indexes skip it): skipped, at
// the cost of one element read for any other vector.
MATCH (n:Entity)
WHERE n.group_id = $group_id AND n.embedding IS NOT NULL
  AND (n.embedding[0] <> 0.0 OR any(x IN n.embedding WHERE x <> 0.0))
WITH n
LIMIT $scan_limit
WITH n.id AS id, vector.similarity.cosine(n.embedding, $vector) AS score
ORDER BY score DESC
WITH collect([id, score]) AS ranked
RETURN size(ranked) AS scanned, ranked[..$limit] AS hits
