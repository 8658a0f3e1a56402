"""The one numba decorator of the batched engine's kernels, and the fix that makes caching them safe.

Kernels are compiled once per argument types and kept on disk (``cache=True``); a later process
loads them instead of compiling. A process that loads the kernels of two record layouts (two
deck counts: :func:`skipbo_env.vector.layout.game_dtype`) links both into one program, where
code is found by its symbol name. numba names a record type by a counter of the process that
compiled it (``Record<436>``), and each function by another counter, so two layouts compiled
by two processes get the same names: the second layout's kernels then run the first one's
code, at the first one's field offsets (issue 10: an empty draw pile after the deal).

:func:`_stable_record_mangling` names a record by a digest of its layout instead, the same in
every process and different for every layout.
"""

from __future__ import annotations

import hashlib

import numba as nb
from numba.core import types


def _stable_record_mangling(record: types.Record) -> tuple[str, tuple[str, ...]]:
    """``Record.mangling_args`` from the layout (fields, types, offsets, size), not a counter."""
    digest = hashlib.sha256(record.name.encode()).hexdigest()[:24]
    return type(record).__name__, (f"L{digest}",)


types.Record.mangling_args = property(_stable_record_mangling)

jit = nb.njit(cache=True, nogil=True, error_model="numpy")
"""Kernels use numpy's error model (a division by zero gives a value, not an exception): numba
then needs no clean-up paths, which would otherwise cost more than the rules themselves."""
