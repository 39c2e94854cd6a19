"""``python -m graphmem.cli``: the same console script as ``graphmem``."""

from . import main

main()
