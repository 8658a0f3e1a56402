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

numba also keeps a cached kernel while its own file is unchanged, even when a kernel it calls
(or a constant it reads, such as the planner's weights) lives in another file that changed: it
would run stale code. :class:`_WholeSourceStamp` makes every kernel's cache entry depend on the
digest of every source a kernel compiles in (:data:`KERNEL_SOURCES`), so an edit there
recompiles them.

Several processes may compile into one cache at once (the test suite's workers, a training run's compile
helper): :func:`_locked_save` keeps their entries apart.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import itertools
from pathlib import Path

try:
    import fcntl
except ImportError:  # not on Windows: one process at a time there
    fcntl = None

import numba as nb
from llvmlite import ir
from numba.core import caching, cgutils, types
from numba.extending import intrinsic

PROJECT = Path(__file__).resolve().parents[2]
KERNEL_SOURCES = ("skipbo_env/vector", "skipbo_env/actions.py", "skipbo_env/cards.py", "skipbo_env/rules.py",
                  "skipbo_env/encoding.py", "agents/batched", "agents/planner.py", "agents/expert.py",
                  "agents/pretrained/learned-2p.json", "agents/pretrained/learned-4p.json")
"""The kernels and every module whose functions or constants they compile in (the rules' constants,
the encoding's layout, the planner's and the expert's weights, the learned bots' shipped weights). A kernel that starts using another module adds it here."""


def _stable_record_mangling(record: types.Record) -> tuple[str, tuple[str, ...]]:
    """``Record.mangling_args`` from the layout (fields, types, offsets, size), not a counter."""
    digest = hashlib.sha256(record.name.encode()).hexdigest()[:24]
    return type(record).__name__, (f"L{digest}",)


types.Record.mangling_args = property(_stable_record_mangling)


@functools.cache
def sources_digest() -> str:
    """A digest of every ``.py`` file of :data:`KERNEL_SOURCES` (computed once per process)."""
    digest = hashlib.sha256()
    for source in KERNEL_SOURCES:
        root = PROJECT / source
        for path in sorted(root.rglob("*.py")) if root.is_dir() else [root]:
            digest.update(str(path.relative_to(PROJECT)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


class _WholeSourceStamp:
    """A cache locator for the project's kernels whose freshness stamp covers all their sources."""

    @classmethod
    def from_function(cls, py_func, py_file):
        if not Path(py_file).resolve().is_relative_to(PROJECT):
            return None
        return super().from_function(py_func, py_file)

    def get_source_stamp(self):
        return super().get_source_stamp(), sources_digest()


_PROJECT_LOCATORS = [type(f"Project{base.__name__}", (_WholeSourceStamp, base), {})
                     for base in (caching.UserProvidedCacheLocator, caching.InTreeCacheLocator,
                                  caching.UserWideCacheLocator)]
caching.CacheImpl._locator_classes[:0] = _PROJECT_LOCATORS


@contextlib.contextmanager
def _index_lock(index_path: str):
    """An exclusive lock on a kernel's cache index, across processes."""
    if fcntl is None:
        yield
        return
    with open(f"{index_path}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _locked_save(self, key, data) -> None:
    """``IndexDataCacheFile.save`` under a lock on the index, the data written before the index names it.
    numba's own reads the index, picks the first free data file name and writes the index, then the data: two
    processes saving two signatures at once can both pick the same name, so that the index names one
    signature's file and the file holds the other's code; and a process reading in between finds an index that
    names a file of stale code."""
    with _index_lock(self._index_path):
        overloads = self._load_index()
        name = overloads.get(key)
        if name is None:
            taken = set(overloads.values())
            name = next(n for n in map(self._data_name, itertools.count(1)) if n not in taken)
        self._save_data(name, data)
        overloads[key] = name
        self._save_index(overloads)


caching.IndexDataCacheFile.save = _locked_save

jit = nb.njit(cache=True, nogil=True, error_model="numpy")
"""Kernels use numpy's error model (a division by zero gives a value, not an exception): numba
then needs no clean-up paths, which would otherwise cost more than the rules themselves."""

exact_sum_jit = nb.njit(cache=True, nogil=True, error_model="numpy", fastmath={"reassoc", "contract"})
""":data:`jit` for kernels whose float sums are of integers that float64 holds exactly, however they are
grouped: the compiler may then reorder and fuse the additions (vector partial sums, fused multiply-adds) and
every order gives the same value."""


def named_jit(function, name: str):
    """``function``, a closure a kernel factory makes, compiled as a kernel named ``name``: numba names a kernel
    by its qualified name and a counter of the process that compiled it, and two kernels of one name (two
    closures of one function) must not meet in one program, so each closure gets a name of its own."""
    function.__name__ = function.__qualname__ = name
    return jit(function)


# The action-id arithmetic of skipbo_env.actions, compiled once for every kernel (one place for it).
from skipbo_env import actions as _actions  # noqa: E402

play_id = jit(_actions.play_action)
hand_play_id = jit(_actions.hand_play_action)
discard_id = jit(_actions.discard_action)
source_of = jit(_actions.play_source)
pile_of = jit(_actions.play_pile)
discard_value_of = jit(_actions.discard_value)
discard_pile_of = jit(_actions.discard_pile)


def _prefetcher(for_writing: bool):
    """An intrinsic ``(array, byte)`` that asks the CPU to start loading the cache line holding byte ``byte`` of
    ``array``'s data (to write it, if ``for_writing``), without waiting for it: a hint that changes nothing (an
    address outside the array is harmless too). A batch loop asks for the rows it will reach a few iterations
    later, whose records a CPU does not foresee (each is more than a 4 KiB page apart from the last, where its
    own prefetchers stop)."""

    def prefetch(typingctx, array, byte):
        def codegen(context, builder, signature, args):
            data = context.make_array(signature.args[0])(context, builder, args[0]).data
            pointer = builder.gep(builder.bitcast(data, ir.IntType(8).as_pointer()), [args[1]])
            word = ir.IntType(32)
            kind = ir.FunctionType(ir.VoidType(), [pointer.type, word, word, word])
            # the typed-pointer name, which LLVM versions with opaque pointers read as their own
            function = cgutils.get_or_insert_function(builder.module, kind, "llvm.prefetch.p0i8")
            builder.call(function, [pointer, word(int(for_writing)), word(3), word(1)])  # into every level, data
            return context.get_dummy_value()

        return types.void(array, byte), codegen

    prefetch.__name__ = "prefetch_for_writing" if for_writing else "prefetch"
    return intrinsic(prefetch)


prefetch = _prefetcher(for_writing=False)
prefetch_for_writing = _prefetcher(for_writing=True)
