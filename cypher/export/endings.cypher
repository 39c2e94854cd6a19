MATCH (f:Fact)-[p:ENDED_BY]->(e:Episode)
WHERE $group_id IS NULL OR f.group_id = $group_id
RETURN f.id AS fact_id, e.id AS episode_id, p.span AS span, p.claim AS claim
ORDER BY p.seq
