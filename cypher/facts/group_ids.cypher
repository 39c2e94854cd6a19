MATCH (f:Fact)
WHERE f.group_id = $group_id
RETURN f.id AS id
