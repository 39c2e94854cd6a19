// Literal values of some predicates, valid in a view (for the recall filter language).
UNWIND $predicates AS predicate
MATCH (f:Fact {predicate: predicate})
WHERE f.group_id = $group_id AND f.value_json IS NOT NULL
  AND f.recorded_at <= $known AND (f.expired_at IS NULL OR f.expired_at > $known)
  AND f.valid_from <= $at
  AND (f.valid_to IS NULL OR f.valid_to > $at OR (f.ended_at IS NOT NULL AND f.ended_at > $known))
RETURN f.subject_id AS subject_id, f.predicate AS predicate, f.value_json AS value_json
