"""``skipbo replay FILE`` shows a saved game move by move and arrives at exactly the saved end."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console

from skipbo_env import Game, Rules
from tests.positions import position
from skipbo_cli.main import main
from skipbo_cli.play import PlaySession


@pytest.fixture(autouse=True)
def wide_console(monkeypatch):
    """Rich wraps at the console width: a wide one keeps each message on one line."""
    monkeypatch.setenv("COLUMNS", "200")


def _random_game(seed: int, **rules) -> Game:
    game = Game.new(Rules(**{"stock_size": 3, **rules}), seed=seed)
    rng = np.random.default_rng(seed)
    while not game.is_over:
        legal = game.legal_actions()
        game.step(legal[int(rng.integers(len(legal)))])
    return game


def _write(path: Path, data) -> str:
    path.write_text(json.dumps(data))
    return str(path)


def _saved_by_play(tmp_path: Path) -> dict:
    """A hand played to the end by ``skipbo play``'s session (greedy at both seats), as saved."""
    from agents.loading import load_policy

    save = tmp_path / "played.json"
    session = PlaySession(Console(file=io.StringIO()), Rules(stock_size=5), 21, 0,
                          {0: load_policy("greedy", seed=1), 1: load_policy("random", seed=2)},
                          ["human", "random"], match=False, delay=0, save_path=str(save), autoplay=True)
    assert session.run() == 0
    return json.loads(save.read_text())


def test_a_played_game_replays_to_exactly_its_saved_final_state(tmp_path, capsys):
    saved = _saved_by_play(tmp_path)
    assert Game.replay(saved).to_dict() == saved["final_state"]
    assert main(["replay", _write(tmp_path / "g.json", saved), "--all", "--no-color"]) == 0
    out = capsys.readouterr().out
    assert "The replay matches the saved game exactly." in out
    assert f"Move 1 of {len(saved['actions'])}" in out and f"Move {len(saved['actions'])} of" in out
    assert "won the hand" in out


def test_each_move_is_told_in_words_with_who_played_it(tmp_path, capsys):
    game = _random_game(3)
    record = {**game.record(), "agents": ["planner", "random"]}
    assert main(["replay", _write(tmp_path / "g.json", record), "--all", "--no-color"]) == 0
    out = capsys.readouterr().out
    first_seat = Game.replay({**record, "actions": []}).current_seat
    assert f"   1. seat {first_seat} ({record['agents'][first_seat]}) " in out
    assert out.count("Building piles") == len(record["actions"]) + 1  # before every move, and at the end


def test_stepping_waits_for_enter_and_q_stops(tmp_path, capsys, monkeypatch):
    game = _random_game(4)
    answers = iter(["", "", "q"])
    monkeypatch.setattr("builtins.input", lambda prompt="": next(answers))
    assert main(["replay", _write(tmp_path / "g.json", game.record()), "--no-color"]) == 0
    out = capsys.readouterr().out
    assert "Move 3 of" in out and "Move 4 of" not in out
    assert "Replay stopped." in out and "Final position" not in out


def test_a_seat_view_hides_the_other_hands(tmp_path, capsys):
    state = position(seats=[{"hand": [4, 7, 9, 9, 2], "stock": [8, 3]}, {"hand": [11, 11, 11, 11, 11], "stock": [6]}])
    game = Game.from_dict(state)
    game.step(game.legal_actions()[-1])
    path = _write(tmp_path / "g.json", game.record())
    assert main(["replay", path, "--all", "--no-color", "--seat", "1"]) == 0
    seat_view = capsys.readouterr().out
    assert "Your hand: 11  11  11  11  11" in seat_view and "4 7 9 9" not in seat_view
    assert main(["replay", path, "--all", "--no-color"]) == 0
    assert "2 4 7 9 9" in capsys.readouterr().out


def test_a_record_that_does_not_end_as_saved_is_reported(tmp_path, capsys):
    game = _random_game(5)
    record = {**game.record(), "final_state": game.to_dict()}
    record["final_state"]["turn"] += 1
    assert main(["replay", _write(tmp_path / "g.json", record), "--all", "--no-color"]) == 1
    assert "does NOT match the saved game: the final state differs in turn" in capsys.readouterr().out
    record = {**game.record(), "outcome": "truncated"}
    assert main(["replay", _write(tmp_path / "g.json", record), "--all", "--no-color"]) == 1
    assert f"the saved outcome is 'truncated', the replay ends {game.outcome!r}" in capsys.readouterr().out


def test_evaluate_style_records_and_lists_of_records_replay(tmp_path, capsys):
    games = [_random_game(seed) for seed in (6, 7)]
    records = [{**g.record(), "agents": ["greedy", "random"], "outcome": g.outcome, "winners": list(g.winners),
                "points": list(g.points())} for g in games]
    path = _write(tmp_path / "list.json", records)
    assert main(["replay", path, "--all", "--no-color"]) == 0
    out = capsys.readouterr().out
    assert "Replay: game 1 of 2" in out and "Replay: game 2 of 2" in out
    assert out.count("The replay matches the saved game exactly.") == 2
    assert main(["replay", path, "--all", "--no-color", "--hand", "2"]) == 0
    assert "game 1 of 2" not in capsys.readouterr().out


def _refused(argv: list[str], capsys) -> str:
    """The one line ``skipbo replay`` prints for refused input (it exits 2, as every command does)."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("skipbo replay: error: ") and len(err.strip().splitlines()) == 1, err
    return err


def test_a_file_that_is_not_a_game_is_refused_with_why_and_exit_status_2(tmp_path, capsys):
    assert "holds 'skipbo-state/1', not a game" in _refused(["replay", _write(tmp_path / "s.json", position())], capsys)
    (tmp_path / "bad.json").write_text("{not json")
    assert "is not JSON" in _refused(["replay", str(tmp_path / "bad.json")], capsys)
    assert "cannot read" in _refused(["replay", str(tmp_path / "missing.json")], capsys)
    path = _write(tmp_path / "g.json", _random_game(8).record())
    assert "--hand 3: " in _refused(["replay", path, "--hand", "3"], capsys)
    assert "holds hands 1 to 1" in _refused(["replay", path, "--hand", "3"], capsys)


def test_a_fifo_or_a_folder_is_refused_without_blocking(tmp_path, capsys):
    fifo = tmp_path / "game.json"
    os.mkfifo(fifo)
    assert "is not a regular file" in _refused(["replay", str(fifo)], capsys)
    assert "is a directory" in _refused(["replay", str(tmp_path)], capsys)


def test_a_file_nested_deeper_than_any_game_is_refused(tmp_path, capsys):
    record = _random_game(8).record()
    deep = {**record, "agents": [[[[[[[[[[[[[[[[[["x"]]]]]]]]]]]]]]]]]]}
    assert "nests deeper than" in _refused(["replay", _write(tmp_path / "g.json", deep)], capsys)
    (tmp_path / "huge-seed.json").write_text(json.dumps(record).replace('"seed": 8', '"seed": ' + "9" * 5000))
    assert "huge-seed.json" in _refused(["replay", str(tmp_path / "huge-seed.json")], capsys)


def test_a_deal_that_does_not_replay_is_refused_with_exit_status_2(tmp_path, capsys):
    record = {**_random_game(8).record(), "dealer": 9}
    assert "dealer" in _refused(["replay", _write(tmp_path / "g.json", record), "--all"], capsys)


def test_b_steps_back_and_g_jumps_to_a_move(tmp_path, capsys, monkeypatch):
    game = _random_game(4)
    answers = iter(["", "b", "g 5", "q"])
    monkeypatch.setattr("builtins.input", lambda prompt="": next(answers))
    assert main(["replay", _write(tmp_path / "g.json", game.record()), "--no-color"]) == 0
    shown = [line.split("Move ")[1].split(" of")[0] for line in capsys.readouterr().out.splitlines() if "Move " in line]
    assert shown == ["1", "2", "1", "5"]


def test_b_at_the_first_move_says_there_is_none_before_it_and_asks_again(tmp_path, capsys, monkeypatch):
    answers = iter(["b", "", "q"])
    monkeypatch.setattr("builtins.input", lambda prompt="": next(answers))
    assert main(["replay", _write(tmp_path / "g.json", _random_game(4).record()), "--no-color"]) == 0
    out = capsys.readouterr().out
    assert "b: this is the first move, there is none before it" in out
    shown = [line.split("Move ")[1].split(" of")[0] for line in out.splitlines() if "Move " in line]
    assert shown == ["1", "2"]


def test_an_unknown_key_lists_the_keys_and_asks_again(tmp_path, capsys, monkeypatch):
    game = _random_game(4)
    answers = iter(["x", "g 0", "q"])
    monkeypatch.setattr("builtins.input", lambda prompt="": next(answers))
    assert main(["replay", _write(tmp_path / "g.json", game.record()), "--no-color"]) == 0
    out = capsys.readouterr().out
    assert "'x' is not a key; keys: Enter = next move, b = back one move" in out
    assert f"g N: N is a move number from 1 to {len(game.record()['actions'])}" in out
    assert "Move 2 of" not in out


def test_png_draws_the_table_after_the_chosen_move(tmp_path, capsys):
    game = _random_game(6)
    record = game.record()
    out = tmp_path / "pictures" / "table.png"
    out.parent.mkdir()
    assert main(["replay", _write(tmp_path / "g.json", record), "--png", str(out), "--move", "3"]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"the table after 3 of {len(record['actions'])} moves" in capsys.readouterr().out
    from skipbo_env.envs.picture import png_bytes

    assert out.read_bytes() == png_bytes(Game.replay({**record, "actions": record["actions"][:3]}))
    final = tmp_path / "final.png"
    assert main(["replay", str(tmp_path / "g.json"), "--png", str(final)]) == 0
    assert final.read_bytes() == png_bytes(game)


def test_png_refuses_a_move_the_hand_does_not_have(tmp_path, capsys):
    game = _random_game(6)
    path = _write(tmp_path / "g.json", game.record())
    total = len(game.record()["actions"])
    err = _refused(["replay", path, "--png", str(tmp_path / "t.png"), "--move", str(total + 1)], capsys)
    assert f"--move {total + 1}: this hand has moves 0 to {total}" in err
    assert not (tmp_path / "t.png").exists()
