// Migration 5: the metadata of the episodes that have no derived speaker property yet.
MATCH (e:Episode)
WHERE e.speaker IS NULL
RETURN e.id AS id, e.metadata AS metadata
