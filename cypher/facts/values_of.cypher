// Literal values of some predicates of some subjects, valid in a view: the recall filter
// language decides whether these subjects pass.
UNWIND $subject_ids AS subject_id
MATCH (f:Fact {subject_id: subject_id})
WHERE f.group_id = $group_id AND f.predicate IN $predicates AND f.value_json IS NOT NULL
  AND f.recorded_at <= $known AND (f.expired_at IS NULL OR f.expired_at > $known)
  AND f.valid_from <= $at
  AND (f.valid_to IS NULL OR f.valid_to > $at OR (f.ended_at IS NOT NULL AND f.ended_at > $known))
RETURN f.subject_id AS subject_id, f.predicate AS predicate, f.value_json AS value_json
