// What an extraction leaves on its episode, in one statement (one round trip per turn instead
// of three): its own embedding, its link terms (reconcile/turn_links.py) and its status.
MATCH (e:Episode {id: $id})
SET e.embedding = $embedding, e.link_terms = $terms,
    e.status = $status, e.extractor = $extractor, e.error = $error
