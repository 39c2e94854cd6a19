MERGE (m:GraphmemMigration {version: $version})
ON CREATE SET m.name = $name, m.applied_at = $applied_at
