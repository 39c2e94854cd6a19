// Migration 6: the group token of entities written before nodes carried one (see
// schema/group_token_missing).
UNWIND $rows AS r
MATCH (n:Entity {id: r.id})
SET n.group_token = r.token
