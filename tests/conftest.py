"""Suite-wide set-up: the batched engine's kernels are compiled once, before the workers start.

With ``pytest -n 2`` (``make test``) each worker would otherwise compile the same numba kernels
at the same time on a fresh clone, and write the same cache files concurrently. Compiled here,
in the controlling process, they are written once, and every worker loads them from the cache.
"""

from __future__ import annotations


def pytest_sessionstart(session) -> None:
    config = session.config
    if hasattr(config, "workerinput") or not getattr(config.option, "numprocesses", None):
        return  # an xdist worker, or a single-process run that compiles what it uses
    from agents.batched.seating import compile_kernels

    compile_kernels()
