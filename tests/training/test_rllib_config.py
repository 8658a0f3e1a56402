"""The ``backend: rllib`` keys of the training config and the seat drawing; neither needs Ray."""

from __future__ import annotations

import uuid

import pytest

from training.config import ConfigError, config_from_dict
from training.rllib.seating import LEARNER, SeatDrawer, bot_modules, snapshot_module


def rllib_config(**sections):
    return config_from_dict({"backend": "rllib", "ppo": {"batch_size": 64}, **sections})


def test_an_unknown_rllib_key_is_named_with_the_allowed_ones():
    with pytest.raises(ConfigError, match=r"unknown key rllib\.num_runners: allowed keys in rllib are address, "
                                          r"num_env_runners"):
        rllib_config(rllib={"num_runners": 2})


@pytest.mark.parametrize("key,value,message", [
    ("num_env_runners", -1, r"rllib\.num_env_runners=-1 is not allowed: use a number >= 0"),
    ("num_envs_per_env_runner", 0, r"rllib\.num_envs_per_env_runner=0 is not allowed: use a number >= 1"),
    ("num_learners", "two", r"rllib\.num_learners='two' is not allowed: use an int"),
    ("num_cpus_per_env_runner", 0, r"rllib\.num_cpus_per_env_runner=0\.0 is not allowed: use a number > 0"),
])
def test_bad_rllib_values_are_refused_naming_the_key(key, value, message):
    with pytest.raises(ConfigError, match=message):
        rllib_config(rllib={key: value})


def test_the_learner_as_opponent_is_an_rllib_kind_only():
    assert rllib_config(opponents={"mix": {"self": 1.0}}).opponents.mix == {"self": 1.0}
    with pytest.raises(ConfigError, match=r"opponents\.mix\.self: .* backend: rllib kind"):
        config_from_dict({"opponents": {"mix": {"self": 1.0}}})


def test_rllib_refuses_settings_of_the_sb3_path():
    with pytest.raises(ConfigError, match=r"pretrain\.enabled=true is not allowed with backend: rllib"):
        rllib_config(pretrain={"enabled": True})
    with pytest.raises(ConfigError, match=r"env\.vec_env='subproc' is not allowed with backend: rllib"):
        rllib_config(env={"vec_env": "subproc"})
    with pytest.raises(ConfigError, match=r"ppo\.batch_size=512 is larger than an iteration's batch"):
        config_from_dict({"backend": "rllib", "ppo": {"batch_size": 512}, "rllib": {"train_batch_size": 256}})


def test_the_shipped_rllib_config_is_valid():
    from training.config import load_config

    config = load_config("rllib_2p", ["rllib.address=auto", "rllib.iterations=2"])
    assert (config.backend, config.rllib.address, config.rllib.iterations) == ("rllib", "auto", 2)


class Episode:
    def __init__(self) -> None:
        self.id_ = uuid.uuid4().hex


def test_every_hand_seats_the_learner_once_and_draws_the_others_from_the_mix():
    mix = {"snapshots": 0.4, "greedy": 0.3, "planner:avoid_feeding=false": 0.3}
    drawer = SeatDrawer(mix, num_players=3, random_seat=True, seed=5)
    seen_modules, learner_seats = set(), set()
    for _ in range(200):
        episode = Episode()
        modules = [drawer(f"player_{seat}", episode) for seat in range(3)]
        assert modules.count(LEARNER) == 1
        assert [drawer(f"player_{seat}", episode) for seat in (2, 0, 1)] == [modules[2], modules[0], modules[1]]
        learner_seats.add(modules.index(LEARNER))
        seen_modules.update(modules)
    assert learner_seats == {0, 1, 2}
    assert seen_modules == {LEARNER, "bot_0", "bot_1"}  # no snapshot is kept yet
    assert bot_modules(mix) == {"greedy": "bot_0", "planner:avoid_feeding=false": "bot_1"}
    drawer.kept_snapshots = 2
    drawn = {drawer("player_1", Episode()) for _ in range(200)} | {drawer("player_0", Episode()) for _ in range(200)}
    assert {snapshot_module(0), snapshot_module(1)} <= drawn and snapshot_module(2) not in drawn


def seatings(drawer: SeatDrawer, hands: int) -> list[list[tuple[str, str]]]:
    return [drawer.seating(Episode().id_) for _ in range(hands)]


def test_seatings_follow_the_seed_and_the_env_runner_in_the_order_hands_start():
    mix = {"self": 1.0, "greedy": 1.0}
    drawn = seatings(SeatDrawer(mix, 2, True, seed=1), 30)
    assert drawn == seatings(SeatDrawer(mix, 2, True, seed=1), 30)  # other (random) episode ids, the same seatings
    assert drawn != seatings(SeatDrawer(mix, 2, True, seed=2), 30)
    assert {tuple(seating) for seating in drawn} >= {((LEARNER, LEARNER), ("self", LEARNER)),
                                                     (("self", LEARNER), (LEARNER, LEARNER))}
    runner_1, runner_2 = SeatDrawer(mix, 2, True, seed=1), SeatDrawer(mix, 2, True, seed=1)
    runner_1.start_stream(1)
    runner_2.start_stream(2)
    on_runner_1 = seatings(runner_1, 30)
    assert on_runner_1 != seatings(runner_2, 30) and on_runner_1 != drawn
    runner_2.start_stream(1)
    assert seatings(runner_2, 30) == on_runner_1


def test_a_hand_keeps_its_seating_until_it_ends():
    drawer = SeatDrawer({"self": 1.0, "greedy": 1.0, "random": 1.0}, 3, True, seed=0)
    episode = Episode()
    modules = [drawer(f"player_{seat}", episode) for seat in range(3)]
    seatings(drawer, 5)  # other hands start meanwhile
    assert [drawer(f"player_{seat}", episode) for seat in (2, 1, 0)] == modules[::-1]
    assert [module for _, module in drawer.pop(episode.id_)] == modules


def test_a_mix_of_snapshots_only_needs_a_snapshot_first():
    drawer = SeatDrawer({"snapshots": 1.0}, 2, False, seed=0)
    with pytest.raises(ValueError, match="snapshots only"):
        drawer("player_0", Episode())
    drawer.kept_snapshots = 1
    episode = Episode()
    assert [drawer("player_0", episode), drawer("player_1", episode)] == [LEARNER, snapshot_module(0)]
