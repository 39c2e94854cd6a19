"""Where graphmem's data folders (``cypher/``, ``prompts/``) are: one place to ask.

The single copy of each lives at the repository's top level. A wheel ships them inside the
package (``graphmem/cypher``, ``graphmem/prompts``: pyproject's hatch ``force-include``), so an
installed graphmem reads its own packaged copy through ``importlib.resources`` (a zip works
too). A source checkout or an editable install (a path entry to the repository root) has no
such copy inside the package, so the top-level folder beside the package is used instead.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Literal

from ._errors import ConfigError

__all__ = ["data_dir"]

DataName = Literal["cypher", "prompts"]


@cache
def data_dir(name: DataName) -> Traversable:
    """The ``cypher`` or ``prompts`` folder: the packaged copy first, else the repository's."""
    packaged = resources.files("graphmem").joinpath(name)
    if packaged.is_dir():
        return packaged
    # graphmem/_resources.py -> the repository root is the package's parent folder
    checkout = Path(__file__).resolve().parent.parent / name
    if checkout.is_dir():
        return checkout
    raise ConfigError(
        f"graphmem's {name}/ folder is missing (looked in the package and at {checkout}); "
        "reinstall graphmem (pip install --force-reinstall graphmem)"
    )
