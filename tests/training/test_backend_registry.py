"""A training backend is one folder and one line: a backend added at run time (its ``Backend`` in
``training.backends.BACKENDS`` and its package in ``training.backend_names.BACKEND_PACKAGES``, as
tests/agents/test_registry.py adds a bot) appears in every place that names the backends, with no other file
touched: ``skipbo --help``, ``skipbo train --help``, ``--list-configs``, ``--list-keys`` and the leaderboard's
table of what each backend made (a row saying it made no player yet)."""

from __future__ import annotations

import dataclasses

import pytest

from evaluation.leaderboard import load_records
from skipbo_cli.main import main
from training import backend_names
from training.backends import BACKENDS
from training.leaderboard import render_page
from training.schema import Backend, setting


@dataclasses.dataclass
class ToySettings:
    rounds: int = setting(3, "rounds the toy backend plays", min=1, max=100)


TOY = Backend(name="toy", summary="a toy backend the tests add", section="toy", settings=ToySettings,
              check=lambda config: None, trainer="tests.training.test_backend_registry:ToySettings")


@pytest.fixture
def toy_backend(monkeypatch):
    monkeypatch.setitem(BACKENDS, TOY.name, TOY)
    monkeypatch.setattr(backend_names, "BACKEND_PACKAGES", backend_names.BACKEND_PACKAGES + ("training.toy",))
    return TOY


def output_of(argv: list[str], capsys) -> str:
    try:
        assert main(argv) == 0
    except SystemExit as stopped:
        assert stopped.code == 0
    return " ".join(capsys.readouterr().out.split())


def test_the_top_level_help_and_the_train_help_name_the_added_backend(toy_backend, capsys):
    assert "toy" in output_of(["--help"], capsys).split("(")[-1]
    assert "toy: a toy backend the tests add" in output_of(["train", "--help"], capsys)


def test_the_config_lists_name_the_added_backend_and_its_keys(toy_backend, capsys):
    assert "backend toy: a toy backend the tests add (no shipped config)" in output_of(
        ["train", "--list-configs"], capsys)
    keys = output_of(["train", "--list-keys"], capsys)
    assert "-- backend: toy: a toy backend the tests add toy.rounds 3 rounds the toy backend plays" in keys
    assert "toy: a toy backend the tests add" in keys.split("-- backend:")[0]  # the help of backend:


def test_the_leaderboard_gives_a_backend_without_a_player_a_row_saying_so(toy_backend):
    page = render_page(load_records())
    assert "| toy | | no shipped player yet (a toy backend the tests add) | | | | |" in page
    assert page.index("| td |") < page.index("| toy |")  # in the order of the backends


def test_without_the_toy_every_output_is_as_before(capsys):
    assert "toy" not in output_of(["train", "--list-keys"], capsys)
    assert "toy" not in render_page(load_records())
