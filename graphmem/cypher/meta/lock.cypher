// Taken first in every write transaction: writers are serialised like SQLite's
// BEGIN IMMEDIATE, so the reconciler's reads stay valid until its writes commit.
MERGE (l:GraphmemLock {name: 'write'})
SET l.at = $at
