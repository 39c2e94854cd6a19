// Every UPDATES link with either end in $ids.
UNWIND $ids AS id
MATCH (:Episode {id: id})-[l:UPDATES]-(:Episode)
WITH DISTINCT l
RETURN type(l) AS kind, startNode(l).id AS src, endNode(l).id AS dst, l.group_id AS group_id,
       l.reason AS reason, l.terms AS terms, l.decided_at AS decided_at
