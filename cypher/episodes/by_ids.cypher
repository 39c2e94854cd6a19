// The episode's own embedding is left out (only the export reads it).
UNWIND $ids AS id
MATCH (e:Episode {id: id})
RETURN e {.*, embedding: null} AS e
