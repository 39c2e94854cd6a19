// Subjects that may pass a recall filter, newest first (graphmem/_filters.py decides on their
// values): each has a valid literal fact of $paths that may match $drive (null: any value),
// for every condition in $present a valid fact of its path that may match it, and for no
// condition in $absent a valid fact of its path stored as one of its texts.
// A condition is {path, texts, ranges, exclude, numbers, strings}: a value may match when its
// JSON text is in texts (graphmem stores json.dumps), when it is a number within one of ranges
// ([lo, hi], null: unbounded) and its text is not in exclude, or any number (numbers) or any
// string (strings).
MATCH (f:Fact)
WHERE f.predicate IN $paths AND f.group_id = $group_id AND f.value_json IS NOT NULL
  AND f.recorded_at <= $known AND (f.expired_at IS NULL OR f.expired_at > $known)
  AND f.valid_from <= $at
  AND (f.valid_to IS NULL OR f.valid_to > $at OR (f.ended_at IS NOT NULL AND f.ended_at > $known))
  AND ($drive IS NULL OR any(c IN [$drive] WHERE
        f.value_json IN c.texts
        OR (c.strings AND f.value_json STARTS WITH '"')
        OR any(n IN [CASE WHEN f.value_json STARTS WITH '"' THEN null ELSE toFloat(f.value_json) END]
               WHERE (c.numbers AND n IS NOT NULL)
                  OR (NOT f.value_json IN c.exclude
                      AND any(r IN c.ranges WHERE (r[0] IS NULL OR n >= r[0]) AND (r[1] IS NULL OR n <= r[1]))))))
  AND all(c IN $present WHERE EXISTS {
        MATCH (x:Fact {subject_id: f.subject_id, predicate: c.path})
        WHERE x.group_id = $group_id AND x.value_json IS NOT NULL
          AND x.recorded_at <= $known AND (x.expired_at IS NULL OR x.expired_at > $known)
          AND x.valid_from <= $at
          AND (x.valid_to IS NULL OR x.valid_to > $at OR (x.ended_at IS NOT NULL AND x.ended_at > $known))
          AND (x.value_json IN c.texts
               OR (c.strings AND x.value_json STARTS WITH '"')
               OR any(n IN [CASE WHEN x.value_json STARTS WITH '"' THEN null ELSE toFloat(x.value_json) END]
                      WHERE (c.numbers AND n IS NOT NULL)
                         OR (NOT x.value_json IN c.exclude
                             AND any(r IN c.ranges WHERE (r[0] IS NULL OR n >= r[0]) AND (r[1] IS NULL OR n <= r[1])))))
      })
  AND none(c IN $absent WHERE EXISTS {
        MATCH (x:Fact {subject_id: f.subject_id, predicate: c.path})
        WHERE x.group_id = $group_id AND x.value_json IN c.texts
          AND x.recorded_at <= $known AND (x.expired_at IS NULL OR x.expired_at > $known)
          AND x.valid_from <= $at
          AND (x.valid_to IS NULL OR x.valid_to > $at OR (x.ended_at IS NOT NULL AND x.ended_at > $known))
      })
WITH f.subject_id AS subject_id, max(f.seq) AS newest
RETURN subject_id
ORDER BY newest DESC
LIMIT $limit
