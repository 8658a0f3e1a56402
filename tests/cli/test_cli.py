"""The ``skipbo`` entry point: help, version, and rule flags refused with the setting named."""

from __future__ import annotations

import subprocess
import sys

import pytest

import skipbo_env
from skipbo_cli.main import SUBCOMMANDS, main


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


HEAVY_LIBRARIES = ("gymnasium", "pettingzoo", "torch", "stable_baselines3", "sb3_contrib", "rich", "yaml", "ray",
                   "starlette", "numba", "matplotlib", "tensorboard")


@pytest.mark.parametrize("argv", [["--help"], ["--version"], []])
def test_the_top_level_command_loads_no_rl_library(argv):
    code = ("import sys\nfrom skipbo_cli.main import main\ntry:\n    main(%r)\nexcept SystemExit:\n    pass\n"
            "print(sorted(set(m.split('.')[0] for m in sys.modules) & set(%r)))" % (argv, HEAVY_LIBRARIES))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"


def test_every_subcommand_is_listed_by_the_top_level_help(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    listed = capsys.readouterr().out
    for name in SUBCOMMANDS:
        assert name in listed


@pytest.mark.parametrize("name", sorted(SUBCOMMANDS))
def test_every_subcommand_reads_its_own_flags(name, capsys):
    with pytest.raises(SystemExit) as stopped:
        main([name, "--help"])
    assert stopped.value.code == 0
    assert "--help" in capsys.readouterr().out


def test_help_texts_point_at_the_rules_document_in_the_repository(capsys):
    from pathlib import Path

    rules = Path(__file__).resolve().parents[2] / "docs" / "RULES.md"
    text = rules.read_text()
    for section in ("## Your turn", "## Partners", "## Points and matches", "## Action ids", "## Saved positions"):
        assert section in text
    for command in (["play", "--help"], ["evaluate", "--help"], ["demo", "--help"]):
        with pytest.raises(SystemExit):
            main(command)
        assert "docs/RULES.md" in capsys.readouterr().out


@pytest.mark.parametrize("command", [[name, "--help"] for name in sorted(SUBCOMMANDS)] + [["train", "--list-keys"]],
                         ids=lambda command: " ".join(command))
def test_no_help_text_names_the_rules_document_without_its_folder(command, capsys):
    try:
        main(command)
    except SystemExit:
        pass
    out = capsys.readouterr().out
    assert out and "RULES.md" not in out.replace("docs/RULES.md", "")
