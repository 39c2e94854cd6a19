// Neo4j 2026.01+ (Cypher 25): the $limit episodes of one group nearest to $vector, filtered by
// group inside the vector index (group_id is its filter property). The index is asked for
// $candidates (more than $limit): its graph search is more thorough, and the best $limit are kept.
// (The header is a piece of its own: the statement sent starts with CYPHER 25.)
// ---
CYPHER 25
MATCH (n:Episode)
  SEARCH n IN (
    VECTOR INDEX graphmem_episode_embedding_by_group
    FOR $vector
    WHERE n.group_id = $group_id
    LIMIT $candidates
  ) SCORE AS score
RETURN n.id AS id, score
ORDER BY score DESC
LIMIT $limit
