MERGE (m:GraphmemMeta {key: $key})
SET m.value = $value
