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
])
def test_impossible_rule_flags_stop_the_command_naming_the_setting(flags, message, capsys):
    assert main(["demo", *flags]) == 2
    assert f"skipbo demo: error: {message}" in capsys.readouterr().err


def test_demo_plays_one_seeded_game_to_its_end(capsys):
    assert main(["demo", "--seed", "3", "--stock-size", "5"]) == 0
    first = capsys.readouterr().out
    assert main(["demo", "--seed", "3", "--stock-size", "5"]) == 0
    assert "outcome:" in first and capsys.readouterr().out == first
