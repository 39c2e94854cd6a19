// Migration 9: a group's experience episodes in arrival order (seq). Each carries its index
// entry (x_success, x_length, x_terms, x_tfs, x_values) from when it is written, so a recall
// reads columns, and after a write only the attempts with a later seq.
CREATE INDEX graphmem_episode_group_kind_seq IF NOT EXISTS FOR (e:Episode) ON (e.group_id, e.kind, e.seq)
