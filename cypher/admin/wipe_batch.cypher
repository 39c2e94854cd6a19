// Tests only: delete every node (and its relationships) but the write lock, a batch at a time;
// with $keep_schema the migration records stay too (the schema they record is kept anyway).
MATCH (n)
WHERE NOT n:GraphmemLock AND NOT ($keep_schema AND n:GraphmemMigration)
WITH n
LIMIT $batch
DETACH DELETE n
RETURN count(*) AS deleted
