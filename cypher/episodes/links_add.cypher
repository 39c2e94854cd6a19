// UPDATES links between turns; both ends must exist (one may have been forgotten meanwhile).
// A link already there keeps what it holds (an import's decided_at).
UNWIND $rows AS r
MATCH (a:Episode {id: r.src})
MATCH (b:Episode {id: r.dst})
MERGE (a)-[l:UPDATES]->(b)
ON CREATE SET l.group_id = r.group_id, l.reason = r.reason, l.terms = r.terms,
    l.decided_at = r.decided_at
