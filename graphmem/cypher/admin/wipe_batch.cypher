// Tests only: delete every node (and its relationships), a batch at a time.
MATCH (n)
WITH n
LIMIT $batch
DETACH DELETE n
RETURN count(*) AS deleted
