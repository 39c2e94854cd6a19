// A turn's link terms (reconcile/turn_links.py), kept on the episode.
MATCH (e:Episode {id: $id})
SET e.link_terms = $terms
