// Episodes that support or end (a negation) a fact of the group whose subject is one of $ids
// (forget of an entity with its own episodes). subject_id in the map: its index.
UNWIND $ids AS entity_id
MATCH (f:Fact {subject_id: entity_id})-[:FROM_EPISODE|ENDED_BY]->(e:Episode)
WHERE f.group_id = $group_id
RETURN DISTINCT e.id AS id
