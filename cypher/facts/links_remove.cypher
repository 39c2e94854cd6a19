UNWIND $rows AS r
MATCH (:Fact {id: r.src})-[l:SUPERSEDES|CONTRADICTS]->(:Fact {id: r.dst})
WHERE type(l) = r.kind
DELETE l
