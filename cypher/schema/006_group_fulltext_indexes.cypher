// Migration 6 (Neo4j): full-text indexes that hold each node's group token (group_token, a
// decimal number derived from group_id, written by the store) beside its text. A search
// requires the group's token (a zero-weight required clause), so the index itself keeps to one
// group and ranks only its rows. The store writes the tokens of older nodes before this runs.
// ArcadeDB refuses CREATE FULLTEXT INDEX; its dialect does the same with SQL over HTTP.
CREATE FULLTEXT INDEX graphmem_fact_statement_group IF NOT EXISTS
FOR (f:Fact) ON EACH [f.statement, f.group_token]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}}
// ---
CREATE FULLTEXT INDEX graphmem_entity_names_group IF NOT EXISTS
FOR (e:Entity) ON EACH [e.name, e.alias_text, e.group_token]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'standard-no-stop-words'}}
// ---
CREATE FULLTEXT INDEX graphmem_episode_content_group IF NOT EXISTS
FOR (e:Episode) ON EACH [e.content, e.group_token]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}}
// ---
DROP INDEX graphmem_fact_statement IF EXISTS
// ---
DROP INDEX graphmem_entity_names IF EXISTS
// ---
DROP INDEX graphmem_episode_content IF EXISTS
