"""The help texts say what the code does: ``skipbo --help`` and ``skipbo train --help`` name every training backend
(``training.config``'s ``backend`` choices), not one of them."""

from __future__ import annotations

import dataclasses
import re
import typing

import pytest

from skipbo_cli.main import main
from training.config import TrainConfig


def backends() -> tuple[str, ...]:
    field = next(f for f in dataclasses.fields(TrainConfig) if f.name == "backend")
    return typing.get_args(typing.get_type_hints(TrainConfig)[field.name])


@pytest.mark.parametrize("argv", [["--help"], ["train", "--help"]])
def test_the_help_names_every_training_backend(argv, capsys):
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert backends() and set(backends()) <= set(re.findall(r"\w+", text)), text
    assert "masked PPO self-play" not in text
