"""The training backends, one package each: the table the config loader (:mod:`training.config`) and
:mod:`training.run` read.

Each package's ``config.py`` declares its :class:`training.schema.Backend`: its name (``backend:``), a one-line
summary (the help texts'), its config section and that section's dataclass, the shared sections it reads beyond
those every backend reads, its checks, its trainer and its resume-budget check. Adding a backend is its folder
(``training/NAME/``: ``config.py`` with ``BACKEND``, the trainer) plus its line in
:data:`training.backend_names.BACKEND_PACKAGES`; the first is the default of ``backend:``. The config loader, the
command line's help, ``skipbo train --list-keys`` and ``--list-configs`` and the leaderboard's table of what each
backend made all read :data:`BACKENDS`.
"""

from __future__ import annotations

from importlib import import_module

from training.backend_names import BACKEND_PACKAGES
from training.schema import Backend

BACKENDS: dict[str, Backend] = {backend.name: backend for backend in
                                (import_module(f"{package}.config").BACKEND for package in BACKEND_PACKAGES)}
"""Every backend by its name."""


__all__ = ["BACKENDS", "BACKEND_PACKAGES", "trainer_class"]


def trainer_class(backend: Backend) -> type:
    """The trainer class of ``backend`` (imported now: the heavy libraries load only when a run starts)."""
    module, _, name = backend.trainer.partition(":")
    return getattr(import_module(module), name)
