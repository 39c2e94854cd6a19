// Migration 4: a group's episodes in arrival order (seq), for the speakers of a group and the
// neighbouring turns of an episode (conversation context in recall).
CREATE INDEX graphmem_episode_group_seq IF NOT EXISTS FOR (e:Episode) ON (e.group_id, e.seq)
