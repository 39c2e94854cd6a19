// The episode's own embedding is left out (only the export reads it).
UNWIND $statuses AS status
MATCH (e:Episode {status: status})
WHERE $group_id IS NULL OR e.group_id = $group_id
WITH e
ORDER BY e.reference_time, e.seq
RETURN e {.*, embedding: null} AS e
