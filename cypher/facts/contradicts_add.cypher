UNWIND $rows AS r
MATCH (a:Fact {id: r.src})
MATCH (b:Fact {id: r.dst})
MERGE (a)-[l:CONTRADICTS]->(b)
ON CREATE SET l.seq = r.seq
SET l.reason = r.reason, l.decided_by = r.decided_by, l.decided_at = r.decided_at
