// Neo4j 2026.01+: drop the group-filtered vector indexes so that they can be rebuilt for
// another embedding size (only while no node holds an embedding).
DROP INDEX graphmem_fact_embedding_by_group IF EXISTS
// ---
DROP INDEX graphmem_entity_embedding_by_group IF EXISTS
// ---
DROP INDEX graphmem_episode_embedding_by_group IF EXISTS
