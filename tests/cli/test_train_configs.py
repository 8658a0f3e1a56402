"""``skipbo train --list-configs`` and CONFIG as a shipped config's name (the configs travel inside the package)."""

from __future__ import annotations

import pytest

from skipbo_cli.main import main
from training.config import shipped_configs


def test_list_configs_names_every_shipped_config_with_its_summary_and_file(capsys):
    assert main(["train", "--list-configs"]) == 0
    out = capsys.readouterr().out
    for name, path in shipped_configs().items():
        assert f"\n{name} " in f"\n{out}" and str(path) in out
    assert "make train: a neural network trained in a few minutes" in out  # quickstart's first comment line


def test_a_shipped_config_is_named_without_a_path_from_any_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    # an override the schema refuses stops the run after the config was found and read
    assert main(["train", "quickstart", "neural.teacher_epochs=0"]) == 2
    err = capsys.readouterr().err
    assert "neural.teacher_epochs" in err and "does not exist" not in err
    assert not (tmp_path / "runs").exists()


def test_an_unknown_config_name_is_refused_naming_the_shipped_ones(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["train", "quikstart"]) == 2
    err = capsys.readouterr().err
    assert "'quikstart' does not exist" in err and "quickstart" in err and "--list-configs" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("argv", [["train"], ["train", "--no-progress"]])
def test_train_without_a_config_says_what_to_give(argv, capsys):
    assert main(argv) == 2
    assert "--list-configs" in capsys.readouterr().err


def test_an_old_config_name_still_runs_that_config_with_a_one_line_note(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    # snes_2p's own check (an even population) refuses the run: the old name reached the renamed config
    assert main(["train", "learned_2p", "snes.population=3"]) == 2
    captured = capsys.readouterr()
    assert captured.out.splitlines() == ["note: the config 'learned_2p' is now called 'snes_2p' (the old name still "
                                         "works)"]
    assert "snes.population=3 is not allowed" in captured.err


@pytest.mark.parametrize("override", ["neural.learning_rate=1e300", "neural.teacher_games=1000000000000",
                                      "neural.temperature=1e-320", "neural.hidden=[1024,1024]"])
def test_a_value_a_run_could_not_survive_exits_2_before_any_work(override, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["train", "quickstart", override]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and override.split("=")[0] in err and "Traceback" not in err
    assert not (tmp_path / "runs").exists()
