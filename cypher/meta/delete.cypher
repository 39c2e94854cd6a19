// A meta row removed (an unfinished move to another embedder, once it is done).
MATCH (m:GraphmemMeta {key: $key})
DELETE m
