// Neo4j builds new indexes in the background; wait until they are ONLINE.
CALL db.awaitIndexes($timeout_s)
