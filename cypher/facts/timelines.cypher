// The facts of each (subject, predicate) in $pairs, oldest first; unexpired ones only unless
// $include_expired (a timeline rebuilt after a forget needs what corrections expired). Only
// subject_id is in the property map: ArcadeDB picks the index of a map's property, and
// predicates repeat across subjects far more than subjects do.
UNWIND $pairs AS p
MATCH (f:Fact {subject_id: p.subject_id})
WHERE f.predicate = p.predicate AND f.group_id = $group_id
  AND ($include_expired OR f.expired_at IS NULL)
RETURN p.subject_id AS subject_id, p.predicate AS predicate, properties(f) AS f
ORDER BY f.valid_from, f.recorded_at, f.seq
