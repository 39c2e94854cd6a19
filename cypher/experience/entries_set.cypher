// Index entries for stored experience episodes that lack one.
UNWIND $rows AS r
MATCH (e:Episode {id: r.id})
WHERE e.kind = 'experience' AND e.x_length IS NULL
SET e.x_success = r.x_success, e.x_length = r.x_length, e.x_terms = r.x_terms,
  e.x_tfs = r.x_tfs, e.x_values = r.x_values
