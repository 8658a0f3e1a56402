"""Tournaments: balanced seats, duplicate deals, reproducibility, errors that keep finished games, the CLI."""

from __future__ import annotations

import json
import textwrap
from collections import defaultdict

import pytest

from agents import PolicySpecError
from skipbo_env import Game, Rules
from skipbo_cli.main import main
from evaluation import lineups, run_tournament, schedule, seatings, wilson_interval
from evaluation.schedule import scheduled_games

SMALL = Rules(stock_size=5)

BAD_BOTS = """
    import numpy as np

    class IllegalOnThirdHand:
        def __init__(self):
            self.hands = 0

        def reset(self, seed):
            self.hands += 1

        def act(self, observation):
            if self.hands >= 3:
                return 144 if observation["action_mask"][144] == 0 else 0
            return int(np.flatnonzero(observation["action_mask"])[0])

    class Raises:
        def act(self, observation):
            raise RuntimeError("boom")
"""


def test_with_two_players_every_pairing_of_three_agents_is_played():
    assert lineups(3, 2) == [(0, 1), (0, 2), (1, 2)]


def test_fewer_agents_than_seats_take_turns_so_each_holds_as_many_seats():
    assert lineups(2, 4) == [(0, 1, 0, 1), (1, 0, 1, 0)]
    counts = defaultdict(int)
    for lineup in lineups(3, 4):
        for agent in lineup:
            counts[agent] += 1
    assert set(counts.values()) == {4}


@pytest.mark.parametrize("agents, players, games, seat_orders", [
    (2, 2, 3, "rotations"), (2, 2, 4, "rotations"), (3, 4, 5, "rotations"), (4, 4, 30, "all"), (2, 3, 1, "all")])
def test_the_games_a_schedule_plays_are_rounded_up_to_whole_sets(agents, players, games, seat_orders):
    rules = Rules(num_players=players)
    played = scheduled_games(agents, rules, games, seat_orders)
    assert played == len(schedule(agents, rules, games, seed=1, seat_orders=seat_orders)) >= games
    assert played % len(seatings(agents, rules, seat_orders)) == 0 and played - games < len(seatings(agents, rules, seat_orders))


def test_in_partners_an_agent_holds_both_seats_of_a_team():
    rules = Rules(num_players=4, partners=True)
    for seating in seatings(2, rules):
        assert seating[0] == seating[2] and seating[1] == seating[3] and seating[0] != seating[1]


def test_rotations_keep_the_order_around_the_table_and_all_orders_even_out_the_neighbours():
    rules = Rules(num_players=4)
    net, bot, greedy, greedy2 = range(4)

    def follows(orders, first, second):  # seatings where `second` sits right after `first`
        return sum(seating[(seating.index(first) + 1) % 4] == second for seating in orders)

    rotations = seatings(4, rules)
    assert len(rotations) == 4 and follows(rotations, net, bot) == 4  # always the same neighbour
    every = seatings(4, rules, "all")
    assert len(every) == len(set(every)) == 24 and every[:1] == [(0, 1, 2, 3)]
    assert follows(every, net, bot) == follows(every, net, greedy) == follows(every, net, greedy2) == 8
    for agent in range(4):
        assert sorted(seating.index(agent) for seating in every) == sorted(list(range(4)) * 6)


def test_all_orders_of_a_lineup_with_repeated_agents_are_each_played_once():
    rules = Rules(num_players=4)
    assert seatings(2, rules, "all") == [(0, 1, 0, 1), (0, 1, 1, 0), (0, 0, 1, 1), (1, 0, 0, 1), (1, 0, 1, 0),
                                         (1, 1, 0, 0)]
    assert seatings(2, Rules(stock_size=5), "all") == seatings(2, Rules(stock_size=5)) == [(0, 1), (1, 0)]
    assert len(schedule(4, rules, games=25, seed=0, seat_orders="all")) == 48  # whole sets of 24
    with pytest.raises(ValueError, match="seat_orders='mirror' is not allowed: use one of rotations, all"):
        seatings(2, rules, "mirror")


def test_duplicate_deals_give_every_agent_every_seat_with_the_same_cards():
    rules = Rules(num_players=3, stock_size=5)
    specs = schedule(3, rules, games=12, seed=5)
    by_deal = defaultdict(list)
    for spec in specs:
        by_deal[spec.deal].append(spec)
    assert len(by_deal) == 4
    for games in by_deal.values():
        assert len({spec.seed for spec in games}) == 1
        for agent in range(3):
            assert sorted(spec.seating.index(agent) for spec in games) == [0, 1, 2]
        starts = [Game.new(rules, seed=spec.seed).to_dict() for spec in games]
        assert all(start == starts[0] for start in starts)


def test_without_duplicate_deals_every_game_has_its_own_deal():
    specs = schedule(2, SMALL, games=10, seed=5, duplicate=False)
    assert len({spec.seed for spec in specs}) == 10


def test_games_are_rounded_up_to_whole_sets_of_seatings():
    assert len(schedule(3, SMALL, games=7, seed=0)) == 12


def test_the_wilson_interval_matches_known_values():
    low, high = wilson_interval(5, 10)
    assert low == pytest.approx(0.2366, abs=1e-4) and high == pytest.approx(0.7634, abs=1e-4)
    assert wilson_interval(0, 10) == pytest.approx((0.0, 0.2775), abs=1e-4)


def test_the_wilson_interval_always_holds_the_estimate():
    for trials in (1, 7, 2000, 4000, 6000):
        for wins in (0, 1, trials // 2, trials - 1, trials):
            low, high = wilson_interval(wins, trials)
            assert 0.0 <= low <= wins / trials <= high <= 1.0


def test_a_tournament_is_reproducible_and_counts_add_up():
    one = run_tournament(["greedy", "random", "planner"], SMALL, games=12, seed=3)
    two = run_tournament(["greedy", "random", "planner"], SMALL, games=12, seed=3)
    assert one.to_json()["games"] == two.to_json()["games"]
    stats = one.agent_stats()
    assert sum(s["games"] for s in stats.values()) == 2 * 12
    for s in stats.values():
        assert s["wins"] + s["draws"] + s["losses"] == s["games"]
        assert s["ci95"][0] <= s["win_rate"] <= s["ci95"][1]


def test_worker_processes_give_the_same_games():
    here = run_tournament(["greedy", "random"], SMALL, games=8, seed=2)
    spread = run_tournament(["greedy", "random"], SMALL, games=8, seed=2, workers=2)
    assert spread.to_json()["games"] == here.to_json()["games"]


def test_an_illegal_action_stops_the_tournament_and_keeps_finished_games(tmp_path):
    path = tmp_path / "bad.py"
    path.write_text(textwrap.dedent(BAD_BOTS))
    result = run_tournament([f"{path}:IllegalOnThirdHand", "random"], SMALL, games=10, seed=0)
    assert not result.complete and len(result.games) == 2
    assert "IllegalOnThirdHand" in result.error and "illegal action" in result.error
    assert f"game seed {schedule(2, SMALL, 10, 0)[2].seed}" in result.error
    assert result.to_json()["complete"] is False


def test_an_agent_that_raises_is_named_with_the_game_seed(tmp_path):
    path = tmp_path / "bad.py"
    path.write_text(textwrap.dedent(BAD_BOTS))
    result = run_tournament(["random", f"{path}:Raises"], SMALL, games=4, seed=0)
    assert "Raises" in result.error and "RuntimeError: boom" in result.error and "game seed" in result.error


def test_a_bad_spec_is_refused_before_any_game():
    with pytest.raises(PolicySpecError, match="unknown policy spec 'nobody'"):
        run_tournament(["greedy", "nobody"], SMALL, games=2)


def test_the_command_writes_json_plot_and_replayable_games(tmp_path, capsys):
    out, plot, games = tmp_path / "r.json", tmp_path / "r.png", tmp_path / "games"
    code = main(["evaluate", "--agents", "greedy", "random", "planner", "--games", "6", "--seed", "4",
                 "--stock-size", "5", "--json", str(out), "--plot", str(plot), "--save-games", str(games)])
    assert code == 0
    printed = capsys.readouterr().out
    assert "win rate" in printed and "pairwise" in printed and "openskill" in printed
    data = json.loads(out.read_text())
    assert data["complete"] is True and data["rules"]["stock_size"] == 5 and data["seed"] == 4
    for name in ("greedy", "random", "planner"):
        agent = data["agents"][name]
        assert {"games", "wins", "draws", "win_rate", "ci95"} <= set(agent) and len(agent["ci95"]) == 2
    assert {"versions", "seeds", "pairwise", "ratings"} <= set(data)
    assert plot.stat().st_size > 0
    records = sorted(games.iterdir())
    assert len(records) == 6
    record = json.loads(records[0].read_text())
    replayed = Game.replay(record)
    assert replayed.outcome == record["outcome"] and list(replayed.winners) == record["winners"]


def test_the_command_plays_every_order_of_the_agents_on_either_engine(tmp_path, capsys):
    outputs = {}
    for engine in ("python", "vector"):
        out = tmp_path / f"{engine}.json"
        code = main(["evaluate", "--agents", "planner", "greedy", "random", "random", "--players", "4",
                     "--games", "24", "--seed", "3", "--stock-size", "4", "--seat-orders", "all", "--engine", engine,
                     "--json", str(out)])
        assert code == 0
        assert "24 seatings per set, every order of the agents" in capsys.readouterr().out
        outputs[engine] = json.loads(out.read_text())
    data = outputs["vector"]
    assert data["seat_orders"] == "all" and "--seat-orders all" in data["command"]
    assert len(data["seatings"]) == 24 and ["random#2", "random", "greedy", "planner"] in data["seatings"]
    assert [g["winners"] for g in data["games"]] == [g["winners"] for g in outputs["python"]["games"]]


def test_the_command_marks_the_json_incomplete_after_an_agent_error(tmp_path, capsys):
    path = tmp_path / "bad.py"
    path.write_text(textwrap.dedent(BAD_BOTS))
    out = tmp_path / "r.json"
    code = main(["evaluate", "--agents", f"{path}:IllegalOnThirdHand", "greedy", "--games", "10",
                 "--stock-size", "5", "--json", str(out)])
    assert code == 1
    assert "IllegalOnThirdHand" in capsys.readouterr().err
    data = json.loads(out.read_text())
    assert data["complete"] is False and data["games_played"] == 2 and "illegal action" in data["error"]


def test_the_command_refuses_a_bad_spec_and_a_setting_the_rules_refuse(capsys):
    assert main(["evaluate", "--agents", "greedy", "nobody", "--games", "2"]) == 2
    assert "unknown policy spec 'nobody'" in capsys.readouterr().err
    assert main(["evaluate", "--agents", "greedy", "random", "--players", "3", "--partners"]) == 2
    assert "partners=True needs 4 or 6 players" in capsys.readouterr().err


def test_the_command_says_which_engine_played_and_why(tmp_path, capsys):
    out = tmp_path / "r.json"
    assert main(["evaluate", "--agents", "agents.planner:PlannerBot", "greedy", "--games", "2", "--stock-size", "5",
                 "--json", str(out)]) == 0
    assert "engine: python (auto: 'agents.planner:PlannerBot' plays only on the python engine)" \
        in capsys.readouterr().out
    data = json.loads(out.read_text())
    assert data["engine"] == "python" and "policy seed" in data["seeds"]["derivation"]


def test_a_named_spec_is_reported_under_its_short_name(tmp_path, capsys):
    path = tmp_path / "mybot.py"
    path.write_text("from agents.greedy import GreedyBot\n\nclass StockFirst(GreedyBot):\n    pass\n")
    out = tmp_path / "r.json"
    code = main(["evaluate", "--agents", f"mine={path}:StockFirst", "g=greedy", "--games", "4", "--stock-size", "5",
                 "--json", str(out), "--no-progress"])
    assert code == 0
    data = json.loads(out.read_text())
    assert set(data["agents"]) == {"mine", "g"}
    assert "mine" in capsys.readouterr().out


def test_progress_off_a_terminal_is_a_few_labelled_lines():
    import io

    from evaluation.tournament import progress_bar

    stream = io.StringIO()
    bar = progress_bar(40, True, "greedy vs random (python engine)", stream)
    for _ in range(40):
        bar.update(1)
    bar.close()
    lines = stream.getvalue().splitlines()
    assert len(lines) == 10
    assert lines[0].startswith("greedy vs random (python engine): 4/40 games (10%), ")
    assert lines[-1].startswith("greedy vs random (python engine): 40/40 games (100%), ")
    quiet = io.StringIO()
    progress_bar(40, False, "x", quiet).update(40)
    assert quiet.getvalue() == ""


def test_progress_in_a_terminal_is_a_bar_with_the_label():
    import io

    from evaluation.tournament import progress_bar

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    stream = Terminal()
    bar = progress_bar(5, True, "g vs r (vector engine)", stream)
    bar.update(5)
    bar.close()
    assert "g vs r (vector engine)" in stream.getvalue() and "5/5" in stream.getvalue()


LYING_BOT = """
    import numpy as np


    class AlwaysEqual(int):
        def __eq__(self, other):
            return True

        __hash__ = int.__hash__


    class Cheater:
        def act(self, observation):
            illegal = np.flatnonzero(np.asarray(observation["action_mask"]) == 0)
            return AlwaysEqual(int(illegal[0]))
"""


def test_a_policy_whose_action_equals_everything_is_stopped_not_obeyed(tmp_path):
    path = tmp_path / "cheat.py"
    path.write_text(textwrap.dedent(LYING_BOT))
    result = run_tournament([f"{path}:Cheater", "random"], SMALL, games=2, seed=0)
    assert not result.complete and not result.games
    assert "Cheater" in result.error and "an object of type AlwaysEqual, which is not an action id" in result.error
