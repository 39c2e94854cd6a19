// The latest episodes of one source (a null $source means episodes without a source); their
// own embedding is left out (only the export reads it).
MATCH (e:Episode)
WHERE e.group_id = $group_id AND e.reference_time <= $before
  AND ((e.source IS NULL AND $source IS NULL) OR e.source = $source)
WITH e
ORDER BY e.reference_time DESC, e.seq DESC
LIMIT $limit
RETURN e {.*, embedding: null} AS e
