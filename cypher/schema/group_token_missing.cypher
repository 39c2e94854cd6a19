// Migration 6: the episodes, facts and entities written before nodes carried a group token.
MATCH (n:Episode)
WHERE n.group_token IS NULL
RETURN 'episodes' AS kind, n.id AS id, n.group_id AS group_id
UNION ALL
MATCH (n:Fact)
WHERE n.group_token IS NULL
RETURN 'facts' AS kind, n.id AS id, n.group_id AS group_id
UNION ALL
MATCH (n:Entity)
WHERE n.group_token IS NULL
RETURN 'entities' AS kind, n.id AS id, n.group_id AS group_id
