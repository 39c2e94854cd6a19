UNWIND $rows AS r
MATCH (e:Entity {id: r.id})
SET e.aliases = r.aliases, e.alias_text = r.alias_text
RETURN e.id AS id, e.group_id AS group_id
