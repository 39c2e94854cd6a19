"""Views of a memory for other tools: the graph as a ``networkx.MultiDiGraph``.

Internal: the public API is what ``graphmem`` re-exports.
"""
