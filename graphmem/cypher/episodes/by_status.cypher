MATCH (e:Episode)
WHERE e.status IN $statuses AND ($group_id IS NULL OR e.group_id = $group_id)
RETURN properties(e) AS e
ORDER BY e.reference_time, e.seq
