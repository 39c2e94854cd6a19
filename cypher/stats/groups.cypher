MATCH (e:Episode)
RETURN DISTINCT e.group_id AS group_id
ORDER BY group_id
