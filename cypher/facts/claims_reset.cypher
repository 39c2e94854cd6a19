// Drop the provenance and endings of facts whose rows are about to be written anew.
UNWIND $ids AS id
MATCH (:Fact {id: id})-[p:FROM_EPISODE|ENDED_BY]->(:Episode)
DELETE p
