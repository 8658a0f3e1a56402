"""``skipbo benchmark`` and the protocol ``skipbo-bench-v1`` (evaluation/benchmark.py)."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from evaluation.benchmark import (
    PROTOCOL, TABLE_SETS, TIERS, BenchmarkError, Rung, RungCard, deal_hash, deal_margins, fixed_point_anchors,
    game_margin, mean_interval, rating, run_benchmark,
)
from evaluation.results import GameResult
from skipbo_cli.main import main

ROOT = Path(__file__).resolve().parents[2]
PINNED_DEAL_HASHES = {
    (2, "quick"): "bc0bb79ead58b4d01f65eda627044e3818cabf5af9d733714ece69b48e9455a9",
    (2, "full"): "12676b9800fc8612ecc89cb55cc41dd4f2b560d2918111fb9806f1aa76f679bc",
    (4, "quick"): "ecd1c7f9d0157c94f36e8f5152a7eb153c0250885d045c48403037af17cb47c7",
    (4, "full"): "cb53e536c274a620904a3fcf03f1d1dc94309922cd63e641815f98559d63355c",
}
"""A change of these is a change of the protocol's deals: it must become skipbo-bench-v2."""


def policy_class_of_the_docs() -> str:
    """The ten-line policy class that docs/benchmark.md shows a researcher."""
    page = (ROOT / "docs" / "benchmark.md").read_text()
    return re.search(r"```python\n(# my_policy\.py\n.*?)```", page, re.DOTALL).group(1)


def game(index: int, deal: int, seating: tuple[int, ...], outcome: str, winners: tuple[int, ...],
         points: tuple[int, ...]) -> GameResult:
    n = len(seating)
    return GameResult(index, deal, 7, seating, outcome, winners, points, 10, [5] * n, [20] * n, [0.1] * n)


@pytest.mark.parametrize("players, tier", sorted(PINNED_DEAL_HASHES))
def test_the_deal_sets_are_pinned(players, tier):
    assert deal_hash(players, TABLE_SETS[players].deals[tier]) == PINNED_DEAL_HASHES[players, tier]


def test_the_quick_deals_are_the_first_deals_of_the_full_set_and_the_table_sets_differ():
    for table in TABLE_SETS.values():
        assert table.deal_seeds(table.deals["full"])[:table.deals["quick"]] == table.deal_seeds(table.deals["quick"])
    assert TABLE_SETS[2].deal_seeds(5) != TABLE_SETS[4].deal_seeds(5)


def test_every_ladder_runs_from_random_to_a_shipped_player_and_loads():
    from agents import load_policy

    for table in TABLE_SETS.values():
        assert table.ladder[0].spec == "random"
        anchors = [rung.anchor for rung in table.ladder]
        assert anchors == sorted(anchors), "the ladder climbs"
        for rung in table.ladder:
            load_policy(rung.spec)


def test_the_margin_is_the_policys_points_minus_the_rungs_averaged_over_a_deals_seat_orders():
    games = [game(0, 0, (0, 1), "win", (0,), (75, 0)),     # the policy (agent 0) wins with 10 cards left over
             game(1, 0, (1, 0), "win", (0,), (40, 0)),     # the rung wins in seat 0
             game(2, 1, (0, 1), "draw", (), (0, 0))]
    assert [game_margin(g) for g in games] == [75, -40, 0]
    assert deal_margins(games) == {0: 17.5, 1: 0.0}


def test_at_four_seats_the_rung_is_whichever_copy_won():
    assert game_margin(game(0, 0, (1, 0, 1, 1), "win", (3,), (0, 0, 0, 120))) == -120
    assert game_margin(game(0, 0, (1, 0, 1, 1), "win", (1,), (0, 95, 0, 0))) == 95


def test_the_mean_interval_is_the_normal_one_with_the_sample_deviation():
    mean, half = mean_interval([1.0, 2.0, 3.0, 4.0])
    assert mean == 2.5
    assert half == pytest.approx(1.959963984540054 * math.sqrt(5 / 3 / 4))
    assert mean_interval([3.0]) == (3.0, math.inf)


def test_a_rung_card_counts_wins_draws_losses_with_wilson_and_margin_intervals():
    games = [game(0, 0, (0, 1), "win", (0,), (75, 0)), game(1, 0, (1, 0), "win", (1,), (0, 25)),
             game(2, 1, (0, 1), "win", (1,), (0, 50)), game(3, 1, (1, 0), "draw", (), (0, 0))]
    figures = RungCard(Rung("greedy", 20.0), "python", games, 1.0).figures()
    assert (figures["games"], figures["wins"], figures["draws"], figures["losses"]) == (4, 2, 1, 1)
    assert figures["win_rate"] == 0.5
    assert figures["win_ci95"] == pytest.approx([0.15003898915214947, 0.8499610108478506])
    assert figures["margin"] == pytest.approx(12.5)  # deals: (75 + 25) / 2 = 50 and (-50 + 0) / 2 = -25
    assert figures["margin_ci95"] == pytest.approx([12.5 - 1.959963984540054 * 37.5, 12.5 + 1.959963984540054 * 37.5])
    assert figures["ms_per_decision"] == pytest.approx(1000 * 0.1 / 20)


def test_the_rating_holds_the_rungs_at_their_anchors_and_skips_draws():
    wins = [game(i, i, (0, 1), "win", (0,), (25, 0)) for i in range(10)]
    losses = [game(i, i, (0, 1), "win", (1,), (0, 25)) for i in range(10)]
    strong, weak = Rung("strong", 30.0), Rung("weak", 10.0)
    beat_strong = rating([RungCard(strong, "python", wins, 0.0)])
    beat_weak = rating([RungCard(weak, "python", wins, 0.0)])
    lost_to_weak = rating([RungCard(weak, "python", losses, 0.0)])
    assert beat_strong["mu"] > beat_weak["mu"] > 25 > lost_to_weak["mu"]
    # one win, by the Plackett-Luce update (Weng and Lin 2011, no drift): mu += sigma^2 / c * (1 - p_win), with
    # c^2 = sigma^2 + 1^2 + 2 beta^2 (beta = 25/6) and p_win = e^(25/c) / (e^(25/c) + e^(30/c))
    c = math.sqrt((25 / 3) ** 2 + 1 + 2 * (25 / 6) ** 2)
    p_win = 1 / (1 + math.exp(5 / c))
    assert rating([RungCard(strong, "python", wins[:1], 0.0)])["mu"] == pytest.approx(25 + (25 / 3) ** 2 / c * (1 - p_win))
    assert beat_strong["ordinal"] == pytest.approx(beat_strong["mu"] - 3 * beat_strong["sigma"])
    draws = [game(i, i, (0, 1), "draw", (), (0, 0)) for i in range(40)]
    assert rating([RungCard(strong, "python", wins[:3] + draws, 0.0)]) == rating([RungCard(strong, "python",
                                                                                      wins[:3], 0.0)])


def test_at_four_seats_the_rating_counts_each_copy_of_the_rung_as_a_player():
    strong = Rung("strong", 30.0)
    one_in_four = [game(i, i, (0, 1, 1, 1), "win", (i % 4,), (0,) * 4) for i in range(400)]
    assert rating([RungCard(strong, "python", one_in_four, 0.0)])["mu"] == pytest.approx(30.0, abs=1.0)


def test_one_and_two_workers_give_the_same_scorecard(tmp_path):
    policy = tmp_path / "my_policy.py"
    policy.write_text(policy_class_of_the_docs())
    spec = f"mine={policy}:StockFirst"
    one = run_benchmark(spec, 2, "quick", deals=1).to_json()
    two = run_benchmark(spec, 2, "quick", deals=1, workers=2).to_json()
    timeless = ("ms_per_decision",)
    for a, b in zip(one["rungs"], two["rungs"], strict=True):
        assert {k: v for k, v in a.items() if k not in timeless} == {k: v for k, v in b.items() if k not in timeless}
    assert one["rating"] == two["rating"]
    assert one["deal_set"] == two["deal_set"]


def refuse_non_standard(constant: str):
    raise AssertionError(f"{constant} is not standard JSON")


def test_the_ten_line_policy_of_the_docs_runs_the_benchmark_and_writes_its_files(tmp_path, capsys):
    code = policy_class_of_the_docs()
    assert len([line for line in code.splitlines() if line.strip()]) <= 16
    (tmp_path / "my_policy.py").write_text(code)
    out_json, out_png = tmp_path / "mine.json", tmp_path / "mine.png"
    assert main(["benchmark", f"mine={tmp_path / 'my_policy.py'}:StockFirst", "--deals", "1", "--no-progress",
                 "--json", str(out_json), "--plot", str(out_png)]) == 0
    printed = capsys.readouterr().out
    assert "ladder:" not in printed and "pretrained-2p" in printed and "rating:" in printed
    record = json.loads(out_json.read_text(), parse_constant=refuse_non_standard)  # as a strict JSON reader does
    assert all(rung["margin_ci95"] is None for rung in record["rungs"])  # one deal: no interval, written null
    assert record["protocol"] == PROTOCOL and record["tier"] == "quick" and record["complete"] is False
    assert [rung["rung"] for rung in record["rungs"]] == [rung.spec for rung in TABLE_SETS[2].ladder]
    assert all(rung["games"] == 2 for rung in record["rungs"])
    assert record["deal_set"]["seeds"] == TABLE_SETS[2].deal_seeds(1)
    assert record["deal_set"]["hash"] == deal_hash(2, 1)
    assert {"versions", "commit", "machine", "cpu_seconds"} <= set(record)
    assert out_png.read_bytes().startswith(b"\x89PNG")


RAISES = "class Broken:\n    def act(self, observation):\n        raise RuntimeError('oops')\n"
ILLEGAL = "class Broken:\n    def act(self, observation):\n        return 143\n"
RESET_RAISES = ("class Broken:\n    def reset(self, seed):\n        raise ValueError('no reset')\n\n"
                "    def act(self, observation):\n        return 144\n")
EXITS = "import sys\n\n\nclass Broken:\n    def act(self, observation):\n        sys.exit(0)\n"


@pytest.mark.parametrize("argv, expected", [
    (["no_such_bot"], "no_such_bot"),
    (["greedy", "--tier", "medium"], "invalid choice: 'medium'"),
    (["greedy", "--players", "3"], "invalid choice: 3"),
    (["greedy", "--deals", "101"], "use 1 to 100"),
    (["greedy", "--json", "{existing}"], "already exists"),
    (["bad={policy_raises}:Broken"], "raised RuntimeError: oops"),
    (["bad={policy_illegal}:Broken"], "returned the illegal action 143"),
    (["bad={policy_exits}:Broken"], "raised SystemExit: 0"),
    (["bad={policy_reset_raises}:Broken"], "its reset() raised ValueError: no reset"),
], ids=["unknown spec", "tier", "table size", "deals", "existing output", "policy raises", "illegal move",
        "policy calls sys.exit(0)", "policy's reset raises"])
def test_bad_input_gets_one_line_and_exit_2(argv, expected, tmp_path, capsys):
    existing = tmp_path / "there.json"
    existing.write_text("{}")
    (tmp_path / "raises.py").write_text(RAISES)
    (tmp_path / "illegal.py").write_text(ILLEGAL)
    (tmp_path / "exits.py").write_text(EXITS)
    (tmp_path / "reset_raises.py").write_text(RESET_RAISES)
    paths = {"existing": existing, "policy_raises": tmp_path / "raises.py", "policy_illegal": tmp_path / "illegal.py",
             "policy_exits": tmp_path / "exits.py", "policy_reset_raises": tmp_path / "reset_raises.py"}
    argv = [word.format(**paths) for word in argv]
    try:
        code = main(["benchmark", *argv, "--no-progress"])
    except SystemExit as stopped:  # a flag refused by the parser
        code = stopped.code
    error = capsys.readouterr().err.strip()
    assert code == 2
    assert len(error.splitlines()) == 1 and expected in error, error
    if "Broken" in argv[0]:
        assert "deal 0 of the 2-player set" in error and "rung 'random'" in error


def test_the_tiers_and_table_sets_are_refused_by_name_in_python_too():
    with pytest.raises(BenchmarkError, match="no tier 'medium'"):
        run_benchmark("greedy", 2, "medium")
    with pytest.raises(BenchmarkError, match="no 3-player table set"):
        run_benchmark("greedy", 3, TIERS[0])


def test_the_anchors_are_a_fixed_point_that_averages_25_and_orders_the_rungs():
    strong_wins = [game(i, i, (0, 1), "win", (0,) if i % 4 else (1,), (0, 0)) for i in range(40)]
    even = [game(i, i, (0, 1), "win", ((0,) if i % 2 else (1,)), (0, 0)) for i in range(40)]
    weak_wins = [game(i, i, (0, 1), "win", ((1,) if i % 4 else (0,)), (0, 0)) for i in range(40)]
    strong, weak = Rung("strong", 0.0), Rung("weak", 0.0)
    played = {"strong": [RungCard(strong, "python", even, 0.0), RungCard(weak, "python", strong_wins, 0.0)],
              "weak": [RungCard(strong, "python", weak_wins, 0.0), RungCard(weak, "python", even, 0.0)]}
    anchors = fixed_point_anchors(played, 50)
    assert anchors["strong"] > anchors["weak"]
    assert (anchors["strong"] + anchors["weak"]) / 2 == pytest.approx(25.0, abs=0.1)
    assert fixed_point_anchors(played, 80) == anchors


@pytest.mark.parametrize("code, expected", [
    ("def broken(:\n", "raised SyntaxError"),
    ("import no_such_module_xyz\n", "raised ModuleNotFoundError: No module named 'no_such_module_xyz'"),
    ("import sys\nsys.exit(0)\n", "raised SystemExit: 0"),
    ("class P:\n    def __init__(self):\n        raise RuntimeError('ctor')\n", "P(...) raised RuntimeError: ctor"),
], ids=["syntax error", "missing module", "sys.exit at import", "constructor raises"])
def test_a_policy_that_fails_to_load_gets_one_line_and_exit_2(code, expected, tmp_path, capsys):
    (tmp_path / "mine.py").write_text(code)
    assert main(["benchmark", f"bad={tmp_path / 'mine.py'}:P", "--deals", "1", "--no-progress"]) == 2
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and expected in error, error


def test_a_relative_module_spec_is_refused_in_one_line(capsys):
    assert main(["benchmark", "bad=.foo:P", "--deals", "1", "--no-progress"]) == 2
    assert "'.foo' is a relative module" in capsys.readouterr().err
