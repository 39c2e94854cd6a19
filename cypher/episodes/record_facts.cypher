// (episode id, fact id) for each fact that those of these episodes which are JSON records
// (kind 'json') support (FROM_EPISODE), in any view: callers narrow them with facts/stubs.
UNWIND $ids AS id
MATCH (e:Episode {id: id})<-[:FROM_EPISODE]-(f:Fact)
WHERE e.kind = 'json'
RETURN e.id AS episode_id, f.id AS fact_id
ORDER BY episode_id, fact_id
