"""Pinned whole games, action by action: observation, legal ids and rewards after every action,
and the final state (see tests/envs/playthrough_files.py, which also regenerates them)."""

from __future__ import annotations

import json

import pytest

from skipbo_env import Game, Rules
from tests.envs.playthrough_files import FOLDER, GAMES, play


def pinned(name: str) -> dict:
    return json.loads((FOLDER / f"{name}.json").read_text())


@pytest.mark.parametrize("name", sorted(GAMES))
def test_every_action_of_a_pinned_game_sees_what_was_recorded(name):
    expected = pinned(name)
    settings, seed = GAMES[name]
    assert (expected["settings"], expected["seed"]) == (settings, seed)
    played = play(settings, seed)
    assert len(played["steps"]) == len(expected["steps"])
    for index, (now, then) in enumerate(zip(played["steps"], expected["steps"])):
        assert now == then, f"{name}: action {index} ({then['agent']}, id {then['action']}) differs"
    assert played["final_state"] == expected["final_state"]


@pytest.mark.parametrize("name", sorted(GAMES))
def test_the_rules_engine_replays_a_pinned_game_to_its_final_state(name):
    expected = pinned(name)
    game = Game.new(Rules.from_dict(expected["final_state"]["rules"]), seed=expected["hand_seed"])
    for step in expected["steps"]:
        game.step(step["action"])
    final = game.to_dict()
    final.pop("rng")
    assert final == expected["final_state"]


def test_the_pinned_games_end_in_every_way_a_hand_can_end():
    outcomes = {pinned(name)["final_state"].get("outcome") for name in GAMES}
    assert outcomes == {"win", "draw", "truncated"}
