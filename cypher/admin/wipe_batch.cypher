// Tests only: delete every node (and its relationships) but the write lock, a batch at a time.
MATCH (n)
WHERE NOT n:GraphmemLock
WITH n
LIMIT $batch
DETACH DELETE n
RETURN count(*) AS deleted
