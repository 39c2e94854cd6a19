UNWIND $rows AS r
MATCH (f:Fact {id: r.id})
SET f.valid_from = r.valid_from, f.valid_to = r.valid_to, f.expired_at = r.expired_at,
    f.ended_at = r.ended_at, f.end_reason = r.end_reason, f.confidence = r.confidence
