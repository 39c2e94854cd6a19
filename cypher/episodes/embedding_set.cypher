// An episode's own embedding (its content, turn level), set with its extraction.
MATCH (e:Episode {id: $id})
SET e.embedding = $embedding
