MATCH (a:Episode)-[l:UPDATES]->(b:Episode)
WHERE $group_id IS NULL OR a.group_id = $group_id
RETURN type(l) AS kind, a.id AS src, b.id AS dst, l.group_id AS group_id, l.reason AS reason,
       l.terms AS terms, l.decided_at AS decided_at
ORDER BY a.id, b.id
