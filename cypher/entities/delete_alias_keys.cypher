UNWIND $ids AS id
MATCH (a:EntityAlias {entity_id: id})
DELETE a
