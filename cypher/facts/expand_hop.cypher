// One hop of neighbourhood expansion: the facts whose subject or object is one of $ids, valid
// at $at as believed at $known. The store asks for twice its limit and keeps the subject rows
// first, then the object rows, up to its limit (the SQLite store's order).
UNWIND $ids AS entity_id
MATCH (:Entity {id: entity_id})-[r:SUBJECT_OF|OBJECT]-(f:Fact)
WHERE f.group_id = $group_id
  AND f.recorded_at <= $known AND (f.expired_at IS NULL OR f.expired_at > $known)
  AND f.valid_from <= $at
  AND (f.valid_to IS NULL OR f.valid_to > $at OR (f.ended_at IS NOT NULL AND f.ended_at > $known))
RETURN f.id AS id, f.subject_id AS subject_id, f.object_id AS object_id,
       type(r) = 'SUBJECT_OF' AS as_subject
LIMIT $limit
