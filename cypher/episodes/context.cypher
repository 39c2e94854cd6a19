// Where each episode sits (group, source, seq) with its speaker and reference time.
UNWIND $ids AS id
MATCH (e:Episode {id: id})
RETURN e.id AS id, e.group_id AS group_id, e.source AS source, e.seq AS seq,
       e.speaker AS speaker, e.reference_time AS reference_time
