// A group's experience episodes written without an index entry (an import, an older graphmem).
MATCH (e:Episode)
WHERE e.group_id = $group_id AND e.kind = 'experience' AND e.x_length IS NULL
RETURN e {.*, embedding: null} AS e
ORDER BY e.seq
LIMIT $limit
