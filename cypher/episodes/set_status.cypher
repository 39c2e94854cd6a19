MATCH (e:Episode {id: $id})
SET e.status = $status, e.extractor = $extractor, e.error = $error
