"""The ``graphmem`` console script (``graphmem.cli:main``): one module per command group.

``graphmem --help`` lists them; ``docs/cli.md`` is generated from them by
``scripts/gen_cli_docs.py``.
"""

from __future__ import annotations

import os

# Before numpy is first imported: numpy's OpenBLAS starts a thread per core and sizes a buffer
# for each when it loads, about 70 ms of CPU on a 2-core machine (a third of `graphmem recall`),
# for a process whose largest product is one query vector against a few thousand rows, where
# threads do not help. A value the user set is kept. Library users are not affected.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from .app import cli, main  # after the thread setting, on purpose

__all__ = ["cli", "main"]

