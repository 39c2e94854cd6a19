MATCH (a:Fact)-[l:SUPERSEDES|CONTRADICTS]->(b:Fact)
WHERE $group_id IS NULL OR a.group_id = $group_id
RETURN type(l) AS kind, a.id AS src, b.id AS dst, l.reason AS reason,
       l.decided_by AS decided_by, l.decided_at AS decided_at
ORDER BY l.seq
