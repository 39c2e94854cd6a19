// FROM_EPISODE provenance with the episode's claim (JSON); an existing link keeps its own.
UNWIND $rows AS r
MATCH (f:Fact {id: r.fact_id})
MATCH (e:Episode {id: r.episode_id})
MERGE (f)-[p:FROM_EPISODE]->(e)
ON CREATE SET p.span = r.span, p.seq = r.seq, p.claim = r.claim
