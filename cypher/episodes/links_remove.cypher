// UPDATES links a turn no longer keeps (a nearer earlier turn took their place).
UNWIND $rows AS r
MATCH (:Episode {id: r.src})-[l:UPDATES]->(:Episode {id: r.dst})
DELETE l
