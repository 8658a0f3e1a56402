"""Pinned whole games (OpenSpiel-style playthroughs): a change in deal, draw or rules shows here.

Each file holds a game record and the final state it must reach. Regenerate only for an
intended change of behaviour, and say so in the change.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skipbo_env import Game

PLAYTHROUGHS = sorted((Path(__file__).parent / "playthroughs").glob("*.json"))


@pytest.mark.parametrize("path", PLAYTHROUGHS, ids=lambda p: p.stem)
def test_pinned_game_replays_to_its_recorded_final_state(path):
    pinned = json.loads(path.read_text())
    final = Game.replay(pinned["record"]).to_dict()
    final.pop("rng")
    assert final == pinned["final_state"]
