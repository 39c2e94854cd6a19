MATCH (e:Entity)
WHERE $group_id IS NULL OR e.group_id = $group_id
RETURN properties(e) AS e
ORDER BY e.seq
