// Migration 8: a group's episodes of one kind (experience recall lists a group's experience
// records on every recall that follows a write).
CREATE INDEX graphmem_episode_group_kind IF NOT EXISTS FOR (e:Episode) ON (e.group_id, e.kind)
