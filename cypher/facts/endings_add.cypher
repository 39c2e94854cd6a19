// ENDED_BY: the episode whose negation ended the fact, with its claim (JSON).
UNWIND $rows AS r
MATCH (f:Fact {id: r.fact_id})
MATCH (e:Episode {id: r.episode_id})
MERGE (f)-[p:ENDED_BY]->(e)
ON CREATE SET p.span = r.span, p.seq = r.seq, p.claim = r.claim
