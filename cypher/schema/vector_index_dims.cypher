// The size of each graphmem vector index the server holds (the store rebuilds them only when
// an embedder of another size is recorded on a store without embeddings).
SHOW INDEXES YIELD name, type, options
WHERE type = 'VECTOR' AND name STARTS WITH 'graphmem_'
RETURN name, options.indexConfig['vector.dimensions'] AS dimensions
