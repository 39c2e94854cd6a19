// Migration 3 (Neo4j): full-text indexes. ArcadeDB refuses CREATE FULLTEXT INDEX; its
// dialect creates the same indexes with SQL over HTTP (graphmem/store/_neo4j_dialect.py).
// Statements and episodes are stemmed like SQLite's porter FTS5 tables; entity names are not.
CREATE FULLTEXT INDEX graphmem_fact_statement IF NOT EXISTS
FOR (f:Fact) ON EACH [f.statement]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}}
// ---
CREATE FULLTEXT INDEX graphmem_entity_names IF NOT EXISTS
FOR (e:Entity) ON EACH [e.name, e.alias_text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'standard-no-stop-words'}}
// ---
CREATE FULLTEXT INDEX graphmem_episode_content IF NOT EXISTS
FOR (e:Episode) ON EACH [e.content]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}}
