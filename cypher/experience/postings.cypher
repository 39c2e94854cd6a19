// The text terms and their counts of a group's indexed attempts after a seq that have one of
// the terms.
MATCH (e:Episode)
WHERE e.group_id = $group_id AND e.kind = 'experience' AND e.seq > $after
  AND e.x_length IS NOT NULL AND any(t IN e.x_terms WHERE t IN $terms)
RETURN e.seq AS seq, e.x_terms AS terms, e.x_tfs AS tfs
ORDER BY e.seq
