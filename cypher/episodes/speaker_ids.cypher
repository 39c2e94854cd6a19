// The group's episodes that have a speaker, with it, in arrival order (forget of an entity
// with its own episodes: the speaker's entity key is compared in Python).
MATCH (e:Episode)
WHERE e.group_id = $group_id AND e.speaker IS NOT NULL
RETURN e.id AS id, e.speaker AS speaker
ORDER BY e.seq
