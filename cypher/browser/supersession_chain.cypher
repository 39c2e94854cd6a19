// graphmem: the supersession chain of a fact (newer -[:SUPERSEDES]-> older), with subjects.
// :param fact_id => 'fact_…'   (from `graphmem history` or a recall result)
MATCH (f:Fact {id: $fact_id})
MATCH chain = (f)-[:SUPERSEDES*0..50]-(:Fact)
UNWIND nodes(chain) AS link
MATCH about = (:Entity)-[:SUBJECT_OF]->(link)
RETURN chain, collect(DISTINCT about) AS subjects
