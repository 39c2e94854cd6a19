// Migration 6: the group token of episodes written before nodes carried one (see
// schema/group_token_missing).
UNWIND $rows AS r
MATCH (n:Episode {id: r.id})
SET n.group_token = r.token
