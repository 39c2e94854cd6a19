// The episode ids of indexed attempts, by seq.
MATCH (e:Episode)
WHERE e.group_id = $group_id AND e.kind = 'experience' AND e.seq IN $seqs
RETURN e.seq AS seq, e.id AS id
