"""``benchmarks/decision_signal.py``: the copies it plays out are the game as the seat sees it, and a tiny run
measures and summarizes."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest

from benchmarks import decision_signal
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


def test_the_summary_counts_the_alternatives_measurably_above_the_bots_own():
    def record(rates, agreement):
        return {"win_rates": rates, "samples": 400, "agreement": agreement, "games": 0, "cpu_seconds": 0.0}

    summary = decision_signal.summarize([record([0.5, 0.6, 0.52], 0.5), record([0.5, 0.45], 0.9)])
    assert (summary["above_own"], summary["compared"]) == (1, 3)
    assert summary["own_percentile"] == pytest.approx((0 + 1) / 2)
    assert summary["own_minus_others"] == pytest.approx(((0.5 - 0.56) + 0.05) / 2)
    assert summary["cpu_seconds_per_game"] is None


@pytest.mark.parametrize("content, says", [(None, "cannot be read"), ("{not json", "is not valid JSON"),
                                           ('{"records": [{"win_rates": [0.5]}]}', "holds no records")])
def test_a_bad_records_file_is_one_line_and_exit_2(tmp_path, capsys, content, says):
    path = tmp_path / "records.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(SystemExit) as stopped:
        decision_signal.main(["--summarize", str(path)])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert says in err.strip().splitlines()[-1] and "Traceback" not in err


@pytest.mark.parametrize("argv, says", [(["--seed", "-1"], "--seed"), (["--share", "0"], "--share"),
                                        (["--json", "EXISTING"], "the file exists")])
def test_bad_options_stop_before_any_game(tmp_path, capsys, argv, says):
    existing = tmp_path / "old.json"
    existing.write_text("{}")
    argv = [str(existing) if arg == "EXISTING" else arg for arg in argv]
    with pytest.raises(SystemExit) as stopped:
        decision_signal.main(argv)
    assert stopped.value.code == 2 and says in capsys.readouterr().err
    assert existing.read_text() == "{}"
