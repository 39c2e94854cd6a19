MATCH (f:Fact)
WHERE $group_id IS NULL OR f.group_id = $group_id
RETURN properties(f) AS f
ORDER BY f.seq
