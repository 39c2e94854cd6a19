"""The ``graphmem`` console script (``graphmem.cli:main``); the commands live in ``graphmem._cli``.

``graphmem --help`` lists them; ``docs/cli.md`` is generated from them by
``scripts/gen_cli_docs.py``.
"""

from __future__ import annotations

from ._cli.app import cli, main

__all__ = ["cli", "main"]

if __name__ == "__main__":  # pragma: no cover
    main()
