MATCH (m:GraphmemMeta {key: $key})
RETURN m.value AS value
