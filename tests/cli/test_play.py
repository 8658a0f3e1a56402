"""``skipbo play`` as a person uses it: typed through a pseudo-terminal, plus the session in-process.

The terminal is made plain and wide (TERM=dumb: no colors; 140 columns) so the screen text is
stable. The person in the pty tests plays a simple strategy read off the screen: the first move
listed (stockpile plays come first), else the discard the screen suggests.
"""

from __future__ import annotations

import io
import json
import os
import re
import signal
import sys
from pathlib import Path

import pytest
from rich.console import Console

from skipbo_env import Game, Rules
from skipbo_cli.main import main
from skipbo_cli.play import PlaySession

pexpect = pytest.importorskip("pexpect")

SKIPBO = str(Path(sys.executable).with_name("skipbo"))
PROMPT = "your move> "
SEED = 3


def _spawn(tmp_path: Path, *extra: str):
    env = dict(os.environ, TERM="dumb", COLUMNS="140", LINES="50")
    env.pop("NO_COLOR", None)
    args = ["play", "--opponents", "greedy", "--stock-size", "10", "--seed", str(SEED), "--delay", "0",
            "--save", str(tmp_path / "game.json"), *extra]
    return pexpect.spawn(SKIPBO, args, env=env, encoding="utf-8", timeout=60, dimensions=(50, 140), cwd=str(tmp_path))


def _answer(child, line: str) -> str:
    """Type a line; the screen up to the next prompt (or the end)."""
    child.sendline(line)
    child.expect([PROMPT, pexpect.EOF])
    return child.before


def _first_move_key(screen: str) -> str:
    block = screen[screen.rfind("Your moves"):]
    plays = re.findall(r"^  (\S+(?: \d)?)\s{2,}play ", block, re.M)
    if plays:
        return plays[0]
    discard = re.search(r"e\.g\. (d\S+ \d)", block)
    return discard.group(1) if discard else "e"


def _saved(screen: str) -> dict:
    path = re.search(r"Game saved to (\S+)", screen).group(1)
    return json.loads(Path(path).read_text())


def test_a_person_plays_a_short_hand_to_the_end_by_typing_moves(tmp_path):
    child = _spawn(tmp_path)
    child.expect(PROMPT)
    first_screen = child.before
    assert "Building piles" in first_screen and "Your hand:" in first_screen
    assert re.search(r"you \(seat 0\).*\(10 left\)", first_screen)
    assert "Your moves (type the key):" in first_screen and "discard to end your turn" in first_screen

    assert "s1          play your stockpile top on building pile 1" in _answer(child, "help")
    assert "'xyzzy' is not a command: type help" in _answer(child, "xyzzy")
    assert "there is no building pile 9: building piles are numbered 1 to 4" in _answer(child, "s9")
    assert "can't end turn" in _answer(child, "e")  # the engine's reason: the hand is not empty
    assert "can't play stockpile top on building pile 4" in _answer(child, "s4")
    assert "Your moves (type the key):" in _answer(child, "moves")

    screen, checked_undo, checked_no_undo = first_screen, False, False
    for _ in range(300):
        key = _first_move_key(screen)
        screen = _answer(child, key)
        if child.eof():
            break
        assert "✗" not in screen, screen
        if key.startswith("h") and "hand empty" not in screen and not checked_undo:
            assert "Taken back: You play" in _answer(child, "undo")
            screen = _answer(child, key)
            checked_undo = True
        elif key.startswith("s") and "(0 left)" not in screen and not checked_no_undo:
            refusal = _answer(child, "undo")
            assert "nothing to undo: your last play turned up a new stockpile card" in refusal
            checked_no_undo = True
    child.close()
    assert re.search(r"(You|Seat 1 \(greedy\)) won the hand: \d+ points\.", screen)
    assert checked_undo and checked_no_undo
    assert child.exitstatus == 0
    saved = _saved(screen)
    assert saved["agents"] == ["human", "greedy"] and saved["human_seat"] == 0
    replayed = Game.replay(saved)
    assert replayed.is_over
    assert json.loads(json.dumps(replayed.to_dict())) == saved["final_state"]


def test_quit_leaves_cleanly_and_saves_the_game(tmp_path):
    child = _spawn(tmp_path)
    child.expect(PROMPT)
    key = _first_move_key(child.before)
    _answer(child, key)
    child.sendline("quit")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert "You leave the table." in child.before
    saved = _saved(child.before)
    assert saved["actions"][-1] is not None and not Game.replay(saved).is_over
    assert json.loads(json.dumps(Game.replay(saved).to_dict())) == saved["final_state"]


def test_ctrl_c_leaves_cleanly_and_saves_the_game(tmp_path):
    child = _spawn(tmp_path)
    child.expect(PROMPT)
    # the signal itself, not the ^C character: a ^C typed while readline is still setting up the
    # terminal can be read as a plain character
    child.kill(signal.SIGINT)
    child.expect(pexpect.EOF)
    child.close()
    assert "Interrupted: leaving the table." in child.before
    assert "Traceback" not in child.before
    assert child.exitstatus == 130
    assert (tmp_path / "game.json").exists()


def test_the_default_save_goes_to_a_games_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("builtins.input", lambda prompt="": "quit")
    assert main(["play", "--opponents", "random", "--seed", "5", "--delay", "0", "--no-color"]) == 0
    files = list((tmp_path / "games").glob("play-*-seed5.json"))
    assert len(files) == 1
    assert f"Game saved to {Path('games') / files[0].name}" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["--seat", "2"], "--seat 2 is not a seat: use 0 to 1"),
    (["--players", "4", "--opponents", "random", "greedy"], "2 opponents for 4 players"),
    (["--opponents", "nosuchbot"], "unknown policy spec 'nosuchbot'"),
    (["--players", "3", "--partners"], "partners=True needs 4 or 6 players"),
])
def test_bad_options_exit_with_a_message(argv, message, capsys):
    try:
        code = main(["play", *argv])
    except SystemExit as exit_info:
        code = exit_info.code
    assert code not in (0, None) and message in f"{code} {capsys.readouterr().err}"


# ---------------------------------------------------------------------- the session in-process
class ScriptedPerson:
    """Stands in for ``input``: ``script(session, prompt)`` returns each line typed."""

    def __init__(self, session: PlaySession, script) -> None:
        self.session = session
        self.script = script

    def __call__(self, prompt: str = "") -> str:
        return self.script(self.session, prompt)


def _session(seed: int, tmp_path: Path, match: bool = False, **rules) -> tuple[PlaySession, io.StringIO]:
    from agents.loading import load_policy

    out = io.StringIO()
    console = Console(file=out, width=120, color_system=None)
    rules = Rules(**{"stock_size": 10, **rules})
    policies = {seat: load_policy("greedy", seed=seat) for seat in range(1, rules.num_players)}
    specs = ["human"] + ["greedy"] * (rules.num_players - 1)
    session = PlaySession(console, rules, seed, 0, policies, specs, match=match, delay=0,
                          save_path=str(tmp_path / "game.json"))
    return session, out


def _discard_key(game: Game) -> str:
    value = next(v for v in range(1, 14) if game.hand_counts[0][v])
    return f"d{'w' if value == 13 else value} 1"


def test_undo_takes_back_a_hand_play_exactly(tmp_path, monkeypatch):
    session, out = _session(11, tmp_path)
    seen = {}

    def script(session, prompt):
        game = session.game
        if "after_undo" in seen:
            return "quit"
        if "before" in seen:
            seen["after_undo"] = True
            assert game.to_dict() != seen["before"]
            return "undo"
        plays = [a for a in game.legal_actions() if a < 52 and game.hand_sizes[0] > 1]
        if not plays:
            return _discard_key(game)
        seen["before"] = game.to_dict()
        value, pile = divmod(plays[0], 4)
        return f"h{value + 1} {pile + 1}" if value < 12 else f"hw {pile + 1}"

    monkeypatch.setattr("builtins.input", ScriptedPerson(session, script))
    assert session.run() == 0
    assert "Taken back: You play" in out.getvalue()
    saved = json.loads((tmp_path / "game.json").read_text())
    assert Game.replay(saved).to_dict() == seen["before"]


def test_undo_does_not_take_back_a_play_that_turned_up_a_stockpile_card(tmp_path, monkeypatch):
    session, out = _session(2, tmp_path)
    seen = {}

    def script(session, prompt):
        game = session.game
        if "undo" in seen:
            return "quit"
        if "after" in seen:
            seen["undo"] = True
            return "undo"
        stock_plays = [a for a in game.legal_actions() if a // 4 == 13]
        if not stock_plays or len(game.stocks[0]) < 2:
            return _discard_key(game)
        seen["after"] = True
        return f"s{stock_plays[0] % 4 + 1}"

    monkeypatch.setattr("builtins.input", ScriptedPerson(session, script))
    assert session.run() == 0
    assert "nothing to undo: your last play turned up a new stockpile card" in out.getvalue()
    saved = json.loads((tmp_path / "game.json").read_text())
    assert saved["actions"][-1] // 4 == 13  # the stockpile play stayed


def test_a_match_keeps_the_score_sheet_and_saves_every_hand(tmp_path, monkeypatch):
    from agents.loading import load_policy

    session, out = _session(4, tmp_path, match=True, stock_size=3, match_end={"rounds": 2})
    session.policies[0] = load_policy("greedy", seed=9)
    session.autoplay = True
    monkeypatch.setattr("builtins.input", lambda prompt="": pytest.fail("autoplay asked for input"))
    assert session.run() == 0
    text = out.getvalue()
    assert text.count("Score sheet") == 2 and "The match is over:" in text
    saved = json.loads((tmp_path / "game.json").read_text())
    assert saved["format"] == "skipbo-match/1" and len(saved["hands"]) == 2 and "current" not in saved
    for hand in saved["hands"]:
        assert json.loads(json.dumps(Game.replay(hand["record"]).to_dict())) == hand["final_state"]
    assert saved["scores"] == [sum(hand["points"][seat] for hand in saved["hands"]) for seat in range(2)]
