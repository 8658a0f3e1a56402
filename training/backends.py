"""The training backends, one package each: the table the config loader (:mod:`training.config`) and
:mod:`training.run` read.

Each package's ``config.py`` declares its :class:`training.schema.Backend`: its name (``backend:``), its config
section and that section's dataclass, its checks, its trainer and its resume-budget check. Adding a backend is
its folder (``training/NAME/``: ``config.py`` with ``BACKEND``, the trainer) plus its line below; the first is the
default of ``backend:``.
"""

from __future__ import annotations

from importlib import import_module

from training.schema import Backend

BACKEND_PACKAGES = (
    "training.sb3",
    "training.rllib",
    "training.snes",
    "training.neural",
    "training.td",
)
"""The packages of the backends, in the order ``skipbo train --list-keys`` shows them."""

BACKENDS: dict[str, Backend] = {backend.name: backend for backend in
                                (import_module(f"{package}.config").BACKEND for package in BACKEND_PACKAGES)}
"""Every backend by its name."""


def trainer_class(backend: Backend) -> type:
    """The trainer class of ``backend`` (imported now: the heavy libraries load only when a run starts)."""
    module, _, name = backend.trainer.partition(":")
    return getattr(import_module(module), name)
