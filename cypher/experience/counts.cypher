// A group's experience episodes: how many, how many carry their index entry, the last seq.
MATCH (e:Episode)
WHERE e.group_id = $group_id AND e.kind = 'experience'
RETURN count(e) AS episodes, count(e.x_length) AS indexed, max(e.seq) AS last
