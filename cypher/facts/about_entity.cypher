// Facts where the entity is subject or object.
MATCH (f:Fact)
WHERE f.subject_id = $entity_id
RETURN f.id AS id
UNION
MATCH (f:Fact)
WHERE f.object_id = $entity_id
RETURN f.id AS id
