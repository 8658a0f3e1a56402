"""The table of training backends: each backend is one package that declares its section, checks and trainer,
and the shared modules read the table instead of naming backends."""

from __future__ import annotations

import ast
import dataclasses
import importlib.util
import typing
from pathlib import Path

import pytest

from training.backends import BACKEND_PACKAGES, BACKENDS
from training.config import TrainConfig, describe_schema

ROOT = Path(__file__).resolve().parents[2]
SHARED_MODULES = ("training/run.py", "training/config.py", "training/checkpoint.py", "training/common.py",
                  "training/sections.py", "training/schema.py", "training/backends.py", "training/leaderboard.py")


def test_every_backend_is_a_package_whose_config_declares_it():
    assert list(BACKENDS) == [package.rsplit(".", 1)[1] for package in BACKEND_PACKAGES]
    for name, backend in BACKENDS.items():
        assert (ROOT / "training" / name / "config.py").is_file()
        module, _, cls = backend.trainer.partition(":")
        assert module.startswith(f"training.{name}.") and importlib.util.find_spec(module) is not None and cls


def test_the_config_has_one_section_per_backend_and_backend_chooses_among_them():
    hints = typing.get_type_hints(TrainConfig)
    assert typing.get_args(hints["backend"]) == tuple(BACKENDS)
    for backend in BACKENDS.values():
        assert hints[backend.section] is backend.settings and dataclasses.is_dataclass(backend.settings)
        assert isinstance(getattr(TrainConfig(), backend.section), backend.settings)
        first = dataclasses.fields(backend.settings)[0].name
        assert f"\n{backend.section}.{first} " in "\n" + describe_schema()


def test_no_shared_module_names_a_backend():
    names = set(BACKENDS)
    for relative in SHARED_MODULES:
        tree = ast.parse((ROOT / relative).read_text())
        docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                      if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef)) and node.body
                      and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
        named = {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant)
                 and id(node) not in docstrings and node.value in names}
        assert not named, f"{relative} names the backends {sorted(named)}: read training/backends.py instead"


def numeric_settings(cls: type, prefix: str = ""):
    """``(dotted key, metadata)`` of every int or float setting of ``cls`` (nested sections walked; a list of
    numbers and an optional number count: their bounds hold for each value)."""
    hints = typing.get_type_hints(cls)
    for field in dataclasses.fields(cls):
        kind = hints[field.name]
        if dataclasses.is_dataclass(kind):
            yield from numeric_settings(kind, prefix + field.name + ".")
            continue
        while typing.get_origin(kind) in (typing.Union, list):
            kind = next(arg for arg in typing.get_args(kind) if arg is not type(None))
        if kind in (int, float):
            yield prefix + field.name, field.metadata


def test_every_numeric_key_of_every_backend_has_a_maximum():
    """Issue 39: a value past what memory and time allow is refused up front, so every number has a cap (a new
    backend's section is walked through the table of backends)."""
    from training.sections import SharedSettings

    sections = [(SharedSettings, "")] + [(backend.settings, backend.section + ".") for backend in BACKENDS.values()]
    sections += [(cls, key + ".") for backend in BACKENDS.values() for key, cls in backend.sections]
    keys = [(key, checks) for cls, prefix in sections for key, checks in numeric_settings(cls, prefix)]
    assert {"seed", "budget.total_timesteps", "snes.population", "neural.hidden"} <= {key for key, _ in keys}
    assert [key for key, checks in keys if "max" not in checks] == []
    for key, checks in keys:
        assert "min" in checks or "min_exclusive" in checks, key


def test_a_value_past_a_keys_maximum_is_refused_naming_the_key_and_why():
    from training.config import config_from_dict
    from training.schema import ConfigError

    cases = {("neural", "epochs"): 10**9, ("snes", "population"): 10**6, ("budget", "total_timesteps"): 10**12,
             ("opponents", "max_snapshots"): 10**5, ("checkpoint", "keep"): 10**5, ("neural", "es_population"): 4096}
    for (section, key), value in cases.items():
        backend = section if section in BACKENDS else "sb3"
        with pytest.raises(ConfigError, match=rf"^{section}\.{key}={value!r} is not allowed: use a number <= "
                                              r"[0-9.e+]+ \(.+\)$"):
            config_from_dict({"backend": backend, section: {key: value}})
    with pytest.raises(ConfigError, match=r"^network\.hidden\[1\]=100000 is not allowed: use a number <= 65536"):
        config_from_dict({"network": {"hidden": [64, 100_000]}})
