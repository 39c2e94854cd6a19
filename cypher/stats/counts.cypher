// Counts for stats(); $group_id null means every group. $now: epoch ms. Current facts hold
// now: begun (a fact valid from a future date is not current yet) and not ended.
RETURN
  COUNT { MATCH (e:Episode) WHERE $group_id IS NULL OR e.group_id = $group_id } AS episodes,
  COUNT {
    MATCH (e:Episode)
    WHERE ($group_id IS NULL OR e.group_id = $group_id) AND e.status = 'failed'
  } AS episodes_failed,
  COUNT {
    MATCH (e:Episode)
    WHERE ($group_id IS NULL OR e.group_id = $group_id) AND e.status = 'pending'
  } AS episodes_pending,
  COUNT { MATCH (e:Entity) WHERE $group_id IS NULL OR e.group_id = $group_id } AS entities,
  COUNT { MATCH (f:Fact) WHERE $group_id IS NULL OR f.group_id = $group_id } AS facts,
  COUNT {
    MATCH (f:Fact)
    WHERE ($group_id IS NULL OR f.group_id = $group_id) AND f.expired_at IS NULL
      AND f.valid_from <= $now AND (f.valid_to IS NULL OR f.valid_to > $now)
  } AS facts_current,
  COUNT {
    MATCH (f:Fact)
    WHERE ($group_id IS NULL OR f.group_id = $group_id) AND f.expired_at IS NOT NULL
  } AS facts_expired,
  COUNT {
    MATCH (f:Fact)-[:SUPERSEDES]->(:Fact)
    WHERE $group_id IS NULL OR f.group_id = $group_id
  } AS supersedes_links,
  COUNT {
    MATCH (f:Fact)-[:CONTRADICTS]->(:Fact)
    WHERE $group_id IS NULL OR f.group_id = $group_id
  } AS contradicts_links
