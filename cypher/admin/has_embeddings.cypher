// Whether any fact, entity or episode holds an embedding (then the vector indexes must stay).
RETURN EXISTS { MATCH (f:Fact) WHERE f.embedding IS NOT NULL }
    OR EXISTS { MATCH (e:Entity) WHERE e.embedding IS NOT NULL }
    OR EXISTS { MATCH (e:Episode) WHERE e.embedding IS NOT NULL } AS embedded
