"""The ``graphmem`` command line (``graphmem.cli:main``): thin over the Python API."""
