"""Suite-wide set-up: the batched engine's kernels are compiled once, before the workers start.

With ``pytest -n 2`` (``make test``) each worker would otherwise compile the same numba kernels
at the same time on a fresh clone, and write the same cache files concurrently. Compiled here,
before the workers start (the kernel bots in a second process meanwhile, so both cores work), they are
written once, and every worker loads them from the cache.
"""

from __future__ import annotations

import pytest


def pytest_sessionstart(session) -> None:
    config = session.config
    if hasattr(config, "workerinput") or not getattr(config.option, "numprocesses", None):
        return  # an xdist worker, or a single-process run that compiles what it uses
    from agents.batched import compile_kernels

    compile_kernels(on_two_cores=True)


@pytest.fixture(scope="session", autouse=True)
def sb3_logs_in_a_temporary_folder_of_the_session(tmp_path_factory):
    """A Stable-Baselines3 model that learns without a logger of its own makes a folder in the system's temporary
    folder (``SB3-<date>``), one a test: ``$SB3_LOGDIR`` puts them in the session's, which pytest cleans up."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SB3_LOGDIR", str(tmp_path_factory.mktemp("sb3-logs")))
        yield
