// Migration 5 (and nothing else): the derived speaker property of episodes written before it
// existed (metadata.speaker, else metadata.name; read from the JSON metadata in Python).
UNWIND $rows AS r
MATCH (e:Episode {id: r.id})
SET e.speaker = r.speaker
