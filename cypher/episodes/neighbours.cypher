// The $reach episodes of the same group just before and just after each row's seq (arrival
// order), any source: the caller keeps those of the row's source. Index-backed by
// graphmem_episode_group_seq; at most 2 x $reach rows per input row.
UNWIND $rows AS r
CALL (r) {
  MATCH (n:Episode)
  WHERE n.group_id = r.group_id AND n.seq < r.seq
  RETURN n
  ORDER BY n.seq DESC
  LIMIT $reach
  UNION
  MATCH (n:Episode)
  WHERE n.group_id = r.group_id AND n.seq > r.seq
  RETURN n
  ORDER BY n.seq
  LIMIT $reach
}
RETURN r.id AS id, n.id AS neighbour, n.source AS source, n.seq AS seq,
       n.speaker AS speaker, n.reference_time AS reference_time
