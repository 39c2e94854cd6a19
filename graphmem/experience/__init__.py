"""Experience memory: attempts (task, state, params, outcome, payload) stored as episodes and
recalled whole.

Internal: the public API is what ``graphmem`` re-exports.
"""
