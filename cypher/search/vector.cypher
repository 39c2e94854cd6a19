// Nearest nodes to $vector in a vector index that cannot filter ($index: the dialect's name for
// it), kept to one group: only for a group too large to scan (search/vector_scan_*). One row:
// how many candidates the index gave, and the group's hits in score order.
CALL db.index.vector.queryNodes($index, $candidates, $vector)
YIELD node, score
WITH collect({id: node.id, group_id: node.group_id, score: score}) AS hits
RETURN size(hits) AS candidates,
       [h IN hits WHERE h.group_id = $group_id | [h.id, h.score]][..$limit] AS hits
