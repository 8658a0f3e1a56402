"""A network of the project's own format names its inputs by the encoding's fields, so a change of the observation
layout that leaves its fields alone leaves it loading and playing the same moves; a first-format file (input
indices of layout 3) still loads, read as the fields its indices fall in."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from agents import load_policy
from agents.batched.neural import input_fields, input_indices, input_size
from agents.neural import FIRST_FORMAT, FIRST_FORMAT_LAYOUT, network_from_dict
from skipbo_env import Game, Rules
from skipbo_env.encoding import FIELDS, LAYOUT_ROWS, LAYOUT_SIZES, LAYOUT_VERSION, observe

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ("neural-2p", "td-scratch-2p")
GAMES, TURNS = 2, 20

# Run in a fresh interpreter: the encoding module is loaded from its source with one field inserted before all
# others (every offset moves by 3), then the shipped networks play GAMES seeded hands; prints their moves.
CHILD = '''
import importlib.abc, importlib.machinery, json, sys, warnings

MARK = '    glob = {\\n        "num_players"'


class Loader(importlib.machinery.SourceFileLoader):
    def get_code(self, fullname):
        source = self.get_data(self.path).decode()
        assert source.count(MARK) == 1, "the layout table moved: update the test's insertion point"
        return compile(source.replace(MARK, '    layout.add("added_for_the_test", 3)\\n' + MARK), self.path, "exec")


class Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name != "skipbo_env.encoding":
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        spec.loader = Loader(name, spec.origin)
        return spec


sys.meta_path.insert(0, Finder())
warnings.simplefilter("ignore", RuntimeWarning)  # the search's hash multiplies int64 scalars past their range
from skipbo_env.encoding import FIELDS
assert FIELDS["added_for_the_test"] == (0, 3), FIELDS["added_for_the_test"]
sys.path.insert(0, "tests/agents")
from test_neural_fields import moves
print(json.dumps({"hand": FIELDS["hand"], "moves": moves()}))
'''


def moves() -> list[int]:
    """The moves of the shipped networks, one on each seat, in ``GAMES`` seeded hands of up to ``TURNS`` turns."""
    bots = [load_policy(name) for name in SHIPPED]
    played = []
    for seed in range(GAMES):
        game = Game.new(Rules(num_players=2), seed=seed)
        while not game.is_over and game.turn < TURNS:
            action = bots[(game.current_seat + seed) % 2].act(observe(game, game.current_seat))
            played.append(int(action))
            game.step(action)
    return played


def test_a_field_inserted_before_all_others_leaves_the_shipped_networks_playing_the_same_moves():
    """The kernels read the layout's offsets as constants, so the other process runs them as plain Python
    (``NUMBA_DISABLE_JIT``; a cached kernel would keep today's offsets): the same moves as here, compiled."""
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    result = subprocess.run([sys.executable, "-c", CHILD], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    child = json.loads(result.stdout.splitlines()[-1])
    assert child["hand"][0] == FIELDS["hand"][0] + 3  # the offsets moved
    assert child["moves"] == moves()


def test_a_network_reads_its_fields_in_any_order_and_the_fields_added_since_it_was_trained_as_zero():
    network = load_policy("neural-2p").network
    document = network.to_dict()
    sizes = [entry["size"] for entry in document["inputs"]]
    assert [entry["field"] for entry in document["inputs"]] == list(input_fields(2))
    assert sizes == [input_size(name) for name in input_fields(2)] and "pending_discard" in input_fields(2)
    blocks = np.split(np.array(document["first"]), np.cumsum(sizes)[:-1])
    moved = {**document, "inputs": document["inputs"][::-1], "first": np.concatenate(blocks[::-1]).tolist()}
    missing = {**document, "inputs": document["inputs"][1:], "first": np.concatenate(blocks[1:]).tolist()}
    for variant in (moved, missing):
        loaded = network_from_dict(json.loads(json.dumps(variant)))
        assert np.array_equal(loaded.inputs, input_indices(2))
    assert all(np.array_equal(a, b) for a, b in zip(network_from_dict(moved).arrays, network.arrays))
    first = network_from_dict(missing).arrays[0]
    assert not first[:sizes[0]].any() and np.array_equal(first[sizes[0]:], network.arrays[0][sizes[0]:])


def test_a_field_the_observation_lacks_loads_only_unread():
    document = load_policy("neural-2p").network.to_dict()
    width = document["hidden"][0]
    extra = {**document, "inputs": [*document["inputs"], {"field": "gone", "size": 2}],
             "first": [*document["first"], [0] * width, [0] * width]}
    network_from_dict(extra)
    extra["first"][-1][0] = 1
    with pytest.raises(ValueError, match="reads the field 'gone', which the observation .* does not have"):
        network_from_dict(extra)
    resized = json.loads(json.dumps(document))
    resized["inputs"][0]["size"] = 4
    resized["first"] = resized["first"][1:]
    with pytest.raises(ValueError, match="field 'num_players' has 4 values in the model and 5"):
        network_from_dict(resized)


def test_a_first_format_file_loads_as_the_fields_its_indices_fall_in():
    network = load_policy("td-scratch-2p").network
    rows, at = {}, 0
    for name, size in FIRST_FORMAT_LAYOUT:
        rows[name] = list(range(at, at + size))
        at += size
    document = {**network.to_dict(), "format": FIRST_FORMAT,
                "inputs": [i for name in input_fields(2) for i in rows[name]]}
    assert all(np.array_equal(a, b) for a, b in zip(network_from_dict(document).arrays, network.arrays))
    if LAYOUT_VERSION == 3:  # the frozen table is layout 3's
        assert [(name, size) for name, _, size in LAYOUT_ROWS] == list(FIRST_FORMAT_LAYOUT[:-1])
    assert at - 1 == LAYOUT_SIZES[3]
