// Which of the links in $rows ({kind, src, dst}) exist already.
UNWIND $rows AS r
MATCH (:Fact {id: r.src})-[l:SUPERSEDES|CONTRADICTS]->(:Fact {id: r.dst})
WHERE type(l) = r.kind
RETURN r.kind AS kind, r.src AS src, r.dst AS dst
