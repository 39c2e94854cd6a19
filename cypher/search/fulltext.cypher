// Full-text hits of one group, best first. $query (built by the store from escaped, quoted
// words) requires the group's token with zero weight, so the index itself keeps to the group
// and ranks only its rows; the group_id test only guards against a token collision.
CALL db.index.fulltext.queryNodes($index, $query, {limit: $limit})
YIELD node, score
WHERE node.group_id = $group_id
RETURN node.id AS id, score
