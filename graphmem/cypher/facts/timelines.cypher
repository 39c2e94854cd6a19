// The unexpired facts of each (subject, predicate) in $pairs, oldest first.
UNWIND $pairs AS p
MATCH (f:Fact)
WHERE f.subject_id = p.subject_id AND f.predicate = p.predicate
  AND f.group_id = $group_id AND f.expired_at IS NULL
RETURN p.subject_id AS subject_id, p.predicate AS predicate, properties(f) AS f
ORDER BY f.valid_from, f.recorded_at, f.seq
