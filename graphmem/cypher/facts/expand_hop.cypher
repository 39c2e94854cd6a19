// One hop of neighbourhood expansion: facts whose subject, then whose object, is one of $ids,
// valid at $at as believed at $known (two indexed lookups, like the SQLite store).
CALL () {
  UNWIND $ids AS entity_id
  MATCH (f:Fact)
  WHERE f.subject_id = entity_id AND f.group_id = $group_id
    AND f.recorded_at <= $known AND (f.expired_at IS NULL OR f.expired_at > $known)
    AND f.valid_from <= $at
    AND (f.valid_to IS NULL OR f.valid_to > $at OR (f.ended_at IS NOT NULL AND f.ended_at > $known))
  RETURN f
  UNION ALL
  UNWIND $ids AS entity_id
  MATCH (f:Fact)
  WHERE f.object_id = entity_id AND f.group_id = $group_id
    AND f.recorded_at <= $known AND (f.expired_at IS NULL OR f.expired_at > $known)
    AND f.valid_from <= $at
    AND (f.valid_to IS NULL OR f.valid_to > $at OR (f.ended_at IS NOT NULL AND f.ended_at > $known))
  RETURN f
}
RETURN f.id AS id, f.subject_id AS subject_id, f.object_id AS object_id
LIMIT $limit
