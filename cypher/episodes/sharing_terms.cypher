// The $limit turns of the group (but $exclude) nearest in stated time to $at that hold at
// least $min_shared of $terms among their link terms (what a new turn may update, or be
// updated by). A scan of the group's episodes that have link terms; the embedding is left out.
MATCH (e:Episode {group_id: $group_id})
WHERE e.link_terms IS NOT NULL AND e.id <> $exclude
WITH e, size([t IN e.link_terms WHERE t IN $terms]) AS shared
WHERE shared >= $min_shared
RETURN e {.*, embedding: null, link_terms: null} AS e
ORDER BY abs(e.reference_time - $at), e.id
LIMIT $limit
