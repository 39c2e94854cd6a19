// Facts supported by these episodes, each with its number of supporting episodes.
UNWIND $ids AS id
MATCH (:Episode {id: id})<-[:FROM_EPISODE]-(f:Fact)
WITH DISTINCT f
RETURN f.id AS id, COUNT { (f)-[:FROM_EPISODE]->(:Episode) } AS n
