// A group's episodes of one kind, in arrival order (experience recall's index reads these).
MATCH (e:Episode)
WHERE e.group_id = $group_id AND e.kind = $kind
RETURN e.id AS id
ORDER BY e.seq
