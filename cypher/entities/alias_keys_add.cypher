UNWIND $rows AS r
MERGE (:EntityAlias {group_id: r.group_id, key: r.key, entity_id: r.entity_id})
