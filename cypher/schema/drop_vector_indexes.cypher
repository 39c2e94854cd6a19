// Neo4j: drop the vector indexes so that they can be rebuilt for another embedding size (only
// while no node holds an embedding), or replaced by the filtered ones of Neo4j 2026.01+.
// ArcadeDB: the dialect drops them with SQL.
DROP INDEX graphmem_fact_embedding IF EXISTS
// ---
DROP INDEX graphmem_entity_embedding IF EXISTS
// ---
DROP INDEX graphmem_episode_embedding IF EXISTS
