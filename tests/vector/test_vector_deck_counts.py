"""Batches of different deck counts in one process, with kernels loaded from numba's disk cache.

The record of a hand (``game_dtype(decks)``) has a different layout for every deck count, so the
kernels are compiled once per deck count. Issue 10: when two deck counts had been compiled by
two different processes, a third process that loaded both from the cache ran the first layout's
code for the second (the draw pile read as zeros at the first step). The test below compiles
each configuration in a process of its own, then plays all of them in one process, in both
orders, against the rules engine.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]

CONFIGURATIONS = (
    {"num_players": 2, "decks": 1, "stock_size": 3},
    {"num_players": 4, "decks": 2, "stock_size": 3, "partners": True},
)
"""One per deck count (the record layout), at several table sizes; small stocks keep hands short."""

DIFFERENTIAL_SCRIPT = """
import json, sys
from skipbo_env import Rules
from agents.batched.bots import mixed_chooser
from skipbo_env.vector.check import differential_run
for settings in json.loads(sys.argv[1]):
    coverage = differential_run(Rules(**settings), mixed_chooser(2), hands=2, batch_size=2)
    print(settings["decks"], coverage["hands"], flush=True)
"""


def _play_in_one_process(configurations, cache_dir: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "NUMBA_CACHE_DIR": str(cache_dir)}
    return subprocess.Popen(
        [sys.executable, "-c", DIFFERENTIAL_SCRIPT, json.dumps(list(configurations))],
        cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def _expect_success(process: subprocess.Popen, what: str) -> None:
    out, err = process.communicate(timeout=600)
    assert process.returncode == 0, f"{what} failed:\n{out}\n{err[-3000:]}"


@pytest.mark.slow
def test_deck_counts_compiled_apart_play_correctly_together_from_a_warm_cache(tmp_path):
    cache_dir = tmp_path / "numba"
    for settings in CONFIGURATIONS:  # one after the other: numba's cache index is not safe for parallel writers
        _expect_success(_play_in_one_process([settings], cache_dir), f"the cold run of {settings}")
    for order in (CONFIGURATIONS, CONFIGURATIONS[::-1]):
        _expect_success(_play_in_one_process(order, cache_dir), f"the warm run of {[s['decks'] for s in order]}")
