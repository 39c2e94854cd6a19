// Cheap rows for ranking: the facts of $ids valid at $at as believed at $known.
UNWIND $ids AS id
MATCH (f:Fact {id: id})
WHERE f.recorded_at <= $known AND (f.expired_at IS NULL OR f.expired_at > $known)
    AND f.valid_from <= $at
    AND (f.valid_to IS NULL OR f.valid_to > $at OR (f.ended_at IS NOT NULL AND f.ended_at > $known))
RETURN f.id AS id, f.subject_id AS subject_id, f.object_id AS object_id,
       f.valid_from AS valid_from, f.confidence AS confidence
