"""A fuzz of what a run reads: every config key of every backend (driven by the schema, so a new key is fuzzed
without a line here) and every field of the resume files (each state field, the weights and the data files of
``backend: neural``, the state of ``backend: snes``). Each bad value is one line naming the key, or the file and
the field, and a ``skipbo train --resume`` refusal is exit 2 without a traceback that leaves the run folder as it
was. No training: the run folders are built directly, as the trainers write them."""

from __future__ import annotations

import copy
import dataclasses
import io
import json
import math
import os
import shutil
import typing
import zipfile

import numpy as np
import pytest

from training.backends import BACKENDS
from training.checkpoint import RunFolder
from training.config import TrainConfig, config_from_dict, dump_config
from training.schema import ConfigError
from training.state_checks import CheckpointError


# ---------------------------------------------------------------------- config keys
def settings_keys(cls: type, prefix: str = "") -> list[tuple[str, typing.Any, typing.Mapping]]:
    """``(dotted key, annotation, metadata)`` of every setting of ``cls``, nested sections walked."""
    hints = typing.get_type_hints(cls)
    keys = []
    for field in dataclasses.fields(cls):
        if dataclasses.is_dataclass(hints[field.name]):
            keys += settings_keys(hints[field.name], prefix + field.name + ".")
        else:
            keys.append((prefix + field.name, hints[field.name], field.metadata))
    return keys


OWN_SECTIONS = {backend.section for backend in BACKENDS.values()}
CASES = [(name, key, kind, checks) for name, backend in BACKENDS.items()
         for key, kind, checks in settings_keys(TrainConfig)
         if key.split(".")[0] not in OWN_SECTIONS or key.split(".")[0] == backend.section]


def base_kind(kind):
    """The annotation without ``Optional``."""
    if typing.get_origin(kind) is typing.Union:
        return next(arg for arg in typing.get_args(kind) if arg is not type(None))
    return kind


def bad_values(kind, checks) -> dict[str, typing.Any]:
    """The values of a key that must be refused: of the wrong type, NaN, out of its range."""
    kind = base_kind(kind)
    origin = typing.get_origin(kind)
    wrong = [1] if origin is dict else {"not": "this"}
    values = {"wrong type": wrong, "NaN": math.nan}
    if kind in (int, float):
        if "min" in checks:
            values["below min"] = checks["min"] - (1 if kind is int else 1e-9 * max(1.0, abs(checks["min"])) + 1e-300)
        if "min_exclusive" in checks:
            values["at min_exclusive"] = checks["min_exclusive"]
        if "max" in checks:
            values["above max"] = checks["max"] + 1 if kind is int else checks["max"] * 2 + 1
        values["infinite"] = math.inf
    if origin is list:
        values["list of wrong items"] = [{"not": "this"}]
    return values


def path_set(data: dict, key: str, value) -> dict:
    data = copy.deepcopy(data)
    node = data
    *parents, last = key.split(".")
    for part in parents:
        node = node.setdefault(part, {})
    if value is DELETE:
        node.pop(last, None)
    else:
        node[last] = value
    return data


DELETE = object()


NEEDS = {"snes": {"snes": {"generations": 2}}}
"""What a backend's config needs beside its defaults."""


def base_config(backend: str) -> dict:
    return config_from_dict({"backend": backend, **NEEDS.get(backend, {})}).to_dict() | {"backend": backend}


@pytest.fixture(scope="module")
def bases() -> dict:
    return {name: base_config(name) for name in BACKENDS}


def refusal(data: dict) -> str | None:
    """``None`` when ``data`` loads; the refusal's message when it is a :class:`ConfigError` (any other exception
    fails the test)."""
    try:
        config_from_dict(data)
    except ConfigError as error:
        return str(error)
    return None


@pytest.mark.parametrize("backend, key, kind, checks", CASES, ids=[f"{c[0]}:{c[1]}" for c in CASES])
def test_every_config_key_refuses_bad_values_in_one_line_naming_it(bases, backend, key, kind, checks):
    data = bases[backend]
    message = refusal(path_set(data, key, DELETE))  # its default applies, or it is needed here and named
    assert message is None or (key in message and "\n" not in message), f"{key} missing: {message!r}"
    for what, value in bad_values(kind, checks).items():
        if kind is typing.Any or base_kind(kind) is typing.Any:
            continue
        message = refusal(path_set(data, key, value))
        assert message is not None, f"{key}={value!r} ({what}) was accepted"
        assert key in message and "\n" not in message, f"{key} ({what}): {message!r}"
    if typing.get_origin(base_kind(kind)) is list:
        default = [item for item in (path_get(data, key) or [])]
        for what, value in (("empty", []), ("long", (default or [1]) * 200)):
            message = refusal(path_set(data, key, value))  # may be allowed; a refusal is one line naming the key
            assert message is None or (key in message and "\n" not in message), f"{key} ({what}): {message!r}"


def path_get(data: dict, key: str):
    for part in key.split("."):
        data = data[part]
    return data


def test_the_fuzz_reaches_every_backend_and_section():
    fuzzed = {key.split(".")[0] for _, key, _, _ in CASES}
    assert OWN_SECTIONS <= fuzzed and {"budget", "evaluation", "rules", "ray"} <= fuzzed


# ---------------------------------------------------------------------- resume files
NEURAL = {"name": "fuzz", "seed": 3, "threads": 1, "backend": "neural", "rules": {"num_players": 2},
          "neural": {"hidden": [8, 4], "teacher_games": 4, "games": 3, "window": 2, "list_size": 4,
                     "tables": [["self"]], "generations": 2}}


def synthetic_data(width: int, hands: int) -> dict:
    """A data file's arrays, as a generation of ``hands`` hands writes them (two stop lists, a discard list)."""
    from training.neural.data_files import DTYPES

    inputs = np.arange(5 * width, dtype=np.int64).reshape(5, width) % 7
    arrays = {"stop_inputs": inputs, "stop_values": np.array([3, 1, 5, 2, 0]), "stop_lengths": [2, 3],
              "discard_inputs": inputs[:2], "discard_lengths": [2], "discard_chosen": [1],
              "root_inputs": inputs[:1], "root_results": [0.5], "seat0_results": [1.0] + [0.0] * (hands - 1)}
    return {name: np.asarray(value).astype(DTYPES[name]) for name, value in arrays.items()}


def npz_of(arrays: dict) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


@pytest.fixture(scope="module")
def neural_run(tmp_path_factory):
    """A ``backend: neural`` run folder after generation 1, built as the trainer writes it."""
    import torch

    from agents.batched.neural import input_indices
    from training.neural.data_files import DATA_DIR, data_file_name, npz_bytes
    from training.neural.value_net import ValueNet, quantize

    root = tmp_path_factory.mktemp("neural")
    config = config_from_dict({**NEURAL, "output_dir": str(root)})
    folder = RunFolder.create(root, "fuzz", dump_config(config), {"seed": 3, "command": None})
    torch.manual_seed(0)
    net = ValueNet(2, (8, 4))
    width = len(input_indices(2))
    for generation, hands in ((0, 4), (1, 3)):
        (folder.path / DATA_DIR).mkdir(exist_ok=True)
        (folder.path / DATA_DIR / data_file_name(generation)).write_bytes(npz_bytes(synthetic_data(width, hands)))
    results = {"planner": {"games": 4, "win_rate": 0.5, "ci95": [0.15, 0.85], "wins": 2}}
    state = {"generation": 1, "games": 7, "decisions": 20, "wall_seconds": 3.5,
             "history": [{"timesteps": 4, "generation": 0, "decisions": 10, "wall_seconds": 1.0, "results": results}],
             "log": [{"generation": 0}, {"generation": 1}], "data_files": ["gen-0000.npz", "gen-0001.npz"],
             "archive": [quantize(net).to_dict(), quantize(net).to_dict()], "evaluation": None, "teacher": results,
             "es": {"generation": 0, "sigma": None}, "rng": np.random.default_rng(3).bit_generator.state}
    weights = npz_of({name: tensor.detach().numpy() for name, tensor in net.state_dict().items()})
    folder.save_checkpoint(1, {"weights.npz": weights, "model.json": b"{}"}, state, keep=2)
    return folder.path


def neural_resume(run):
    from training.neural.trainer import NeuralTrainer

    folder = RunFolder.open(run)
    config = config_from_dict({**NEURAL, "output_dir": str(run.parent)})
    return NeuralTrainer(config, folder, progress=False, out=io.StringIO()).load_state()


def copy_run(source, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(source, run)
    return run


def state_path(run):
    return next(run.glob("checkpoints/step_*/state.json"))


def test_the_built_neural_run_resumes(neural_run):
    state, net = neural_resume(neural_run)
    assert state["generation"] == 1 and net is not None


def generic_bad_values(value) -> dict:
    """Values of a state field that are wrong whatever the field: missing, another type, NaN, out of range."""
    bad = {"missing": DELETE, "NaN": math.nan, "text": "x", "negative": -1, "huge": 2**70}
    if isinstance(value, list):
        bad["wrong length"] = value + value[:1] * 40 if value else [{"x": 1}]
        bad["item NaN"] = [math.nan] * max(len(value), 1)
    return bad


NEURAL_FIELD_CASES = {
    "es": [{"generation": 0, "sigma": [0.1]}, {"generation": 0, "sigma": [0.0] * 4},
           {"generation": 0, "sigma": [0.1, 0.1, math.nan, 0.1]}, {"generation": -1, "sigma": None}],
    "data_files": [["gen-0001.npz", "gen-0000.npz"], ["gen-0000.npz", "gen-0005.npz"], ["../x.npz"]],
    "history": [[{"timesteps": 4, "generation": 9, "decisions": 1, "results": {}}],
                [{"timesteps": 4, "generation": 0, "decisions": 1, "results": {"a": {"games": 1, "win_rate": 2,
                                                                                      "ci95": [0, 1]}}}]],
    "teacher": [{"planner": {"games": 4, "win_rate": math.nan, "ci95": [0, 1]}}, {"planner": 1}],
    "generation": [0, 2],
    "rng": [{"bit_generator": "PCG64", "state": {"state": 1}, "has_uint32": 0, "uinteger": 0}],
}


def neural_state_cases():
    from training.neural.state import STATE_FIELDS

    cases = []
    for field in [*STATE_FIELDS, "es"]:
        example = {"history": [1], "log": [1], "archive": [1], "data_files": ["gen-0000.npz"]}.get(field)
        for what, value in generic_bad_values(example).items():
            if (field, what) != ("es", "missing"):  # a run of a release before the evolution: resumed as fresh
                cases.append((field, what, value))
        for index, value in enumerate(NEURAL_FIELD_CASES.get(field, [])):
            cases.append((field, f"case {index}", value))
    return cases


@pytest.mark.parametrize("field, what, value", neural_state_cases(),
                         ids=[f"{c[0]}-{c[1]}" for c in neural_state_cases()])
def test_every_neural_state_field_is_checked_naming_the_file_and_the_field(neural_run, tmp_path, field, what, value):
    run = copy_run(neural_run, tmp_path)
    path = state_path(run)
    state = json.loads(path.read_text())
    if what == "wrong length" and field in ("log", "archive"):
        value = state[field] * 3  # more networks than generations; the log may grow
        if field == "log":
            return
    if value is DELETE:
        del state[field]
    else:
        state[field] = value
    path.write_text(json.dumps(state))
    with pytest.raises(CheckpointError) as error:
        neural_resume(run)
    message = str(error.value)
    assert "\n" not in message and "state.json" in message
    assert repr(field) in message or (field == "generation" and "'generation'" in message), message


def test_an_archive_network_of_other_layers_is_refused(neural_run, tmp_path):
    from training.neural.value_net import ValueNet, quantize

    run = copy_run(neural_run, tmp_path)
    path = state_path(run)
    state = json.loads(path.read_text())
    state["archive"][0] = quantize(ValueNet(2, (8, 8))).to_dict()
    path.write_text(json.dumps(state))
    with pytest.raises(CheckpointError, match="'archive' \\[0\\] is a 2-seat network of layers \\[8, 8\\]"):
        neural_resume(run)


def test_lowering_the_window_on_resume_is_named_as_the_overrides_problem(neural_run):
    from training.neural.trainer import NeuralTrainer

    config = config_from_dict({**NEURAL, "output_dir": str(neural_run.parent),
                               "neural": {**NEURAL["neural"], "window": 1}})
    trainer = NeuralTrainer(config, RunFolder.open(neural_run), progress=False, out=io.StringIO())
    with pytest.raises(ConfigError, match="neural.window=1 is not allowed on --resume .* give neural.window >= 2"):
        trainer.load_state()


def huge_npy_member(name: str, dtype: str, shape: tuple) -> tuple[str, bytes]:
    """A member whose header declares ``shape`` but which holds a few bytes: what must be refused unread."""
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, {"descr": np.dtype(dtype).str, "fortran_order": False,
                                                  "shape": shape})
    return f"{name}.npy", buffer.getvalue() + b"\0" * 64


def rewrite_npz(path, change):
    with np.load(path) as data:
        arrays = {name: data[name] for name in data.files}
    change(arrays)
    path.write_bytes(npz_of(arrays))


def replace_member(path, member: str, data: bytes):
    with zipfile.ZipFile(path) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    members[member] = data
    with zipfile.ZipFile(path, "w") as archive:
        for name, content in members.items():
            archive.writestr(name, content)


WEIGHTS_CASES = {
    "NaN": (lambda p: rewrite_npz(p, lambda a: a["output.weight"].fill(np.nan)), "'output.weight' holds NaN"),
    "float64": (lambda p: rewrite_npz(p, lambda a: a.update({"output.weight": a["output.weight"].astype(float)})),
                "'output.weight' is float64, it must be float32"),
    "wrong shape": (lambda p: rewrite_npz(p, lambda a: a.update({"output.weight": np.zeros((1, 5), np.float32)})),
                    "'output.weight' has shape \\[1, 5\\]"),
    "missing array": (lambda p: rewrite_npz(p, lambda a: a.pop("output.bias")), "'output.bias' is missing"),
    "extra array": (lambda p: rewrite_npz(p, lambda a: a.update(extra=np.zeros(1, np.float32))), "'extra.npy'"),
    "object array": (lambda p: replace_member(p, *huge_npy_member("output.bias", "O", (1,))),
                     "'output.bias' is object"),
    "huge declared": (lambda p: replace_member(p, *huge_npy_member("first.weight", "float32", (2**14, 2**14))),
                      "declare .* more than"),
    "truncated": (lambda p: p.write_bytes(p.read_bytes()[:100]), "not a readable .npz file"),
    "oversize": (lambda p: p.write_bytes(p.read_bytes() + b"\0" * 2**17), "more than the"),
    "FIFO": (lambda p: (p.unlink(), os.mkfifo(p)), "not a regular file"),
    "directory": (lambda p: (p.unlink(), p.mkdir()), "is a directory"),
    "missing": (lambda p: p.unlink(), "cannot be read"),
}


@pytest.mark.parametrize("case", list(WEIGHTS_CASES))
def test_damaged_weights_are_refused_naming_the_file_and_the_array(neural_run, tmp_path, case):
    damage, message = WEIGHTS_CASES[case]
    run = copy_run(neural_run, tmp_path)
    path = next(run.glob("checkpoints/step_*/weights.npz"))
    damage(path)
    with pytest.raises(CheckpointError, match=message) as error:
        neural_resume(run)
    assert "weights.npz" in str(error.value) and "\n" not in str(error.value)


DATA_CASES = {
    "inputs of 2**62": (lambda a: a.update(stop_inputs=a["stop_inputs"].astype(np.int64) + 2**62),
                        "'stop_inputs' is int64, it must be int16"),
    "negative input": (lambda a: a["discard_inputs"].__setitem__((0, 0), -3), "'discard_inputs' holds a negative"),
    "result 2": (lambda a: a.update(root_results=np.array([2.0], np.float32)), "'root_results' holds a result"),
    "NaN value": (lambda a: a["stop_values"].__setitem__(0, np.nan), "'stop_values' holds NaN"),
    "empty list": (lambda a: a.update(stop_lengths=np.array([0, 5], np.int16)), "'stop_lengths' holds a list length"),
    "long list": (lambda a: a.update(stop_lengths=np.array([5], np.int16), stop_values=a["stop_values"]),
                  "'stop_lengths' holds a list length outside 1 to 4"),
    "lengths not adding up": (lambda a: a.update(stop_lengths=np.array([1, 3], np.int16)), "do not add up"),
    "bad choice": (lambda a: a.update(discard_chosen=np.array([2], np.int16)), "'discard_chosen' holds a choice"),
    "one value short": (lambda a: a.update(stop_values=a["stop_values"][:4]), "'stop_values' has 4 entries"),
    "narrow rows": (lambda a: a.update(root_inputs=a["root_inputs"][:, :5]), "'root_inputs' has shape \\[1, 5\\]"),
    "2-D results": (lambda a: a.update(seat0_results=a["seat0_results"][:, None]), "'seat0_results' has shape"),
    "missing array": (lambda a: a.pop("stop_values"), "'stop_values' is missing"),
}


@pytest.mark.parametrize("case", list(DATA_CASES))
def test_damaged_data_files_are_refused_naming_the_file_and_the_array(neural_run, tmp_path, case):
    change, message = DATA_CASES[case]
    run = copy_run(neural_run, tmp_path)
    path = run / "data" / "gen-0001.npz"
    rewrite_npz(path, change)
    with pytest.raises(CheckpointError, match=message) as error:
        neural_resume(run)
    assert "gen-0001.npz" in str(error.value) and "\n" not in str(error.value)


def test_a_data_file_declaring_more_than_the_config_allows_is_refused_before_it_is_read(neural_run, tmp_path):
    """The issue's case: a small file whose header declares 2**28 inputs is refused from its header alone."""
    run = copy_run(neural_run, tmp_path)
    path = run / "data" / "gen-0001.npz"
    replace_member(path, *huge_npy_member("stop_inputs", "int16", (2**28 // 330, 330)))
    with pytest.raises(CheckpointError, match="declare .* more than the .* the run's config allows"):
        neural_resume(run)


# ---------------------------------------------------------------------- through the command line
def snapshot(run) -> dict:
    return {str(path.relative_to(run)): (path.stat().st_size, path.stat().st_mtime_ns)
            for path in sorted(run.rglob("*")) if not path.is_fifo()}


CLI_CASES = {
    "state truncated": lambda run: state_path(run).write_bytes(state_path(run).read_bytes()[:50]),
    "state FIFO": lambda run: (lambda p: (p.unlink(), os.mkfifo(p)))(state_path(run)),
    "state oversize": lambda run: state_path(run).write_bytes(b" " * (64 * 2**20 + 1)),
    "state wrong type": lambda run: state_path(run).write_text(
        json.dumps({**json.loads(state_path(run).read_text()), "games": "many"})),
    "sigma broadcast": lambda run: state_path(run).write_text(
        json.dumps({**json.loads(state_path(run).read_text()), "es": {"generation": 0, "sigma": [0.5]}})),
    "weights FIFO": lambda run: (lambda p: (p.unlink(), os.mkfifo(p)))(next(run.glob("checkpoints/*/weights.npz"))),
    "data FIFO": lambda run: ((run / "data/gen-0000.npz").unlink(), os.mkfifo(run / "data/gen-0000.npz")),
}


@pytest.mark.parametrize("case", list(CLI_CASES))
def test_skipbo_train_resume_refuses_in_one_line_with_exit_2_and_changes_nothing(neural_run, tmp_path, capsys, case):
    from skipbo_cli.main import main

    run = copy_run(neural_run, tmp_path)
    CLI_CASES[case](run)
    before = snapshot(run)
    assert main(["train", "--resume", str(run), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert snapshot(run) == before


# ---------------------------------------------------------------------- snes
SNES = {"name": "fuzz", "seed": 3, "backend": "snes", "rules": {"num_players": 2}, **NEEDS["snes"]}


@pytest.fixture(scope="module")
def snes_run(tmp_path_factory):
    from training.snes.trainer import SNESTrainer

    root = tmp_path_factory.mktemp("snes")
    config = config_from_dict({**SNES, "output_dir": str(root)})
    folder = RunFolder.create(root, "fuzz", dump_config(config), {"seed": 3})
    state = SNESTrainer(config, folder, progress=False, out=io.StringIO()).fresh_state()
    folder.save_checkpoint(0, {}, state, keep=2)
    return folder.path


def snes_resume(run):
    from training.snes.trainer import SNESTrainer

    config = config_from_dict({**SNES, "output_dir": str(run.parent)})
    return SNESTrainer(config, RunFolder.open(run), progress=False, out=io.StringIO()).load_state()


def snes_cases():
    from training.snes.trainer import STATE_FIELDS

    return [(field, what, value) for field in STATE_FIELDS
            for what, value in generic_bad_values([0.0] if field in ("mu", "sigma", "archive") else None).items()]


@pytest.mark.parametrize("field, what, value", snes_cases(), ids=[f"{c[0]}-{c[1]}" for c in snes_cases()])
def test_every_snes_state_field_is_checked_naming_the_file_and_the_field(snes_run, tmp_path, field, what, value):
    assert snes_resume(snes_run)["generation"] == 0
    run = copy_run(snes_run, tmp_path)
    path = state_path(run)
    state = json.loads(path.read_text())
    if what == "wrong length":
        value = state[field] + state[field][:1] * 40
    if value is DELETE:
        del state[field]
    else:
        state[field] = value
    path.write_text(json.dumps(state))
    with pytest.raises(CheckpointError) as error:
        snes_resume(run)
    message = str(error.value)
    assert "\n" not in message and "state.json" in message and repr(field) in message, message


def test_an_array_declared_larger_than_its_fellows_is_refused_from_the_headers_alone(neural_run, tmp_path,
                                                                                   monkeypatch):
    """Under a cap of a generous config, a member declaring 2**28 inputs is refused by its shape against the other
    arrays' before any array is read."""
    from training.neural.data_files import read_data_file

    run = copy_run(neural_run, tmp_path)
    path = run / "data" / "gen-0001.npz"
    replace_member(path, *huge_npy_member("stop_inputs", "int16", (2**28 // 330, 330)))

    def no_read(*args, **kwargs):
        raise AssertionError("an array was read before the headers were checked")

    monkeypatch.setattr(np.lib.format, "read_array", no_read)
    with pytest.raises(CheckpointError, match="'stop_values' has 5 entries, 'stop_inputs' 813440: one each"):
        read_data_file(path, 330, hands=1000, list_size=16)
