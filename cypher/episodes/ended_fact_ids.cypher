// Facts that a negation in these episodes ended.
UNWIND $ids AS id
MATCH (:Episode {id: id})<-[:ENDED_BY]-(f:Fact)
RETURN DISTINCT f.id AS id
