// The provenance (FROM_EPISODE) and ending (ENDED_BY) rows of facts, in the order written.
UNWIND $ids AS id
MATCH (f:Fact {id: id})-[p:FROM_EPISODE|ENDED_BY]->(e:Episode)
RETURN type(p) AS kind, f.id AS fact_id, e.id AS episode_id, p.span AS span, p.claim AS claim
ORDER BY p.seq
