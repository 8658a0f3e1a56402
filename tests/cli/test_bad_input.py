"""Bad input to every ``skipbo`` command ends in one line and a non-zero exit, never a traceback.

The table runs each command in-process through ``skipbo_cli.main.main``; a few cases run the real
entry point in a subprocess. Each file a case needs is built in the test's own folder.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch

import agents.saved_model as saved_model
from agents.loading import load_policy
from agents.network import parameter_shapes
from agents.saved_model import METADATA_ENTRY, MODEL_FORMAT, WEIGHTS_ENTRY, SavedModelError, encode_model
from skipbo_env import Game, Rules
from skipbo_env.actions import NUM_ACTIONS
from skipbo_env.encoding import OBS_SIZE
from skipbo_cli.main import main
from training.config import dump_config, load_config

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = str(ROOT / "configs" / "ppo_2p.yaml")  # an sb3 run: the cases use its keys
HIDDEN = [8]


# ---------------------------------------------------------------------- model files, good and bad
def weights(seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {name: rng.normal(size=shape).astype(np.float32) for name, shape in parameter_shapes(OBS_SIZE, HIDDEN).items()}


def model_metadata() -> dict:
    return {"format": MODEL_FORMAT, "num_actions": NUM_ACTIONS, "obs_size": OBS_SIZE, "hidden": HIDDEN,
            "activation": "relu"}


def model_zip(tensors: dict, metadata: str | bytes | None = None, method: int = zipfile.ZIP_DEFLATED) -> bytes:
    """A model zip of ``tensors`` (saved as given, unchecked) and the metadata text."""
    weights_file = io.BytesIO()
    torch.save(tensors, weights_file)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", method) as archive:
        archive.writestr(METADATA_ENTRY, metadata if metadata is not None else json.dumps(model_metadata()))
        archive.writestr(WEIGHTS_ENTRY, weights_file.getvalue())
    return buffer.getvalue()


def good_tensors() -> dict:
    return {name: torch.from_numpy(value) for name, value in weights().items()}


def patch_member(data: bytes, entry: str, *, flag: int | None = None, method: int | None = None,
                 declared_size: int | None = None) -> bytes:
    """The zip with ``entry``'s headers (local and central) changed: general flag bits, method, size."""
    data = bytearray(data)
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as archive:
        local = archive.getinfo(entry).header_offset
    central = data.index(b"PK\x01\x02")
    while data[central + 46:central + 46 + len(entry)] != entry.encode():
        central = data.index(b"PK\x01\x02", central + 4)
    for offset, base in ((6, local), (8, central)):
        if flag is not None:
            data[base + offset:base + offset + 2] = flag.to_bytes(2, "little")
        if method is not None:
            data[base + offset + 2:base + offset + 4] = method.to_bytes(2, "little")
    if declared_size is not None:
        data[local + 22:local + 26] = declared_size.to_bytes(4, "little")
        data[central + 24:central + 28] = declared_size.to_bytes(4, "little")
    return bytes(data)


def zlib_corrupted() -> bytes:
    data = bytearray(model_zip(good_tensors()))
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as archive:
        info = archive.getinfo(WEIGHTS_ENTRY)
    start = info.header_offset + 30 + len(info.filename) + len(info.extra)
    for offset in range(start + 10, start + info.compress_size - 10, 7):
        data[offset] ^= 0xFF
    return bytes(data)


def sparse_tensors() -> dict:
    tensors = good_tensors()
    tensors["action_net.bias"] = tensors["action_net.bias"].to_sparse()
    return tensors


def bfloat16_tensors() -> dict:
    return {name: tensor.to(torch.bfloat16) for name, tensor in good_tensors().items()}


def mixed_key_tensors() -> dict:
    tensors: dict = good_tensors()
    tensors[7] = torch.zeros(2)
    return tensors


CORRUPT_MODELS = {
    "zlib-corrupted member": (zlib_corrupted, "damaged zip"),
    "encrypted member": (lambda: patch_member(model_zip(good_tensors()), WEIGHTS_ENTRY, flag=0x1), "encrypted"),
    "unknown compression method": (lambda: patch_member(model_zip(good_tensors()), WEIGHTS_ENTRY, method=99),
                                   "compression method 99"),
    "huge declared member": (lambda: patch_member(model_zip(good_tensors()), WEIGHTS_ENTRY, declared_size=2**31),
                             "declares 2,147,483,648 bytes"),
    "bfloat16 tensors": (lambda: model_zip(bfloat16_tensors()), "torch.bfloat16"),
    "sparse tensor": (lambda: model_zip(sparse_tensors()), "torch.sparse_coo"),
    "mixed key types": (lambda: model_zip(mixed_key_tensors()), "named by strings"),
    "deeply nested metadata": (lambda: model_zip(good_tensors(), '{"a":' * 200_000 + "1" + "}" * 200_000),
                               "metadata is not JSON"),
    "metadata not UTF-8": (lambda: model_zip(good_tensors(), b"\xff\xfe"), "metadata is not JSON"),
    "no weights member": (lambda: _without_weights(), "has no policy.pt"),
    "truncated zip": (lambda: model_zip(good_tensors())[:-200], "not a skipbo model"),
    "pickled object weights": (lambda: _pickled_weights(), "refused to load"),
    "random bytes": (lambda: np.random.default_rng(0).bytes(5000), "not a skipbo model"),
    "empty file": (lambda: b"", "not a skipbo model"),
}


def _without_weights() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(METADATA_ENTRY, json.dumps(model_metadata()))
    return buffer.getvalue()


class Evil:
    def __reduce__(self):
        return (os.system, ("echo pwned",))


def _pickled_weights() -> bytes:
    import pickle

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(METADATA_ENTRY, json.dumps(model_metadata()))
        archive.writestr(WEIGHTS_ENTRY, pickle.dumps({"x": Evil()}))
    return buffer.getvalue()


@pytest.mark.parametrize("kind", list(CORRUPT_MODELS))
def test_load_policy_refuses_each_kind_of_damaged_model_file_with_saved_model_error(tmp_path, kind):
    build, message = CORRUPT_MODELS[kind]
    path = tmp_path / "model.zip"
    path.write_bytes(build())
    with pytest.raises(SavedModelError, match=message):
        load_policy(str(path))


def test_a_member_larger_than_the_limit_is_refused_even_when_its_header_lies(tmp_path, monkeypatch):
    data = model_zip(good_tensors())
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        real_size = archive.getinfo(WEIGHTS_ENTRY).file_size
    monkeypatch.setattr(saved_model, "MAX_MODEL_BYTES", len(data) + 10)
    assert real_size > saved_model.MAX_MODEL_BYTES  # the member inflates past the limit
    path = tmp_path / "model.zip"
    path.write_bytes(patch_member(data, WEIGHTS_ENTRY, declared_size=100))  # ... but claims 100 bytes
    with pytest.raises(SavedModelError):
        load_policy(str(path))
    path.write_bytes(data)  # the truthful header is refused before any byte is inflated
    with pytest.raises(SavedModelError, match=f"declares {real_size:,} bytes"):
        load_policy(str(path))


def test_a_model_file_larger_than_the_limit_is_refused_before_it_is_read(tmp_path, monkeypatch):
    path = tmp_path / "model.pt"
    path.write_bytes(encode_model(weights(), {"obs_size": OBS_SIZE, "hidden": HIDDEN, "activation": "relu"}, ".pt"))
    monkeypatch.setattr(saved_model, "MAX_MODEL_BYTES", path.stat().st_size - 1)
    with pytest.raises(SavedModelError, match="more than the .* it may be"):
        load_policy(str(path))


def test_weights_saved_as_parameters_load_and_play_like_plain_tensors(tmp_path):
    plain, parameters = tmp_path / "plain.zip", tmp_path / "parameters.zip"
    plain.write_bytes(model_zip(good_tensors()))
    parameters.write_bytes(model_zip({k: torch.nn.Parameter(v) for k, v in good_tensors().items()}))
    game = Game.new(Rules(), seed=4)
    from skipbo_env.encoding import observe

    observation = observe(game, game.current_seat)
    assert load_policy(str(parameters)).act(observation) == load_policy(str(plain)).act(observation)


def test_a_folder_named_like_a_model_is_refused(tmp_path):
    (tmp_path / "dir.zip").mkdir()
    with pytest.raises(ValueError, match="is not a file"):
        load_policy(str(tmp_path / "dir.zip"))


# ---------------------------------------------------------------------- files the commands read
def game_record(seed: int = 3) -> dict:
    game = Game.new(Rules(stock_size=5), seed=seed)
    for _ in range(6):
        game.step(game.legal_actions()[0])
    return game.record()


def replay_files(folder: Path) -> None:
    record = game_record()
    files = {
        "binary.json": np.random.default_rng(1).bytes(300),
        "deep.json": ("[" * 100_000 + "]" * 100_000).encode(),
        "empty-list.json": b"[]",
        "number.json": b"7",
        "string-action.json": json.dumps({**record, "actions": ["x"]}).encode(),
        "float-action.json": json.dumps({**record, "actions": [1.5]}).encode(),
        "actions-not-list.json": json.dumps({**record, "actions": 3}).encode(),
        "no-record.json": json.dumps({"format": "skipbo-match/1", "hands": [{"final_state": {}}]}).encode(),
        "hands-not-list.json": json.dumps({"format": "skipbo-match/1", "hands": 5}).encode(),
        "empty-match.json": json.dumps({"format": "skipbo-match/1", "hands": []}).encode(),
        "winners-not-list.json": json.dumps({**record, "winners": 1}).encode(),
        "final-state-not-mapping.json": json.dumps({**record, "final_state": [1]}).encode(),
        "bad-dealer.json": json.dumps({**record, "dealer": "x"}).encode(),
        "bad-rules.json": json.dumps({**record, "rules": {"num_players": 9}}).encode(),
        "list-of-numbers.json": b"[1, 2]",
        "illegal-action.json": json.dumps({**record, "actions": [*record["actions"], 10**6]}).encode(),
        "no-rules.json": json.dumps({k: v for k, v in record.items() if k != "rules"}).encode(),
        "no-dealer.json": json.dumps({k: v for k, v in record.items() if k != "dealer"}).encode(),
        "text-seed.json": json.dumps({**record, "seed": "x"}).encode(),
    }
    for name, data in files.items():
        (folder / name).write_bytes(data)


def _replay_refuses_broken_deals_with_value_error() -> bool:
    """Whether ``Game.replay`` says ValueError for a record without rules (the loading-checks work)."""
    record = game_record()
    del record["rules"]
    try:
        Game.replay(record)
    except ValueError:
        return True
    except Exception:
        return False
    return True


NEEDS_LOADING_CHECKS = pytest.mark.skipif(not _replay_refuses_broken_deals_with_value_error(),
                                          reason="Game.replay does not refuse a broken deal with ValueError yet "
                                                 "(the loading-checks branch does)")


def run_folder(folder: Path, state: str | None = None, latest: str | None = None) -> str:
    """A run folder as skipbo train leaves it, with the checkpoint files given (text)."""
    config = load_config(QUICKSTART, [f"output_dir={folder / 'runs'}"])
    run = folder / "run"
    (run / "checkpoints" / "step_000000100").mkdir(parents=True)
    (run / "config.yaml").write_text(dump_config(config))
    (run / "run.json").write_text("{}")
    if latest is not None:
        (run / "checkpoints" / "latest.json").write_text(latest)
    if state is not None:
        (run / "checkpoints" / "step_000000100" / "state.json").write_text(state)
    return str(run)


@pytest.fixture
def tmp(tmp_path: Path) -> Path:
    """A folder holding every bad file the table names."""
    for kind, (build, _) in CORRUPT_MODELS.items():
        (tmp_path / f"{kind.replace(' ', '-')}.zip").write_bytes(build())
    replay_files(tmp_path)
    (tmp_path / "a-file.txt").write_text("x")
    for folder in ("a-folder", "dir.zip", "dir.json"):
        (tmp_path / folder).mkdir()
    (tmp_path / "bad.yaml").write_text("ppo: [unclosed\n")
    (tmp_path / "list.yaml").write_text("- 1\n- 2\n")
    (tmp_path / "not-a-mapping.yaml").write_text("ppo: 3\n")
    (tmp_path / "code.py").write_text("class NotAPolicy:\n    pass\n")
    return tmp_path


def _cases():
    """(id, argv with {tmp} for the case folder, words the one-line message must hold)."""
    vector = ["--engine", "vector", "--games", "2"]
    quick = [QUICKSTART, "output_dir={tmp}/runs"]
    models = [(f"evaluate a model: {kind}", ["evaluate", "--agents", f"{{tmp}}/{kind.replace(' ', '-')}.zip", "greedy",
                                             "--games", "2"], message) for kind, (_, message) in CORRUPT_MODELS.items()]
    return models + [
        # model files anywhere a spec is taken
        ("play against a corrupt model", ["play", "--opponents", "{tmp}/encrypted-member.zip"], "encrypted"),
        ("play autoplay by a corrupt model", ["play", "--autoplay", "{tmp}/bfloat16-tensors.zip"], "bfloat16"),
        ("train against a corrupt model", ["train", *quick, "opponents.mix={ {tmp}/zlib-corrupted-member.zip: 1 }"],
         "opponents.mix"),
        ("evaluate a missing model", ["evaluate", "--agents", "{tmp}/nothing.zip", "greedy"], "does not exist"),
        ("evaluate a folder as a model", ["evaluate", "--agents", "{tmp}/dir.zip", "greedy"], "is not a file"),
        ("evaluate a class without act", ["evaluate", "--agents", "{tmp}/code.py:NotAPolicy", "greedy"],
         "no act(observation)"),
        ("evaluate a missing class", ["evaluate", "--agents", "{tmp}/code.py:Nobody", "greedy"], "defines no"),
        ("evaluate an unknown bot option", ["evaluate", "--agents", "planner:depth=3", "greedy"], "has no option"),
        ("evaluate an unknown spec", ["evaluate", "--agents", "nobody", "greedy"], "unknown policy spec"),
        ("evaluate a two-player model at three seats", ["evaluate", "--agents", "neural-2p", "greedy", "--players", "3"],
         "was trained for 2 players"),
        # seeds and numbers
        ("demo negative seed", ["demo", "--seed", "-1"], "use an integer from 0"),
        ("demo text seed", ["demo", "--seed", "x"], "is not an integer"),
        ("demo huge seed", ["demo", "--seed", str(2**64)], "use an integer from 0"),
        ("evaluate negative seed", ["evaluate", "--agents", "greedy", "--seed", "-1"], "use an integer from 0"),
        ("play negative seed", ["play", "--seed", "-1"], "argument --seed"),
        ("play nan delay", ["play", "--delay", "nan"], "finite number of seconds"),
        ("play infinite delay", ["play", "--delay", "inf"], "finite number of seconds"),
        ("play negative delay", ["play", "--delay", "-1"], "finite number of seconds"),
        ("play seat outside the table", ["play", "--seat", "5"], "is not a seat"),
        ("play too many opponents", ["play", "--players", "4", "--opponents", "random", "greedy"], "2 opponents"),
        ("evaluate zero games", ["evaluate", "--agents", "greedy", "--games", "0"], "use an integer from 1"),
        ("evaluate too many games", ["evaluate", "--agents", "greedy", "--games", "10000000000"], "1,000,000"),
        ("evaluate too many workers", ["evaluate", "--agents", "greedy", "--workers", "100000"], "1 to 256"),
        ("evaluate unknown engine", ["evaluate", "--agents", "greedy", "--engine", "gpu"], "invalid choice"),
        ("evaluate unknown seat orders", ["evaluate", "--agents", "greedy", "--seat-orders", "every"],
         "choose from 'rotations', 'all'"),
        ("evaluate unknown flag", ["evaluate", "--agents", "greedy", "--fast"], "unrecognized arguments"),
        ("evaluate without agents", ["evaluate"], "--agents"),
        ("unknown command", ["fly"], "invalid choice"),
        # rules and resource limits
        ("demo far too many decks", ["demo", "--decks", "100000000"], "from 1 to 200"),
        ("demo zero decks", ["demo", "--decks", "0"], "from 1 to 200"),
        ("demo seven players", ["demo", "--players", "7"], "num_players=7"),
        ("demo partners for three", ["demo", "--partners", "--players", "3"], "partners=True needs 4 or 6"),
        ("demo stockpile too large", ["demo", "--stock-size", "100"], "stock_size=100"),
        ("demo negative max turns", ["demo", "--max-turns", "-2"], "max_turns"),
        ("demo bad match end", ["demo", "--match-end", "target:x"], "is not a match end"),
        ("demo bad team win", ["demo", "--team-win", "nobody"], "invalid choice"),
        ("evaluate vector engine with 300 decks", ["evaluate", "--agents", "greedy", "random", *vector, "--decks",
                                                   "300"], "from 1 to 200"),
        ("evaluate vector engine saving games", ["evaluate", "--agents", "greedy", "random", *vector,
                                                 "--save-games", "{tmp}/games"], "--save-games"),
        ("evaluate vector engine with a class-path policy", ["evaluate", "--agents", "agents.planner:PlannerBot",
                                                            "random", *vector], "cannot play on the vector engine"),
        # output paths, checked before the tournament
        ("evaluate json in a missing folder", ["evaluate", "--agents", "greedy", "--json", "/nonexistent/dir/x.json"],
         "does not exist"),
        ("evaluate json that is a folder", ["evaluate", "--agents", "greedy", "--json", "{tmp}/a-folder"],
         "does not end in .json"),
        ("evaluate json folder named .json", ["evaluate", "--agents", "greedy", "--json", "{tmp}/dir.json"],
         "is a folder"),
        ("evaluate json under a file", ["evaluate", "--agents", "greedy", "--json", "{tmp}/a-file.txt/x.json"],
         "does not exist"),
        ("evaluate plot of unknown format", ["evaluate", "--agents", "greedy", "--plot", "out.xyz"],
         ".png, .pdf or .svg"),
        ("evaluate save-games onto a file", ["evaluate", "--agents", "greedy", "--save-games", "{tmp}/a-file.txt"],
         "is a file"),
        ("evaluate save-games under a file", ["evaluate", "--agents", "greedy", "--save-games",
                                              "{tmp}/a-file.txt/games"], "is a file"),
        ("play save of the wrong kind", ["play", "--save", "{tmp}/game.txt"], "does not end in .json"),
        ("play save in a missing folder", ["play", "--save", "{tmp}/nowhere/game.json"], "does not exist"),
        # replay
        ("replay a missing file", ["replay", "{tmp}/nothing.json"], "cannot read"),
        ("replay a folder", ["replay", "{tmp}/a-folder"], "cannot read"),
        ("replay binary data", ["replay", "{tmp}/binary.json"], "not JSON"),
        ("replay deep nesting", ["replay", "{tmp}/deep.json"], "nested too deeply"),
        ("replay an empty list", ["replay", "{tmp}/empty-list.json"], "empty list"),
        ("replay a number", ["replay", "{tmp}/number.json"], "not a game"),
        ("replay a list of numbers", ["replay", "{tmp}/list-of-numbers.json"], "not a game"),
        ("replay a text action", ["replay", "{tmp}/string-action.json"], "integer action ids"),
        ("replay a fractional action", ["replay", "{tmp}/float-action.json"], "integer action ids"),
        ("replay actions not a list", ["replay", "{tmp}/actions-not-list.json"], "integer action ids"),
        ("replay a match hand without record", ["replay", "{tmp}/no-record.json"], "game 'record'"),
        ("replay match hands not a list", ["replay", "{tmp}/hands-not-list.json"], "'hands' must be a list"),
        ("replay an empty match", ["replay", "{tmp}/empty-match.json"], "no hands"),
        ("replay winners not a list", ["replay", "{tmp}/winners-not-list.json"], "'winners' must be"),
        ("replay final state not a mapping", ["replay", "{tmp}/final-state-not-mapping.json"], "'final_state' must"),
        ("replay a bad dealer", ["replay", "{tmp}/bad-dealer.json"], "dealer"),
        ("replay bad rules", ["replay", "{tmp}/bad-rules.json"], "num_players"),
        ("replay an illegal action", ["replay", "{tmp}/illegal-action.json", "--all"], "does not replay"),
        ("replay a hand out of range", ["replay", "{tmp}/bad-dealer.json", "--hand", "0"], "holds hands 1 to 1"),
        pytest.param("replay without rules", ["replay", "{tmp}/no-rules.json"], "rules", marks=NEEDS_LOADING_CHECKS),
        pytest.param("replay without dealer", ["replay", "{tmp}/no-dealer.json"], "dealer", marks=NEEDS_LOADING_CHECKS),
        pytest.param("replay a text seed", ["replay", "{tmp}/text-seed.json"], "seed", marks=NEEDS_LOADING_CHECKS),
        # train: configs, keys, values, limits
        ("train without config", ["train"], "give a CONFIG"),
        ("train a missing config", ["train", "{tmp}/none.yaml"], "does not exist"),
        ("train bad YAML", ["train", "{tmp}/bad.yaml"], "not valid YAML"),
        ("train a YAML list", ["train", "{tmp}/list.yaml"], "must hold a mapping"),
        ("train a section that is a number", ["train", "{tmp}/not-a-mapping.yaml"], "ppo must be a mapping"),
        ("train unknown key", ["train", *quick, "ppo.speed=3"], "unknown key ppo.speed"),
        ("train unknown section", ["train", *quick, "bogus.key=1"], "unknown key bogus"),
        ("train override without value", ["train", *quick, "ppo.learning_rate"], "is not KEY=VALUE"),
        ("train bad YAML override", ["train", *quick, "network.hidden=[1,"], "is not a YAML value"),
        ("train wrong type", ["train", *quick, "ppo.n_steps=many"], "use an int"),
        ("train negative seed", ["train", *quick, "seed=-1"], "seed=-1"),
        ("train unknown device", ["train", *quick, "device=tpu"], "device='tpu'"),
        ("train unknown bot", ["train", *quick, "evaluation.opponents=[nobody]"], "evaluation.opponents"),
        ("train bad rules", ["train", *quick, "rules.num_players=9"], "rules: num_players=9"),
        ("train far too many decks", ["train", *quick, "rules.decks=100000000"], "from 1 to 200"),
        ("train far too many envs", ["train", *quick, "env.num_envs=100000000"], "env.num_envs"),
        ("train too many python envs", ["train", *quick, "env.vec_env=dummy", "env.num_envs=5000", "ppo.n_steps=8"],
         "at most 256"),
        ("train a huge rollout", ["train", *quick, "ppo.n_steps=100000000"], "rollout"),
        ("train a huge layer", ["train", *quick, "network.hidden=[1e12]"], "passes the model file's cap"),
        ("train too many layers", ["train", *quick, f"network.hidden=[{','.join(['4'] * 100)}]"], "1 to 16 sizes"),
        ("train an empty network", ["train", *quick, "network.hidden=[]"], "network.hidden=[]"),
        ("train a nan learning rate", ["train", *quick, "ppo.learning_rate=.nan"], "finite number"),
        ("train a run folder under a file", ["train", QUICKSTART, "output_dir={tmp}/a-file.txt/runs"], "is a file"),
        ("train both config and resume", ["train", QUICKSTART, "--resume", "{tmp}/a-folder"], "not both"),
        ("resume a missing folder", ["train", "--resume", "{tmp}/nothing"], "does not exist"),
        ("resume a folder that is no run", ["train", "--resume", "{tmp}/a-folder"], "not a run folder"),
        ("resume with another network", ["train", "--resume", "{run}", "network.hidden=[64]"],
         "network cannot change on --resume"),
        ("resume an invalid latest.json", ["train", "--resume", "{run:latest=not json}"], "latest.json is not valid JSON"),
        ("resume a latest.json list", ["train", "--resume", "{run:latest=[]}"], "must hold a JSON object"),
        ("resume a latest.json escaping", ["train", "--resume", '{run:latest={"checkpoint": "../../x"}}'],
         "names no checkpoint folder"),
        ("resume a missing checkpoint", ["train", "--resume", '{run:latest={"checkpoint": "step_000000200"}}'],
         "missing or incomplete"),
        ("resume an empty state.json", ["train", "--resume", "{run:state={}}"], "'timesteps' must be an integer"),
        ("resume a state.json of bad types", ["train", "--resume",
                                              '{run:state={"timesteps": 1, "updates": "x"}}'], "'updates'"),
    ]


CASES = _cases()


def _values(case) -> tuple:
    return case.values if hasattr(case, "marks") else case


def expand(argv: list[str], tmp: Path) -> list[str]:
    """``{tmp}`` -> the case folder; ``{run}`` / ``{run:latest=TEXT}`` / ``{run:state=TEXT}`` -> a run folder."""
    expanded = []
    for item in argv:
        if item.startswith("{run"):
            inner = item[len("{run"):-1]
            files = {"latest": '{"checkpoint": "step_000000100"}', "state": None}
            if inner:
                key, _, text = inner[1:].partition("=")
                files[key] = text
            expanded.append(run_folder(tmp, **files))
        else:
            expanded.append(item.replace("{tmp}", str(tmp)))
    return expanded


def run_command(argv: list[str], capsys) -> tuple[int, str]:
    """``main(argv)`` as the entry point runs it: exit status and stderr."""
    try:
        code = main(argv)
    except SystemExit as exit:
        code = exit.code
        if isinstance(code, str):  # the interpreter prints the message and exits 1
            print(code, file=sys.stderr)
            code = 1
    return code, capsys.readouterr().err


@pytest.mark.parametrize("name, argv, words", CASES, ids=[_values(c)[0] for c in CASES])
def test_bad_input_gets_one_line_naming_the_problem_and_a_non_zero_exit(name, argv, words, tmp, capsys, monkeypatch):
    monkeypatch.chdir(tmp)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    code, err = run_command(expand(argv, tmp), capsys)
    command = argv[0] if argv[0] in ("demo", "play", "replay", "evaluate", "train") else None
    assert code not in (0, None), f"{name}: exit status {code}"
    assert code == 2 or argv[0] == "replay", f"{name}: exit status {code}, not 2"  # replay: issue 23's other part
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, f"{name}: not one line:\n{err}"
    assert err.startswith(f"skipbo {command}: error: " if command else "skipbo: error: "), err
    assert words in err, f"{name}: {words!r} not in {err!r}"
    assert not (tmp / "runs").exists(), "a refused run left a run folder behind"
    assert not (tmp / "games").exists(), "a refused command left a games folder behind"


def test_the_table_tries_every_command():
    commands = {_values(c)[1][0] for c in CASES}
    assert {"demo", "play", "replay", "evaluate", "train"} <= commands and len(CASES) >= 100


def test_a_replay_larger_than_the_cap_is_refused_unread(tmp_path, capsys, monkeypatch):
    import skipbo_cli.replay

    path = tmp_path / "game.json"
    path.write_text(json.dumps(game_record()))
    monkeypatch.setattr(skipbo_cli.replay, "MAX_FILE_BYTES", path.stat().st_size - 1)
    code, err = run_command(["replay", str(path)], capsys)
    assert code != 0 and "larger than a game file may be" in err and len(err.strip().splitlines()) == 1


def test_a_bad_json_path_stops_evaluate_before_any_game_is_played(tmp_path, capsys, monkeypatch):
    import skipbo_cli.evaluate

    def no_tournament(*args, **kwargs):
        raise AssertionError("the tournament started")

    monkeypatch.setattr(skipbo_cli.evaluate, "run_tournament", no_tournament)
    code, err = run_command(["evaluate", "--agents", "greedy", "random", "--json", str(tmp_path / "no" / "r.json")],
                            capsys)
    assert code == 2 and "does not exist" in err


@pytest.mark.skipif(os.geteuid() == 0 if hasattr(os, "geteuid") else True, reason="root writes anywhere")
def test_an_unwritable_folder_is_refused_for_every_output(tmp_path, capsys):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        for argv in (["evaluate", "--agents", "greedy", "--json", str(locked / "r.json")],
                     ["evaluate", "--agents", "greedy", "--save-games", str(locked / "games")],
                     ["play", "--save", str(locked / "g.json")]):
            code, err = run_command(argv, capsys)
            assert code == 2 and "is not writable" in err
    finally:
        locked.chmod(0o700)


def test_a_traceback_stays_available_for_a_line(tmp_path, monkeypatch):
    monkeypatch.setenv("SKIPBO_TRACEBACK", "1")
    with pytest.raises(ValueError, match="num_players=7"):
        main(["demo", "--players", "7"])


# ---------------------------------------------------------------------- the real entry point
@pytest.mark.parametrize("argv, words", [
    (["demo", "--seed", "-1"], "argument --seed"),
    (["evaluate", "--agents", "{tmp}/zlib-corrupted-member.zip", "greedy"], "damaged zip"),
    (["replay", "{tmp}/deep.json"], "nested too deeply"),
    (["train", "{tmp}/bad.yaml"], "not valid YAML"),
])
def test_the_installed_entry_point_prints_one_line_too(argv, words, tmp):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "skipbo_cli.main", *expand(argv, tmp)], capture_output=True, text=True,
                          env=env, cwd=tmp, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and words in done.stderr, done.stderr
