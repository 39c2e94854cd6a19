// Full-text hits of one group, best first. $query (built by the store from escaped, quoted
// words) requires the group's token with zero weight, so the index itself keeps to the group
// and ranks only its rows; the group_id test only guards against a token collision. Equal
// scores come in insertion order (seq), as the SQLite store's FTS tables give them: Lucene's
// order of ties changes with the limit asked for.
CALL db.index.fulltext.queryNodes($index, $query, {limit: $limit})
YIELD node, score
WHERE node.group_id = $group_id
RETURN node.id AS id, score
ORDER BY score DESC, node.seq
