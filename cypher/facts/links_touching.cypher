// Every SUPERSEDES/CONTRADICTS link with either end in $ids.
UNWIND $ids AS id
MATCH (:Fact {id: id})-[l:SUPERSEDES|CONTRADICTS]-(:Fact)
WITH DISTINCT l
RETURN type(l) AS kind, startNode(l).id AS src, endNode(l).id AS dst, l.reason AS reason,
       l.decided_by AS decided_by, l.decided_at AS decided_at
