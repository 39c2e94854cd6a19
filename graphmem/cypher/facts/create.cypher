// New facts (reified: a node per fact). $rows hold each fact's properties in r.props.
UNWIND $rows AS r
CREATE (f:Fact)
SET f = r.props
