// graphmem: provenance of an episode: the facts it supports and the entities it mentions.
// :param episode_id => 'ep_…'
MATCH (e:Episode {id: $episode_id})
OPTIONAL MATCH supports = (:Entity)-[:SUBJECT_OF]->(:Fact)-[:FROM_EPISODE]->(e)
OPTIONAL MATCH mentions = (e)-[:MENTIONS]->(:Entity)
RETURN e, collect(DISTINCT supports) AS facts, collect(DISTINCT mentions) AS entities
