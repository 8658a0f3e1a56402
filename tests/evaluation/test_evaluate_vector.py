"""``skipbo evaluate`` on the batched engine: the engine choice, the same schedule and figures as the
python harness, identical games for the bots and deterministic networks, and errors that keep finished games.

The numba kernels compile once (about 15 s cold, cached on disk afterwards); the first test that
plays on the vector engine pays it for the module.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from agents.network import NetworkPolicy, parameter_shapes
from agents.planner import PlannerBot
from agents.registry import KERNEL_SPECS
from skipbo_env import Rules
from skipbo_env.actions import FIRST_DISCARD
from skipbo_env.encoding import OBS_SIZE
from skipbo_cli.main import main
from evaluation import EngineError, run_tournament, schedule

SMALL = Rules(stock_size=5)


def random_weights(seed: int, hidden=(32,)) -> dict:
    generator = np.random.default_rng(seed)
    return {name: generator.normal(0.0, 0.5, size=shape).astype(np.float32)
            for name, shape in parameter_shapes(OBS_SIZE, list(hidden)).items()}


def random_network(seed: int, hidden=(32,), play_bias: float = 0.0) -> NetworkPolicy:
    """A network with random weights: a deterministic (argmax) player unlike any bot; ``play_bias``
    is added to the logits of the plays (ids below the discards), so that it finishes hands."""
    weights = random_weights(seed, hidden)
    weights["action_net.bias"][:FIRST_DISCARD] += play_bias
    return NetworkPolicy(weights, list(hidden))


class FailingNetwork:
    """Plays like a network until its ``fail_at``-th batched call, which raises."""

    name = "failing"

    def __init__(self, fail_at: int) -> None:
        self.inner = random_network(5)
        self.calls = 0
        self.fail_at = fail_at

    def logits(self, observations):
        self.calls += 1
        if self.calls >= self.fail_at:
            raise RuntimeError("boom")
        return self.inner.logits(observations)

    def act(self, observation):
        return self.inner.act(observation)


# ---------------------------------------------------------------------------- choosing the engine
def test_auto_picks_vector_for_the_kernel_bots_and_networks_and_python_for_other_policies():
    assert run_tournament(["greedy", "random"], SMALL, games=2, engine="auto").engine == "vector"
    assert run_tournament([random_network(1), "greedy"], SMALL, games=2, engine="auto").engine == "vector"
    assert run_tournament(["planner:hold_wilds=false", "greedy"], SMALL, games=2, engine="auto").engine == "vector"
    result = run_tournament([PlannerBot(), "greedy"], SMALL, games=2, engine="auto", names=["mine", "greedy"])
    assert result.engine == "python" and "'mine'" in result.engine_reason


def test_auto_falls_back_to_python_to_save_game_records(tmp_path):
    result = run_tournament(["greedy", "random"], SMALL, games=2, engine="auto", save_dir=str(tmp_path))
    assert result.engine == "python" and len(list(tmp_path.iterdir())) == 2


def test_the_vector_engine_refuses_an_agent_it_cannot_play_and_names_it():
    with pytest.raises(EngineError, match=r"agent 'mine' cannot play on the vector engine.*" + re.escape(KERNEL_SPECS)):
        run_tournament(["greedy", PlannerBot()], SMALL, games=2, engine="vector", names=["greedy", "mine"])
    with pytest.raises(EngineError, match="--save-games"):
        run_tournament(["greedy", "random"], SMALL, games=2, engine="vector", save_dir="unused")
    with pytest.raises(EngineError, match="engine='fast' is not allowed"):
        run_tournament(["greedy", "random"], SMALL, games=2, engine="fast")


def test_the_command_refuses_the_vector_engine_for_a_python_class(capsys):
    assert main(["evaluate", "--agents", "agents.planner:PlannerBot", "greedy", "--games", "2", "--engine",
                 "vector"]) == 2
    error = capsys.readouterr().err
    assert "'agents.planner:PlannerBot' cannot play on the vector engine" in error and "--engine python" in error


# ---------------------------------------------------------------------------- same schedule, same figures
def test_the_vector_engine_plays_the_harness_schedule_every_deal_in_every_seating():
    rules = Rules(num_players=4, partners=True, stock_size=5)
    result = run_tournament(["greedy", "random"], rules, games=12, seed=7, engine="vector")
    assert result.complete
    expected = schedule(2, rules, 12, 7)
    assert [(g.index, g.deal, g.seed, g.seating) for g in result.games] == \
           [(s.index, s.deal, s.seed, s.seating) for s in expected]
    for game in result.games:
        assert sum(game.seat_turns) == game.turns + 1  # the turn counter starts at 0
        assert all(actions >= turns for actions, turns in zip(game.seat_actions, game.seat_turns))
        if game.outcome == "win":
            assert len(game.winners) == 2 and game.winners[1] - game.winners[0] == 2  # partners win together


def test_turn_and_action_counts_follow_the_same_rule_on_both_engines():
    python = run_tournament(["greedy", "random"], SMALL, games=20, seed=2, engine="python")
    vector = run_tournament(["greedy", "random"], SMALL, games=20, seed=2, engine="vector")
    for engine in (python, vector):
        offsets = {sum(g.seat_turns) - g.turns for g in engine.games}
        assert len(offsets) == 1
    assert {sum(g.seat_turns) - g.turns for g in python.games} == {sum(g.seat_turns) - g.turns for g in vector.games}


def same_games_on_both_engines(agents, rules, games, seed):
    """Play the tournament on both engines; assert every game is the same and return the vector one."""
    python = run_tournament(agents, rules, games=games, seed=seed, engine="python")
    vector = run_tournament(agents, rules, games=games, seed=seed, engine="vector")
    assert vector.engine == "vector" and vector.complete and python.complete
    assert vector.to_json()["games"] == python.to_json()["games"]
    return vector


def test_greedy_and_random_play_identical_games_on_both_engines():
    result = same_games_on_both_engines(["greedy", "random"], Rules(stock_size=10), games=40, seed=11)
    assert result.agent_stats()["greedy"]["wins"] > 30


@pytest.mark.parametrize("planner, rules", [
    ("planner", Rules(stock_size=6)),
    ("planner:smart_discard=false", Rules(num_players=3, stock_size=4)),
    ("planner:avoid_feeding=false,always_block=true", Rules(num_players=4, partners=True, stock_size=4)),
])
def test_planner_against_greedy_plays_identical_games_on_both_engines(planner, rules):
    result = same_games_on_both_engines([planner, "greedy"], rules, games=2 * rules.num_teams, seed=5)
    assert result.agent_stats()[planner]["wins"] >= 1


@pytest.mark.parametrize("agents, rules", [
    (["expert", "planner"], Rules(stock_size=8)),
    (["expert:plan_discards=false,card_counting=false", "greedy", "random"], Rules(num_players=3, stock_size=4)),
    (["expert", "greedy"], Rules(num_players=4, partners=True, stock_size=4)),
])
def test_the_expert_plays_identical_games_on_both_engines(agents, rules):
    result = same_games_on_both_engines(agents, rules, games=2 * rules.num_teams, seed=8)
    assert result.agent_stats()[agents[0]]["wins"] >= 1


def test_the_command_reports_the_same_expert_games_on_both_engines(tmp_path, capsys):
    reports = {}
    for engine in ("python", "vector"):
        out = tmp_path / f"{engine}.json"
        assert main(["evaluate", "--agents", "expert", "planner", "--games", "6", "--seed", "12", "--stock-size", "6",
                     "--engine", engine, "--json", str(out), "--no-progress"]) == 0
        reports[engine] = json.loads(out.read_text())
    assert "engine: vector" in capsys.readouterr().out
    assert reports["vector"]["engine"] == "vector" and reports["python"]["engine"] == "python"
    assert reports["vector"]["games"] == reports["python"]["games"] and len(reports["vector"]["games"]) == 6
    assert reports["vector"]["agents"]["expert"]["wins"] == reports["python"]["agents"]["expert"]["wins"]


def test_deterministic_networks_play_identical_games_on_both_engines():
    agents = [random_network(1, play_bias=4.0), random_network(2, play_bias=4.0)]
    rules = Rules(stock_size=5, max_turns=200)
    # seed 9: these networks on the 812-value observation reach a drawn hand among the 16
    python = run_tournament(agents, rules, games=16, seed=9, engine="python", names=["one", "two"])
    vector = run_tournament(agents, rules, games=16, seed=9, engine="vector", names=["one", "two"])
    assert vector.complete and python.complete
    assert vector.to_json()["games"] == python.to_json()["games"]
    assert {g.outcome for g in vector.games} >= {"win", "draw"}


def test_a_vector_tournament_is_reproducible_and_does_not_depend_on_threads():
    agents = [random_network(4), "greedy", "random"]
    one = run_tournament(agents, SMALL, games=30, seed=9, engine="vector", names=["net", "greedy", "random"])
    two = run_tournament(agents, SMALL, games=30, seed=9, engine="vector", names=["net", "greedy", "random"],
                         workers=2)
    assert one.to_json()["games"] == two.to_json()["games"]
    for s in one.agent_stats().values():
        assert s["wins"] + s["draws"] + s["losses"] == s["games"] == 20


def test_a_vector_tournament_does_not_depend_on_how_many_games_share_a_batch(monkeypatch):
    import evaluation.vector_runner

    rules = Rules(num_players=3, stock_size=8)
    whole = run_tournament(["greedy", "random", "planner"], rules, games=18, seed=4, engine="vector")
    monkeypatch.setattr(evaluation.vector_runner, "VECTOR_BATCH", 7)
    in_sevens = run_tournament(["greedy", "random", "planner"], rules, games=18, seed=4, engine="vector")
    assert whole.complete and in_sevens.complete
    assert in_sevens.to_json()["games"] == whole.to_json()["games"]


def test_on_the_vector_engine_duplicate_deals_play_each_deal_once_per_seat_rotation():
    result = run_tournament(["greedy", "random"], Rules(stock_size=10), games=10, seed=30, engine="vector")
    assert [g.deal for g in result.games] == [0, 0, 1, 1, 2, 2, 3, 3, 4, 4]
    assert [g.seating for g in result.games[:2]] == [(0, 1), (1, 0)]
    for first, second in zip(result.games[::2], result.games[1::2]):
        assert first.seed == second.seed and first.seating != second.seating
    assert len({g.seed for g in result.games}) == 5


class FirstLegal:
    """A batch player (``act_batch`` and no ``act``): the lowest legal id, counting the games of each call."""

    name = "first-legal"

    def __init__(self) -> None:
        self.batch_sizes = []

    def act_batch(self, observations, masks):
        self.batch_sizes.append(len(masks))
        return masks.argmax(axis=1)


def test_a_batch_player_is_asked_for_many_games_in_one_call():
    player = FirstLegal()
    result = run_tournament([player, "greedy"], SMALL, games=40, seed=0, engine="vector")
    assert result.complete and len(result.games) == 40
    assert max(player.batch_sizes) > 1 and sum(player.batch_sizes) == sum(
        sum(g.seat_actions[s] for s, agent in enumerate(g.seating) if agent == 0) for g in result.games)


def test_a_callable_plays_as_a_batch_player_and_auto_picks_the_vector_engine():
    batch_sizes = []

    def first_legal(observations, masks):
        batch_sizes.append(len(masks))
        return masks.argmax(axis=1)

    result = run_tournament([first_legal, "greedy"], SMALL, games=20, seed=0, engine="auto")
    assert result.engine == "vector" and result.complete and max(batch_sizes) > 1


def test_the_python_engine_refuses_a_batch_player_and_names_it():
    with pytest.raises(EngineError, match=r"agent 'first-legal' is a batch player.*engine='vector'"):
        run_tournament([FirstLegal(), "greedy"], SMALL, games=2, engine="python")
    with pytest.raises(EngineError, match=r"agent 'first-legal' is a batch player.*saving game records"):
        run_tournament([FirstLegal(), "greedy"], SMALL, games=2, engine="auto", save_dir="unused")


# ---------------------------------------------------------------------------- errors
def test_an_agent_that_raises_stops_the_vector_tournament_and_keeps_finished_games():
    result = run_tournament([FailingNetwork(fail_at=60), "random"], Rules(stock_size=2), games=40, seed=0,
                            engine="vector")
    assert not result.complete and result.error
    assert "agent 'failing'" in result.error and "RuntimeError: boom" in result.error
    assert "game seed" in result.error
    assert 0 < len(result.games) < 40
    assert result.to_json()["complete"] is False


# ---------------------------------------------------------------------------- the command
def test_the_command_on_the_vector_engine_writes_the_same_report_and_json(tmp_path, capsys):
    out, plot = tmp_path / "r.json", tmp_path / "r.png"
    code = main(["evaluate", "--agents", "greedy", "random", "random", "--games", "12", "--seed", "4",
                 "--stock-size", "5", "--json", str(out), "--plot", str(plot)])
    assert code == 0
    printed = capsys.readouterr().out
    assert "engine: vector (auto" in printed
    assert "win rate" in printed and "pairwise" in printed and "openskill" in printed
    data = json.loads(out.read_text())
    assert data["complete"] is True and data["engine"] == "vector" and data["games_played"] == 12
    for name in ("greedy", "random", "random#2"):
        agent = data["agents"][name]
        assert {"games", "wins", "draws", "win_rate", "ci95"} <= set(agent) and len(agent["ci95"]) == 2
    assert {"versions", "seeds", "pairwise", "ratings", "seatings"} <= set(data)
    assert "kernel bot in seat s of game i" in data["seeds"]["derivation"] and len(data["seeds"]["games"]) == 12
    assert plot.stat().st_size > 0


def test_the_command_plays_a_saved_model_on_the_vector_engine(tmp_path, capsys):
    from agents.saved_model import save_model

    metadata = {"obs_size": OBS_SIZE, "hidden": [16], "activation": "relu"}
    path = save_model(tmp_path / "model.zip", random_weights(6, hidden=(16,)), metadata)
    out = tmp_path / "r.json"
    assert main(["evaluate", "--agents", str(path), "greedy", "--games", "4", "--stock-size", "5",
                 "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["engine"] == "vector" and data["complete"] is True
    assert "engine: vector" in capsys.readouterr().out

