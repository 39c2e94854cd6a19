// Taken first in every write transaction: writers are serialised like SQLite's
// BEGIN IMMEDIATE, so the reconciler's reads stay valid until its writes commit.
// Neo4j: the SET takes the node's write lock until commit. ArcadeDB locks optimistically (a
// second writer that changed the node fails at commit, a retryable conflict); it only counts
// a real change, so `n` always moves (`at` alone repeats within one millisecond). `n` is also
// the store's commit sequence: claims record it so forget replays writes in commit order.
MERGE (l:GraphmemLock {name: 'write'})
SET l.at = $at, l.n = coalesce(l.n, 0) + 1
RETURN l.n AS n
