// Vector indexes (Neo4j), created once the embedder's dimension ($dimensions) is known.
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
