"""The training backends' packages, in order: the one line a new backend adds (``training/NAME/`` is its folder).

This module imports nothing, so the command line's top-level help names the backends without loading them;
:mod:`training.backends` imports each package's ``config.py`` and builds the table of
:class:`training.schema.Backend` from this list.
"""

from __future__ import annotations

BACKEND_PACKAGES = (
    "training.sb3",
    "training.rllib",
    "training.snes",
    "training.neural",
    "training.td",
)
"""The packages of the backends, in the order ``skipbo train --list-keys`` shows them; the first is the default of
``backend:``."""


def backend_names() -> list[str]:
    """The backends' names (each package's last part), in order, read when called."""
    return [package.rpartition(".")[2] for package in BACKEND_PACKAGES]
