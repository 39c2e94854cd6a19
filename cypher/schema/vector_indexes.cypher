// Vector indexes (Neo4j 5 / 2025), created once the embedder's dimension ($dimensions) is known.
// They cannot filter: the store scans a small group's vectors exactly (search/vector_scan_*)
// and searches a large group here, widening until it has n of the group (search/vector).
// ArcadeDB refuses CREATE VECTOR INDEX; its dialect uses SQL over HTTP instead.
CREATE VECTOR INDEX graphmem_fact_embedding IF NOT EXISTS
FOR (f:Fact) ON (f.embedding)
OPTIONS {indexConfig: {
  `vector.dimensions`: toInteger($dimensions),
  `vector.similarity_function`: 'cosine'
}}
// ---
CREATE VECTOR INDEX graphmem_entity_embedding IF NOT EXISTS
FOR (e:Entity) ON (e.embedding)
OPTIONS {indexConfig: {
  `vector.dimensions`: toInteger($dimensions),
  `vector.similarity_function`: 'cosine'
}}
// ---
CREATE VECTOR INDEX graphmem_episode_embedding IF NOT EXISTS
FOR (e:Episode) ON (e.embedding)
OPTIONS {indexConfig: {
  `vector.dimensions`: toInteger($dimensions),
  `vector.similarity_function`: 'cosine'
}}
