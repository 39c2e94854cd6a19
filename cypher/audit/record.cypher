MERGE (a:AuditRecord {id: $id})
SET a.at = $at, a.group_id = $group_id, a.action = $action, a.details = $details
