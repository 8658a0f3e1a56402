"""Files are files and outputs are not overwritten: every option that names a file to read takes a path (never a
descriptor) to a regular file within a size cap (a FIFO never blocks), every output that holds files already
is refused without ``--overwrite``, and bad input to every ``skipbo`` command is one line and exit status 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import agents.learned_parameters
from agents.learned_parameters import WEIGHTS_FILE
from agents.loading import load_policy
from skipbo_cli.main import main

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "configs" / "ppo_2p.yaml"
NEEDS_FIFO = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")


def command(argv: list[str], capsys) -> tuple[int, str]:
    code = main(argv)
    return code, capsys.readouterr().err


def one_line(err: str) -> str:
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    return err


# ---------------------------------------------------------------------- learned:weights=...
@pytest.mark.parametrize("descriptor", ["0", "1", "2"])
def test_a_number_as_the_weights_file_is_refused_as_not_a_path_and_stderr_stays_open(descriptor, capsys):
    code, err = command(["evaluate", "--agents", f"learned:weights={descriptor}", "greedy", "--games", "2"], capsys)
    assert code == 2 and f"learned weights {descriptor} is not a file path" in one_line(err)
    os.fstat(2)  # =2 did not close stderr
    print("still writable", file=sys.stderr)
    assert "still writable" in capsys.readouterr().err


def test_a_file_named_like_a_number_is_read_when_given_as_a_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("0").write_text(Path(WEIGHTS_FILE).read_text())
    assert load_policy("learned:weights=./0").parameters == load_policy("learned").parameters


@NEEDS_FIFO
def test_a_fifo_as_the_weights_file_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "weights.json"
    os.mkfifo(fifo)
    done = subprocess.run([sys.executable, "-m", "skipbo_cli.main", "evaluate", "--agents",
                           f"learned:weights={fifo}", "greedy", "--games", "2"], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 2 and "is not a regular file" in one_line(done.stderr)


def test_a_weights_file_over_the_cap_is_refused_unread(tmp_path, monkeypatch, capsys):
    path = tmp_path / "big.json"
    path.write_text(Path(WEIGHTS_FILE).read_text() + " " * 2000)
    monkeypatch.setattr(agents.learned_parameters, "MAX_WEIGHTS_BYTES", 1000)
    code, err = command(["evaluate", "--agents", f"learned:weights={path}", "greedy", "--games", "2"], capsys)
    assert code == 2 and "more than the 1,000 it may be" in one_line(err)


@pytest.mark.parametrize("text, words", [
    ('{"parameters": ' * 50_000 + "{}" + "}" * 50_000, "nested too deeply"),
    ('{"parameters": {"stock_cards": 1' + "0" * 5000 + "}}", "cannot be read"),
    ('{"parameters": {"stock_cards": 1e999}}', "missing"),
    ("[1, 2]", "expected a JSON object"),
    ("\xff", "not UTF-8"),
])
def test_a_weights_file_of_the_wrong_shape_is_one_line(text, words, tmp_path, capsys):
    path = tmp_path / "weights.json"
    path.write_bytes(text.encode("latin-1"))
    code, err = command(["evaluate", "--agents", f"learned:weights={path}", "greedy", "--games", "2"], capsys)
    assert code == 2 and words in one_line(err)


# ---------------------------------------------------------------------- every other file read
@NEEDS_FIFO
@pytest.mark.parametrize("argv", [
    ["train", "{fifo}.yaml"],
    ["evaluate", "--agents", "{fifo}.zip", "greedy"],
    ["import-sb3", "{fifo}.zip", "{tmp}/out.zip"],
    ["train", "snes_2p", "snes.start={fifo}.json"],
    ["train", "--resume", "{run}"],
], ids=["config", "model", "sb3 archive", "snes.start", "resume state"])
def test_a_fifo_is_refused_wherever_a_file_is_read(argv, tmp_path):
    fifo = tmp_path / "pipe"
    run = tmp_path / "run"
    (run / "checkpoints" / "step_000000000").mkdir(parents=True)
    (run / "config.yaml").write_text(QUICKSTART.read_text())
    (run / "checkpoints" / "latest.json").write_text('{"checkpoint": "step_000000000"}')
    os.mkfifo(run / "checkpoints" / "step_000000000" / "state.json")
    for suffix in (".yaml", ".zip", ".json"):
        os.mkfifo(f"{fifo}{suffix}")
    argv = [word.replace("{fifo}", str(fifo)).replace("{tmp}", str(tmp_path)).replace("{run}", str(run))
            for word in argv]
    done = subprocess.run([sys.executable, "-m", "skipbo_cli.main", *argv], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 2, done.stderr
    assert "is not a regular file" in one_line(done.stderr) or "missing or incomplete" in done.stderr


# ---------------------------------------------------------------------- outputs
def test_save_games_refuses_a_folder_that_holds_games_unless_overwrite(tmp_path, capsys):
    games = tmp_path / "games"
    argv = ["evaluate", "--agents", "greedy", "random", "--games", "2", "--save-games", str(games), "--no-progress"]
    assert main(argv) == 0
    first = {path.name: path.read_text() for path in games.iterdir()}
    (games / "game-000099.json").write_text("{}")  # an older tournament's game
    capsys.readouterr()
    code, err = command(argv, capsys)
    assert code == 2 and f"the folder {str(games)!r} already holds 3 game files" in one_line(err)
    assert "--overwrite" in err and (games / "game-000099.json").read_text() == "{}"  # nothing touched
    assert main([*argv[:-1], "--overwrite", "--no-progress"]) == 0
    assert {path.name: path.read_text() for path in games.iterdir()} == first  # exactly this tournament's games


def test_json_and_plot_files_that_exist_are_refused_before_the_tournament_unless_overwrite(tmp_path, capsys):
    report = tmp_path / "report.json"
    report.write_text("keep me")
    code, err = command(["evaluate", "--agents", "greedy", "--games", "2", "--json", str(report)], capsys)
    assert code == 2 and "--json" in one_line(err) and "--overwrite" in err and report.read_text() == "keep me"
    assert main(["evaluate", "--agents", "greedy", "random", "--games", "2", "--json", str(report), "--overwrite",
                 "--no-progress"]) == 0
    assert json.loads(report.read_text())["games_played"] == 2


def test_import_sb3_refuses_to_replace_an_existing_model_unless_overwrite(tmp_path, capsys):
    out = tmp_path / "mine.zip"
    out.write_bytes(b"an earlier model")
    code, err = command(["import-sb3", str(tmp_path / "ppo.zip"), str(out)], capsys)
    assert code == 2 and "already exists" in one_line(err) and "--overwrite" in err
    assert out.read_bytes() == b"an earlier model"
    code, err = command(["import-sb3", str(tmp_path / "ppo.zip"), str(out), "--overwrite"], capsys)
    assert code == 2 and "no model file" in one_line(err)  # past the check: the archive does not exist


# ---------------------------------------------------------------------- one exit status for bad input
@pytest.mark.parametrize("argv, words", [
    (["demo", "--players", "9"], "num_players=9"),
    (["play", "--seat", "5"], "is not a seat"),
    (["play", "--players", "4", "--opponents", "random", "greedy"], "2 opponents for 4 players"),
    (["play", "--opponents", "learned:weights=0"], "is not a file path"),
    (["evaluate", "--agents", "nobody"], "unknown policy spec"),
    (["train", "{tmp}/none.yaml"], "does not exist"),
    (["train", "--resume", "{tmp}"], "not a run folder"),
    (["import-sb3", "{tmp}/none.zip", "{tmp}/out.zip"], "no model file"),
], ids=lambda value: " ".join(value) if isinstance(value, list) else None)
def test_bad_input_to_every_command_exits_2_with_one_line(argv, words, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", open(os.devnull))
    code, err = command([word.replace("{tmp}", str(tmp_path)) for word in argv], capsys)
    assert code == 2 and words in one_line(err) and err.startswith(f"skipbo {argv[0]}: error: "), err
