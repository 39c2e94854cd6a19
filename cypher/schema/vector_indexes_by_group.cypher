// Vector indexes with group_id as a filter property (Neo4j 2026.01+, Cypher 25), so that a
// search keeps to one group inside the index (search/vector_by_group_*). Created once the
// embedder's dimension ($dimensions) is known; the dialect then drops the unfiltered ones.
// Each statement sent starts with CYPHER 25 (so the header is a piece of its own).
// ---
CYPHER 25
CREATE VECTOR INDEX graphmem_fact_embedding_by_group IF NOT EXISTS
FOR (f:Fact) ON f.embedding
WITH [f.group_id]
OPTIONS {indexConfig: {
  `vector.dimensions`: toInteger($dimensions),
  `vector.similarity_function`: 'cosine'
}}
// ---
CYPHER 25
CREATE VECTOR INDEX graphmem_entity_embedding_by_group IF NOT EXISTS
FOR (e:Entity) ON e.embedding
WITH [e.group_id]
OPTIONS {indexConfig: {
  `vector.dimensions`: toInteger($dimensions),
  `vector.similarity_function`: 'cosine'
}}
// ---
CYPHER 25
CREATE VECTOR INDEX graphmem_episode_embedding_by_group IF NOT EXISTS
FOR (e:Episode) ON e.embedding
WITH [e.group_id]
OPTIONS {indexConfig: {
  `vector.dimensions`: toInteger($dimensions),
  `vector.similarity_function`: 'cosine'
}}
