// The speakers of a group's episodes stored after $after (seq), each with the seq of its
// latest episode (a null speaker row gives the newest seq of the rest), and the episode epoch
// (changed by every episode deletion). Index-backed by graphmem_episode_group_seq.
OPTIONAL MATCH (m:GraphmemMeta {key: $epoch_key})
WITH m.value AS epoch
OPTIONAL MATCH (e:Episode)
WHERE e.group_id = $group_id AND e.seq > $after
WITH epoch, e.speaker AS speaker, max(e.seq) AS last
RETURN epoch, speaker, last
ORDER BY last
