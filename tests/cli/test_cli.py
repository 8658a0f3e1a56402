"""The ``skipbo`` entry point: help, version, and rule flags refused with the setting named."""

from __future__ import annotations

import pytest

import skipbo_env
from skipbo_cli.main import main


def test_version_and_help_list_every_subcommand(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0 and skipbo_env.__version__ in capsys.readouterr().out
    main([])
    out = capsys.readouterr().out
    assert all(name in out for name in ("demo", "play", "replay", "evaluate", "train"))


@pytest.mark.parametrize("flags, message", [
    (["--players", "7"], "num_players=7 is not allowed: use an integer from 2 to 6"),
    (["--partners", "--players", "3"], "partners=True needs 4 or 6 players"),
    (["--stock-size", "100"], "stock_size=100 is too large"),
    (["--max-turn-plays", "0"], "max_turn_plays=0 is not allowed: use an integer from 1 to 2147483647, or None for no limit"),
])
def test_impossible_rule_flags_stop_the_command_naming_the_setting(flags, message, capsys):
    assert main(["demo", *flags]) == 2
    assert f"skipbo demo: error: {message}" in capsys.readouterr().err


def test_demo_plays_one_seeded_game_to_its_end(capsys):
    assert main(["demo", "--seed", "3", "--stock-size", "5"]) == 0
    first = capsys.readouterr().out
    assert main(["demo", "--seed", "3", "--stock-size", "5"]) == 0
    assert "outcome:" in first and capsys.readouterr().out == first


@pytest.mark.parametrize("flags, settings", [
    ([], {"max_turn_plays": 100, "max_turns": None}),
    (["--max-turn-plays", "7", "--max-turns", "50"], {"max_turn_plays": 7, "max_turns": 50}),
    (["--max-turn-plays", "none", "--max-turns", "None"], {"max_turn_plays": None, "max_turns": None}),
])
def test_limit_flags_take_a_number_or_none(flags, settings):
    import argparse

    from skipbo_cli.rule_flags import add_rule_flags, rules_from_args

    parser = argparse.ArgumentParser()
    add_rule_flags(parser)
    rules = rules_from_args(parser.parse_args(flags))
    assert {name: getattr(rules, name) for name in settings} == settings


def test_a_limit_flag_that_is_neither_a_number_nor_none_is_refused(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["demo", "--max-turn-plays", "many"])
    assert exit_info.value.code == 2
    assert "'many' is not a limit: use a positive integer or none" in capsys.readouterr().err
