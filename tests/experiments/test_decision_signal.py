"""``experiments/decision_signal.py``: the copies it plays out are the game as the seat sees it, and a tiny run
measures and summarizes."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest

from experiments import decision_signal
from skipbo_env.actions import END_TURN, FIRST_DISCARD, discard_action
from skipbo_env.game import Game
from skipbo_env.rules import Rules


def midgame(seed: int) -> Game:
    game = Game.new(Rules(num_players=2, stock_size=30), seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(60):
        game.step(int(rng.choice(game.legal_actions())))
    return game


def cards_everywhere(state: dict) -> Counter:
    cards = Counter(state["draw_pile"]) + Counter(state["completed"])
    for pile in state["building"]:
        cards += Counter(pile)
    for info in state["seats"]:
        cards += Counter(info["hand"]) + Counter(info["stock"])
        for pile in info["discards"]:
            cards += Counter(pile)
    return cards


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_determinization_moves_only_the_cards_the_seat_cannot_see(seed):
    game = midgame(seed)
    state, seat = game.to_dict(), game.current_seat
    copy = decision_signal.determinize(state, seat, np.random.default_rng(seed))
    assert cards_everywhere(copy) == cards_everywhere(state)
    assert copy["building"] == state["building"] and copy["completed"] == state["completed"]
    assert len(copy["draw_pile"]) == len(state["draw_pile"])
    for other, (old, new) in enumerate(zip(state["seats"], copy["seats"])):
        assert new["discards"] == old["discards"]
        assert new["stock"][-1:] == old["stock"][-1:] and len(new["stock"]) == len(old["stock"])
        assert (new["hand"] == old["hand"]) if other == seat else (len(new["hand"]) == len(old["hand"]))
    assert Game.from_dict(copy).legal_actions() == game.legal_actions()


def test_a_determinization_shuffles_the_hidden_cards():
    state = midgame(3).to_dict()
    copies = [decision_signal.determinize(state, 0, np.random.default_rng(k)) for k in range(2)]
    assert copies[0]["draw_pile"] != copies[1]["draw_pile"]
    assert copies[0]["seats"][0]["hand"] == state["seats"][0]["hand"]


def test_plays_onto_building_piles_of_one_height_are_one_alternative():
    game = midgame(4)
    engine = decision_signal.Rollouts(1, 4).engine
    engine.set_game(0, game)
    plays = decision_signal.alternatives(engine, int(game.legal_actions()[-1]), "plays")[1:]
    heights = [len(pile) for pile in game.to_dict()["building"]]
    keys = [(action // 4, heights[action % 4]) for action in plays]
    assert plays and len(keys) == len(set(keys)) and all(action < FIRST_DISCARD for action in plays)
    assert {(action // 4, heights[action % 4]) for action in game.legal_actions() if action < FIRST_DISCARD} == set(keys)


def test_one_empty_discard_pile_stands_for_all():
    legal = np.array([discard_action(value, pile) for value in (3, 7) for pile in range(4)])
    assert decision_signal.distinct_discards(legal, np.array([2, 0, 1, 0])) == [
        discard_action(3, 0), discard_action(3, 1), discard_action(3, 2), discard_action(7, 0), discard_action(7, 1),
        discard_action(7, 2)]


@pytest.mark.parametrize("kind", ["discards", "plays"])
def test_a_tiny_run_measures_the_bots_own_action_first_and_summarizes(tmp_path, capsys, kind):
    out = tmp_path / "records.json"
    argv = ["--kind", kind, "--decisions", "1", "--samples", "3", "--share", "1", "--json", str(out)]
    assert decision_signal.main(argv) == 0
    (record,) = json.loads(out.read_text())["records"]
    assert len(record["win_rates"]) == len(set(record["actions"])) >= 2
    is_discard = [FIRST_DISCARD <= action < END_TURN for action in record["actions"]]
    assert all(is_discard) if kind == "discards" else not any(is_discard[1:])
    assert all(0 <= rate <= 1 for rate in record["win_rates"]) and record["games"] == 3 * len(record["actions"])
    assert decision_signal.main(["--summarize", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "1 decisions" in printed and "ms of CPU a game played out" in printed and "the bot's own action" in printed
    assert "one improvement step" in printed and "the ceiling of one step" in printed
    assert len(record["half_rates"]) == 2
    assert decision_signal.main(["--summarize", str(out), "--kind", kind, "--hands", "1"]) == 0
    printed = capsys.readouterr().out
    assert f"decisions with an alternative ({kind}) a hand" in printed and "one improvement step at every one" in printed


def test_a_step_a_decision_sums_over_the_decisions_of_a_hand_with_both_uncertainties():
    counts = np.array([[10, 20], [30, 40]])  # per-hand means 15 and 35: 25 decisions a seat, se 10
    summed = decision_signal.over_a_hand({"gain": 0.01, "se": 0.002}, counts)
    assert summed["decisions"] == 25 and summed["decisions_se"] == pytest.approx(10)
    assert summed["gain"] == pytest.approx(0.25)
    assert summed["se"] == pytest.approx(np.hypot(25 * 0.002, 0.01 * 10))
    assert summed["ci95"] == pytest.approx([0.25 - 1.96 * summed["se"], 0.25 + 1.96 * summed["se"]])


def test_the_decisions_counted_a_hand_are_those_measure_draws_from(monkeypatch):
    # the games played out do not matter here: every copy is scored a loss, so the whole hand takes a second
    monkeypatch.setattr(decision_signal.Rollouts, "outcomes",
                        lambda self, actions, rng: np.zeros((self.samples, len(actions))))
    counts = decision_signal.decisions_a_hand(1, 7, "plays")
    records = decision_signal.measure(int(counts.sum()) + 1, 2, 7, 1.0, "plays")
    assert [r["deal"] for r in records] == [7000] * int(counts.sum()) + [7001]


def test_the_summary_counts_the_alternatives_measurably_above_the_bots_own():
    def record(rates, agreement):
        return {"win_rates": rates, "samples": 400, "agreement": agreement, "games": 0, "cpu_seconds": 0.0}

    summary = decision_signal.summarize([record([0.5, 0.6, 0.52], 0.5), record([0.5, 0.45], 0.9)])
    assert (summary["above_own"], summary["compared"]) == (1, 3)
    assert summary["own_percentile"] == pytest.approx((0 + 1) / 2)
    assert summary["own_minus_others"] == pytest.approx(((0.5 - 0.56) + 0.05) / 2)
    assert summary["ceiling"]["gain"] == pytest.approx(((0.6 - 0.5) + 0.0) / 2)
    assert summary["ceiling"]["ci95"][0] < summary["ceiling"]["gain"] < summary["ceiling"]["ci95"][1]
    assert summary["cpu_seconds_per_game"] is None


def test_one_improvement_step_is_chosen_on_one_half_and_scored_on_the_other():
    def record(first, second):
        return {"win_rates": [(a + b) / 2 for a, b in zip(first, second)], "samples": 400, "agreement": 0.5,
                "games": 0, "cpu_seconds": 0.0, "half_rates": [first, second]}

    # the first: each half prefers another action, which the other half scores at +0.1 and -0.1 over the bot's
    # own; the second: the bot's own is best on both halves (no step); the third: no halves (an older record)
    records = [record([0.5, 0.7, 0.4], [0.5, 0.4, 0.6]), record([0.6, 0.5], [0.6, 0.55])]
    old = {"win_rates": [0.5, 0.9], "samples": 400, "agreement": 0.5, "games": 0, "cpu_seconds": 0.0}
    step = decision_signal.summarize([*records, old])["improvement_step"]
    assert step["decisions"] == 2
    assert step["gain"] == pytest.approx(((-0.1 + -0.1) / 2 + 0.0) / 2)
    assert step["ci95"][0] < step["gain"] < step["ci95"][1]
    assert decision_signal.summarize([old])["improvement_step"] is None


def exit_status(argv: list[str]) -> int:
    """The status the script exits with for ``argv`` (as ``python experiments/decision_signal.py ARGS``)."""
    try:
        return decision_signal.run(decision_signal.main, argv)
    except SystemExit as stopped:
        return stopped.code


GOOD = {"win_rates": [0.5, 0.4], "samples": 400, "agreement": 0.5, "games": 800, "cpu_seconds": 1.0}


@pytest.mark.parametrize("content, says", [
    (None, "cannot be read"), ("{not json", "is not valid JSON"), ("[1, 2]", "holds no records"),
    ('{"records": 5}', "holds no records"), ('{"records": []}', "holds no records"),
    ('{"records": [{"win_rates": [0.5]}]}', "holds no records"),
    ({"win_rates": "0.5"}, "'win_rates' must be a list"), ({"win_rates": [0.5]}, "at least two win rates"),
    ({"win_rates": [0.5, 2]}, "win rates from 0 to 1"), ({"win_rates": [0.5, None]}, "'win_rates' must be"),
    ({"samples": 0}, "'samples' must be an integer >= 2"), ({"samples": "400"}, "'samples' must be"),
    ({"samples": True}, "'samples' must be"), ({"agreement": float("nan")}, "'agreement' must be a number"),
    ({"agreement": [1]}, "'agreement' must be"), ({"games": -1}, "'games' must be an integer >= 0"),
    ({"games": 1.5}, "'games' must be"), ({"cpu_seconds": "x"}, "'cpu_seconds' must be a finite number"),
    ({"cpu_seconds": float("inf")}, "'cpu_seconds' must be"),
    ({"half_rates": [[0.5, 0.4]]}, "'half_rates' must be two lists"),
    ({"half_rates": [[0.5, 0.4], [0.5, 1.5]]}, "'half_rates' must be two lists"),
])
def test_a_damaged_records_file_is_one_line_and_exit_2(tmp_path, capsys, content, says):
    path = tmp_path / "records.json"
    if isinstance(content, dict):
        content = json.dumps({"records": [GOOD, {**GOOD, **content}]})
    if content is not None:
        path.write_text(content)
    assert exit_status(["--summarize", str(path)]) == 2
    out, err = capsys.readouterr()
    assert len(err.strip().splitlines()) == 1 and says in err and str(path) in err and "Traceback" not in err
    assert "record 1 " in err or not (content or "").startswith('{"records": [{"win_rates": [0.5, 0.4]')
    assert "nan" not in out


def test_one_decision_summarizes_without_a_nan(tmp_path, capsys):
    path = tmp_path / "records.json"
    path.write_text(json.dumps({"records": [GOOD]}))
    assert exit_status(["--summarize", str(path)]) == 0
    assert "nan" not in capsys.readouterr().out


@pytest.mark.parametrize("argv, says", [(["--seed", "-1"], "--seed"), (["--share", "0"], "--share"),
                                        (["--samples", "1"], "--samples"), (["--decisions", "x"], "--decisions"),
                                        (["--json", "EXISTING"], "the file exists"),
                                        (["--json", "MISSING/out.json"], "no such folder"),
                                        (["--json", "/proc/out.json"], "cannot write into the folder")])
def test_bad_options_stop_before_any_game(tmp_path, capsys, monkeypatch, argv, says):
    existing = tmp_path / "old.json"
    existing.write_text("{}")
    monkeypatch.setattr(decision_signal, "measure", lambda *args: pytest.fail("a game was played"))
    argv = [str(existing) if arg == "EXISTING" else arg.replace("MISSING", str(tmp_path / "missing"))
            for arg in argv]
    assert exit_status(argv) == 2
    err = capsys.readouterr().err
    assert says in err and len(err.strip().splitlines()) == 1
    assert existing.read_text() == "{}"
