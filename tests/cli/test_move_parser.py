"""The short keys of ``skipbo play`` (skipbo_cli/move_parser.py) map to the action ids of RULES.md."""

from __future__ import annotations

import pytest

from skipbo_env import Game
from skipbo_env.actions import END_TURN, NUM_ACTIONS, discard_action, hand_play_action, play_action
from skipbo_env.cards import WILD
from tests.positions import position
from skipbo_cli.move_parser import HELP_TEXT, Command, MoveInputError, key_for_action, parse_command


def test_every_action_id_has_a_key_that_reads_back_as_it():
    for action in range(NUM_ACTIONS):
        assert parse_command(key_for_action(action)).action == action


@pytest.mark.parametrize("text, action", [
    ("s1", play_action(13, 0)),
    ("S 4", play_action(13, 3)),
    ("h5 2", hand_play_action(5, 1)),
    ("h12 4", hand_play_action(12, 3)),
    ("hw 2", hand_play_action(WILD, 1)),
    ("hs 2", hand_play_action(WILD, 1)),
    ("hsb 1", hand_play_action(WILD, 0)),
    ("h13 3", hand_play_action(WILD, 2)),
    ("t3 1", play_action(16, 0)),
    ("p2", play_action(18, 1)),
    ("pd2 3", play_action(20, 2)),
    ("d3 4", discard_action(3, 3)),
    ("dw 1", discard_action(WILD, 0)),
    ("  D12   2 ", discard_action(12, 1)),
    ("h5,2", hand_play_action(5, 1)),
    ("e", END_TURN),
    ("end", END_TURN),
    ("#17", 17),
])
def test_keys_name_the_documented_moves(text, action):
    assert parse_command(text) == Command("move", action)


@pytest.mark.parametrize("text, kind", [
    ("help", "help"), ("?", "help"), ("moves", "moves"), ("m", "moves"), ("undo", "undo"),
    ("u", "undo"), ("quit", "quit"), ("Q", "quit"), ("table", "table"),
])
def test_words_name_commands(text, kind):
    assert parse_command(text).kind == kind


@pytest.mark.parametrize("text, message", [
    ("xyz", "'xyz' is not a command"),
    ("", "type a move"),
    ("s9", "there is no building pile 9: building piles are numbered 1 to 4"),
    ("s0", "there is no building pile 0"),
    ("d5 7", "there is no discard pile 7: discard piles are numbered 1 to 4"),
    ("t5 1", "there is no discard pile 5"),
    ("h15 1", "h15 names no card: use h1 to h12, or hw for a SKIP-BO"),
    ("#145", "#145 is not an action id: use #0 to #144"),
    ("h5", "say which building pile: for example h5 1"),
])
def test_bad_input_says_what_is_wrong(text, message):
    with pytest.raises(MoveInputError, match=message.replace("?", r"\?")):
        parse_command(text)


def test_every_documented_key_is_in_the_help():
    for key in ("s1", "h5 2", "hw 2", "hs 2", "t3 1", "p4", "pd2 3", "d3 4", "dw 1", "undo", "quit", "help", "moves"):
        assert key in HELP_TEXT


def _game(**kwargs) -> Game:
    return Game.from_dict(position(**kwargs))


def test_a_left_out_pile_is_filled_in_when_only_one_pile_takes_the_card():
    game = _game(seats=[{"hand": [4, 7, 9, 9, 2], "stock": [8, 3]}, {"stock": [6]}],
                 building=[[1, 2], [1, 2, 3, 4, 5, 6], [], []])
    assert parse_command("s", game).action == play_action(13, 0)
    assert parse_command("h7", game).action == hand_play_action(7, 1)


def test_a_left_out_pile_with_several_choices_lists_the_keys():
    game = _game(seats=[{"hand": [13, 7, 9, 9, 2], "stock": [8, 3]}, {"stock": [6]}],
                 building=[[1, 2], [1, 2, 3, 4, 5, 6], [], []])
    with pytest.raises(MoveInputError, match="say which building pile: hw 1 or hw 2 or hw 3"):
        parse_command("hw", game)


def test_a_card_that_fits_nowhere_says_what_the_piles_need():
    game = _game(seats=[{"hand": [4, 7, 9, 9, 2], "stock": [8, 11]}, {"stock": [6]}],
                 building=[[1, 2], [1, 2, 3, 4, 5, 6], [], []])
    with pytest.raises(MoveInputError, match="your stockpile top fits no building pile now "
                                             r"\(pile 1 needs 3, pile 2 needs 7, a new pile needs 1\)"):
        parse_command("s", game)


def test_a_missing_source_card_is_named():
    game = _game(seats=[{"hand": [4, 7, 9, 9, 2], "stock": [8, 11]}, {"stock": [6]}])
    with pytest.raises(MoveInputError, match="you hold no 5"):
        parse_command("h5", game)
    with pytest.raises(MoveInputError, match="your discard pile 2 is empty"):
        parse_command("t2", game)
    with pytest.raises(MoveInputError, match="only in partners games"):
        parse_command("p", game)


def test_the_first_discard_needs_no_pile_number():
    game = _game(seats=[{"hand": [4, 7, 9, 9, 2], "stock": [8, 11]}, {"stock": [6]}])
    assert parse_command("d9", game).action == discard_action(9, 0)
