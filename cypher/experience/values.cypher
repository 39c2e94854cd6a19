// The field values (JSON: path -> values) of a group's indexed attempts after a seq.
MATCH (e:Episode)
WHERE e.group_id = $group_id AND e.kind = 'experience' AND e.seq > $after
  AND e.x_length IS NOT NULL
RETURN e.seq AS seq, e.x_values AS values
ORDER BY e.seq
