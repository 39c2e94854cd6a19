// Full-text hits for $query (escaped Lucene built by the store) in one group, best first.
CALL db.index.fulltext.queryNodes($index, $query, {limit: $candidates})
YIELD node, score
WITH collect({id: node.id, group_id: node.group_id, score: score}) AS hits
RETURN size(hits) AS candidates,
       [h IN hits WHERE h.group_id = $group_id | [h.id, h.score]][..$limit] AS hits
