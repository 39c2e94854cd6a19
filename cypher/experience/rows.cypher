// The fixed index columns of a group's indexed attempts after a seq, in seq order.
MATCH (e:Episode)
WHERE e.group_id = $group_id AND e.kind = 'experience' AND e.seq > $after
  AND e.x_length IS NOT NULL
RETURN e.seq AS seq, e.reference_time AS at, e.x_success AS success, e.x_length AS length
ORDER BY e.seq
