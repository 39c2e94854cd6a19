UNWIND $statuses AS status
MATCH (e:Episode {status: status})
WHERE $group_id IS NULL OR e.group_id = $group_id
RETURN properties(e) AS e
ORDER BY e.reference_time, e.seq
