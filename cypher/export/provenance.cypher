MATCH (f:Fact)-[p:FROM_EPISODE]->(e:Episode)
WHERE $group_id IS NULL OR f.group_id = $group_id
RETURN f.id AS fact_id, e.id AS episode_id, p.span AS span, p.claim AS claim
ORDER BY p.seq
